# Empty dependencies file for bench_ot.
# This may be replaced when dependencies are built.
