# Empty dependencies file for test_estimator_interface.
# This may be replaced when dependencies are built.
