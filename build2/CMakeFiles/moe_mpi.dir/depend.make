# Empty dependencies file for moe_mpi.
# This may be replaced when dependencies are built.
