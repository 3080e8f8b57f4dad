CMakeFiles/moe_objects.dir/lib/common/version.c.o: \
 /work/wt-t/lib/common/version.c /usr/include/stdc-predef.h \
 /work/wt-t/include/moe/common.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h
