CMakeFiles/moe_objects.dir/lib/common/blas_kernels.c.o: \
 /work/wt-t/lib/common/blas_kernels.c /usr/include/stdc-predef.h \
 /work/wt-t/lib/common/blas_kernels.h /usr/include/ctype.h \
 /usr/include/features.h /usr/include/features-time64.h \
 /usr/include/x86_64-linux-gnu/bits/wordsize.h \
 /usr/include/x86_64-linux-gnu/bits/timesize.h \
 /usr/include/x86_64-linux-gnu/sys/cdefs.h \
 /usr/include/x86_64-linux-gnu/bits/long-double.h \
 /usr/include/x86_64-linux-gnu/gnu/stubs.h \
 /usr/include/x86_64-linux-gnu/gnu/stubs-64.h \
 /usr/include/x86_64-linux-gnu/bits/types.h \
 /usr/include/x86_64-linux-gnu/bits/typesizes.h \
 /usr/include/x86_64-linux-gnu/bits/time64.h \
 /usr/include/x86_64-linux-gnu/bits/endian.h \
 /usr/include/x86_64-linux-gnu/bits/endianness.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stdatomic.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h
