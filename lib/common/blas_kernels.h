/* What the BLAS the library runs on does well, where the library's choices depend on it. */
#ifndef MOE_LIB_BLAS_KERNELS_H
#define MOE_LIB_BLAS_KERNELS_H

/* 1 when the linked BLAS is known to have no path of its own for small matrix products:
   OpenBLAS running x86-64 kernels older than its AVX-512 ones (Haswell, Zen, Sandybridge,
   ..., whether chosen for the CPU or forced by OPENBLAS_CORETYPE). 0 when it has one
   (OpenBLAS's SkylakeX, Cooperlake and SapphireRapids kernels) and when it cannot be
   told: another BLAS, another CPU family, or a link without openblas_get_corename. The
   answer is fixed for the process, so it never makes two fits in it differ. */
int moe_blas_lacks_small_kernels(void);

#endif
