CMakeFiles/moe_objects.dir/lib/estimators/ismm/ismm_session.c.o: \
 /work/wt-t/lib/estimators/ismm/ismm_session.c /usr/include/stdc-predef.h \
 /work/wt-t/lib/estimators/ismm/ismm_session.h \
 /work/wt-t/lib/estimators/ismm/ismm.h /work/wt-t/include/moe/kernels.h \
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
 /work/wt-t/lib/common/option_fields.h /work/wt-t/include/moe/fitter.h \
 /work/wt-t/lib/common/alloc.h /usr/include/stdlib.h \
 /usr/include/x86_64-linux-gnu/bits/floatn.h \
 /usr/include/x86_64-linux-gnu/bits/floatn-common.h \
 /usr/include/x86_64-linux-gnu/bits/stdlib-bsearch.h \
 /usr/include/x86_64-linux-gnu/bits/stdlib-float.h /usr/include/string.h
