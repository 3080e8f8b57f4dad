# Empty dependencies file for test_gamma.
# This may be replaced when dependencies are built.
