# Empty dependencies file for test_binomial.
# This may be replaced when dependencies are built.
