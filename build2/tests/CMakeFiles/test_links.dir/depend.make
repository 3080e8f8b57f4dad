# Empty dependencies file for test_links.
# This may be replaced when dependencies are built.
