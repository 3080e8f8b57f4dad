# Empty dependencies file for test_estimator_abi.
# This may be replaced when dependencies are built.
