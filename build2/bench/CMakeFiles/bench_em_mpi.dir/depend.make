# Empty dependencies file for bench_em_mpi.
# This may be replaced when dependencies are built.
