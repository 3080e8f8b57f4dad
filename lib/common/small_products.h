/*
 * Register-blocked products for the E-step's small shapes (p = d + 1 inputs up to
 * MOE_SMALL_PRODUCT_INPUTS): the gate's logits and the experts' predictors, the gate
 * gradients and the experts' right-hand sides, and the weighted Gram matrices. There
 * OpenBLAS's cost per call (packing, and under its Haswell kernels no small-matrix path)
 * was about half of an EM iteration at d = 5 (bench/RESULTS.md); these kernels keep a
 * tile of sums in registers over a block's rows, the way BLIS and libxsmm micro-kernels
 * do. common/linalg.c chooses them by shape and sends every larger product to BLAS, which
 * also stays the oracle of their test (tests/test_small_products.c).
 *
 * Each kernel has a generic copy (the baseline x86-64's two lanes, or any other CPU) and,
 * where simd.h compiles them, AVX2 and AVX-512 copies. The copies differ at rounding level
 * (fused multiply-adds, the number of lanes a row is summed in), never with the thread
 * count: the order of every sum depends on the shapes and the copy alone.
 */
#ifndef MOE_LIB_SMALL_PRODUCTS_H
#define MOE_LIB_SMALL_PRODUCTS_H

#include <stddef.h>

/* The largest p whose logits, gradients and right-hand sides go through these kernels
   (linalg.c), chosen by the BLAS underneath (moe_small_product_inputs). Measured
   (bench/RESULTS.md, "Small products by hand" and "The small products' threshold by the
   BLAS's kernels"): up to p = 16 they are 3 to 10 times faster than OpenBLAS's Haswell
   kernels and within 20% of its SkylakeX and Cooperlake small-matrix kernels; above it
   those are up to 1.7 times faster, while the Haswell kernels stay 3 to 8 times slower up
   to p = 64. */
#define MOE_SMALL_PRODUCT_INPUTS 16
#define MOE_SMALL_PRODUCT_INPUTS_MOST 64
/* The largest p whose weighted Gram matrices go through these kernels: from p = 6 to 64
   they were 1.5 to 5 times faster than the BLAS path under either kernel choice (the
   rank-k updates of blocks of a few hundred rows run far from OpenBLAS's peak). */
#define MOE_SMALL_GRAM_INPUTS 64
/* The most output rows (the stacked gate and expert rows, the gradients' rows) of a product
   sent here: beyond them BLAS's blocking pays. */
#define MOE_SMALL_PRODUCT_ROWS 64

typedef enum moe_small_copy {
    MOE_SMALL_GENERIC,
    MOE_SMALL_AVX2,
    MOE_SMALL_AVX512
} moe_small_copy;

/* Whether this build and CPU have the copy. */
int moe_small_copy_available(moe_small_copy copy);

/* The widest copy available: what the library runs. */
moe_small_copy moe_small_copy_best(void);

/* The largest p the products go through these kernels at: MOE_SMALL_PRODUCT_INPUTS_MOST
   when the BLAS lacks small-matrix kernels (common/blas_kernels.h) and the CPU runs the
   AVX2 or AVX-512 copy, else MOE_SMALL_PRODUCT_INPUTS. Fixed for the process. */
size_t moe_small_product_inputs(void);

/* c (rows x columns) = a (rows x inner) b (inner x columns), all row-major. */
void moe_small_product_ab(moe_small_copy copy, size_t rows, size_t columns, size_t inner,
                          const double *a, const double *b, double *c);

/* c (rows x columns) += a (rows x inner) b' (b: columns x inner), all row-major. */
void moe_small_product_abt_add(moe_small_copy copy, size_t rows, size_t columns, size_t inner,
                               const double *a, const double *b, double *c);

/* grams[c] (p x p, upper triangle) += columns' diag(weights[c]) columns for the block's
   columns (p x rows) and weights (count x rows), p <= MOE_SMALL_GRAM_INPUTS. */
void moe_small_grams_add(moe_small_copy copy, size_t rows, size_t p, size_t count,
                         const double *columns, const double *weights, double *grams);

#endif
