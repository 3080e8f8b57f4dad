# Empty dependencies file for bench_classification.
# This may be replaced when dependencies are built.
