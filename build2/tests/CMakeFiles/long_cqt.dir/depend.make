# Empty dependencies file for long_cqt.
# This may be replaced when dependencies are built.
