# Empty dependencies file for test_mpi.
# This may be replaced when dependencies are built.
