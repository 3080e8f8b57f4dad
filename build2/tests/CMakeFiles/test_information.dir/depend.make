# Empty dependencies file for test_information.
# This may be replaced when dependencies are built.
