# Empty dependencies file for test_optimizers.
# This may be replaced when dependencies are built.
