# Empty dependencies file for long_coverage.
# This may be replaced when dependencies are built.
