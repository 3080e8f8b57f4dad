# Empty dependencies file for test_gradient_estimators.
# This may be replaced when dependencies are built.
