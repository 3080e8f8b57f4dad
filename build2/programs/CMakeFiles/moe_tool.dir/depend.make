# Empty dependencies file for moe_tool.
# This may be replaced when dependencies are built.
