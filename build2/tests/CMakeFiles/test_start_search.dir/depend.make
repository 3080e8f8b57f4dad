# Empty dependencies file for test_start_search.
# This may be replaced when dependencies are built.
