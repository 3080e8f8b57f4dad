# Empty dependencies file for paper_cqt.
# This may be replaced when dependencies are built.
