# Empty dependencies file for cqt_magnitudes.
# This may be replaced when dependencies are built.
