# Empty dependencies file for test_ismm.
# This may be replaced when dependencies are built.
