# Empty dependencies file for bench_fit_time.
# This may be replaced when dependencies are built.
