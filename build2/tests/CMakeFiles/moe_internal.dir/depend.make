# Empty dependencies file for moe_internal.
# This may be replaced when dependencies are built.
