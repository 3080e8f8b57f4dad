# Empty dependencies file for paper_ot.
# This may be replaced when dependencies are built.
