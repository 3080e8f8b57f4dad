# Empty dependencies file for test_softmax_stacked.
# This may be replaced when dependencies are built.
