# Empty dependencies file for test_restarts.
# This may be replaced when dependencies are built.
