# Empty dependencies file for bench_csv.
# This may be replaced when dependencies are built.
