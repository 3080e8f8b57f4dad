# Empty dependencies file for moe.
# This may be replaced when dependencies are built.
