# Empty dependencies file for test_ot.
# This may be replaced when dependencies are built.
