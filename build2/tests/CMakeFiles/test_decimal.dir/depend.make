# Empty dependencies file for test_decimal.
# This may be replaced when dependencies are built.
