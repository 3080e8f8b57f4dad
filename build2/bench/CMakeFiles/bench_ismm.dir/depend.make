# Empty dependencies file for bench_ismm.
# This may be replaced when dependencies are built.
