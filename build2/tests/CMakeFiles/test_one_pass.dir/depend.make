# Empty dependencies file for test_one_pass.
# This may be replaced when dependencies are built.
