# Empty dependencies file for moe_test_support.
# This may be replaced when dependencies are built.
