# Empty dependencies file for test_gradients.
# This may be replaced when dependencies are built.
