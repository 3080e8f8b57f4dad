# Empty dependencies file for test_extremes.
# This may be replaced when dependencies are built.
