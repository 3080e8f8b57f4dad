# Empty dependencies file for bench_cqt.
# This may be replaced when dependencies are built.
