# Empty dependencies file for moe_mpi_tool.
# This may be replaced when dependencies are built.
