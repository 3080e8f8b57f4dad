# Empty dependencies file for test_estep_pass.
# This may be replaced when dependencies are built.
