# Empty dependencies file for test_custom_estimator.
# This may be replaced when dependencies are built.
