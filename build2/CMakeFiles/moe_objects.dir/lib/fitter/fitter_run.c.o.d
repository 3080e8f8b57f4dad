CMakeFiles/moe_objects.dir/lib/fitter/fitter_run.c.o: \
 /work/wt-t/lib/fitter/fitter_run.c /usr/include/stdc-predef.h \
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
 /work/wt-t/lib/common/alloc.h /work/wt-t/lib/common/check.h \
 /work/wt-t/lib/common/clock.h /work/wt-t/lib/common/combine.h \
 /work/wt-t/lib/common/linalg.h /usr/include/math.h \
 /usr/include/x86_64-linux-gnu/bits/math-vector.h \
 /usr/include/x86_64-linux-gnu/bits/libm-simd-decl-stubs.h \
 /usr/include/x86_64-linux-gnu/bits/floatn.h \
 /usr/include/x86_64-linux-gnu/bits/floatn-common.h \
 /usr/include/x86_64-linux-gnu/bits/flt-eval-method.h \
 /usr/include/x86_64-linux-gnu/bits/fp-logb.h \
 /usr/include/x86_64-linux-gnu/bits/fp-fast.h \
 /usr/include/x86_64-linux-gnu/bits/mathcalls-helper-functions.h \
 /usr/include/x86_64-linux-gnu/bits/mathcalls.h \
 /work/wt-t/lib/common/parallel.h /work/wt-t/lib/common/versioned.h \
 /work/wt-t/lib/model/family.h /work/wt-t/lib/pass/gate.h \
 /work/wt-t/lib/pass/softmax.h /work/wt-t/lib/pass/newton.h \
 /work/wt-t/lib/pass/posterior.h /usr/include/stdlib.h \
 /usr/include/x86_64-linux-gnu/bits/waitflags.h \
 /usr/include/x86_64-linux-gnu/bits/waitstatus.h \
 /usr/include/x86_64-linux-gnu/bits/stdlib-bsearch.h \
 /usr/include/x86_64-linux-gnu/bits/stdlib-float.h /usr/include/string.h \
 /usr/include/x86_64-linux-gnu/bits/types/locale_t.h \
 /usr/include/x86_64-linux-gnu/bits/types/__locale_t.h \
 /usr/include/time.h /usr/include/x86_64-linux-gnu/bits/time.h \
 /usr/include/x86_64-linux-gnu/bits/types/clock_t.h \
 /usr/include/x86_64-linux-gnu/bits/types/time_t.h \
 /usr/include/x86_64-linux-gnu/bits/types/struct_tm.h \
 /usr/include/x86_64-linux-gnu/bits/types/struct_timespec.h \
 /usr/include/x86_64-linux-gnu/bits/endian.h \
 /usr/include/x86_64-linux-gnu/bits/endianness.h \
 /usr/include/x86_64-linux-gnu/bits/types/clockid_t.h \
 /usr/include/x86_64-linux-gnu/bits/types/timer_t.h \
 /usr/include/x86_64-linux-gnu/bits/types/struct_itimerspec.h
