CMakeFiles/moe_objects.dir/lib/fitter/fitter_state.c.o: \
 /work/wt-t/lib/fitter/fitter_state.c /usr/include/stdc-predef.h \
 /work/wt-t/lib/fitter/fitter_impl.h /work/wt-t/include/moe/kernels.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h \
 /work/wt-t/include/moe/estimator.h /work/wt-t/include/moe/common.h \
 /work/wt-t/include/moe/model.h /work/wt-t/include/moe/fitter.h \
 /work/wt-t/include/moe/rng.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stdint.h /usr/include/stdint.h \
 /usr/include/x86_64-linux-gnu/bits/libc-header-start.h \
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
 /usr/include/x86_64-linux-gnu/bits/wchar.h \
 /usr/include/x86_64-linux-gnu/bits/stdint-intn.h \
 /usr/include/x86_64-linux-gnu/bits/stdint-uintn.h \
 /work/wt-t/lib/common/data.h /work/wt-t/lib/common/error.h \
 /work/wt-t/include/moe/common.h /work/wt-t/lib/kernels/context.h \
 /work/wt-t/include/moe/estimator.h /work/wt-t/lib/kernels/options.h \
 /work/wt-t/include/moe/fitter.h /work/wt-t/lib/model/model_impl.h \
 /work/wt-t/include/moe/model.h /work/wt-t/lib/common/inputs.h \
 /work/wt-t/lib/common/bytes.h /usr/include/string.h \
 /work/wt-t/lib/common/checksum.h /work/wt-t/lib/common/read_file.h \
 /work/wt-t/lib/common/save_file.h /usr/include/math.h \
 /usr/include/x86_64-linux-gnu/bits/math-vector.h \
 /usr/include/x86_64-linux-gnu/bits/libm-simd-decl-stubs.h \
 /usr/include/x86_64-linux-gnu/bits/floatn.h \
 /usr/include/x86_64-linux-gnu/bits/floatn-common.h \
 /usr/include/x86_64-linux-gnu/bits/flt-eval-method.h \
 /usr/include/x86_64-linux-gnu/bits/fp-logb.h \
 /usr/include/x86_64-linux-gnu/bits/fp-fast.h \
 /usr/include/x86_64-linux-gnu/bits/mathcalls-helper-functions.h \
 /usr/include/x86_64-linux-gnu/bits/mathcalls.h /usr/include/stdlib.h \
 /usr/include/x86_64-linux-gnu/bits/stdlib-bsearch.h \
 /usr/include/x86_64-linux-gnu/bits/stdlib-float.h
