# Empty dependencies file for bench_estep_paths.
# This may be replaced when dependencies are built.
