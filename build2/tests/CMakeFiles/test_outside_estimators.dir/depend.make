# Empty dependencies file for test_outside_estimators.
# This may be replaced when dependencies are built.
