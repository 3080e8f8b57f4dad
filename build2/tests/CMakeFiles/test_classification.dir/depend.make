# Empty dependencies file for test_classification.
# This may be replaced when dependencies are built.
