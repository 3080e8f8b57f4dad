# Empty dependencies file for moe_objects.
# This may be replaced when dependencies are built.
