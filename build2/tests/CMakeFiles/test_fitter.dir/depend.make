# Empty dependencies file for test_fitter.
# This may be replaced when dependencies are built.
