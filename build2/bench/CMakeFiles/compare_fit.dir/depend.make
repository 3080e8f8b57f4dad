# Empty dependencies file for compare_fit.
# This may be replaced when dependencies are built.
