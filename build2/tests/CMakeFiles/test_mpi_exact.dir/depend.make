# Empty dependencies file for test_mpi_exact.
# This may be replaced when dependencies are built.
