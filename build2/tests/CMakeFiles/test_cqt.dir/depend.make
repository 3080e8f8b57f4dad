# Empty dependencies file for test_cqt.
# This may be replaced when dependencies are built.
