# Empty dependencies file for test_poisson.
# This may be replaced when dependencies are built.
