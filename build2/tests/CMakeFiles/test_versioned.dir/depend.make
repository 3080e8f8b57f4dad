# Empty dependencies file for test_versioned.
# This may be replaced when dependencies are built.
