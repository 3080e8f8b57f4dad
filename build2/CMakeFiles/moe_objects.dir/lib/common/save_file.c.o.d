CMakeFiles/moe_objects.dir/lib/common/save_file.c.o: \
 /work/wt-t/lib/common/save_file.c /usr/include/stdc-predef.h \
 /work/wt-t/lib/common/save_file.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h \
 /work/wt-t/include/moe/common.h /work/wt-t/lib/common/error.h \
 /work/wt-t/lib/common/replace_file.h
