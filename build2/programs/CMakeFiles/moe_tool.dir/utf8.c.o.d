programs/CMakeFiles/moe_tool.dir/utf8.c.o: /work/wt-t/programs/utf8.c \
 /usr/include/stdc-predef.h /work/wt-t/programs/utf8.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h
