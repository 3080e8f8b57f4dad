# Empty dependencies file for test_discovery.
# This may be replaced when dependencies are built.
