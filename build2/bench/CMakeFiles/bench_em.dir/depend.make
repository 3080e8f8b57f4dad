# Empty dependencies file for bench_em.
# This may be replaced when dependencies are built.
