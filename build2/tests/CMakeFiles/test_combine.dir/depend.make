# Empty dependencies file for test_combine.
# This may be replaced when dependencies are built.
