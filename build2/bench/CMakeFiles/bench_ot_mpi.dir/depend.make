# Empty dependencies file for bench_ot_mpi.
# This may be replaced when dependencies are built.
