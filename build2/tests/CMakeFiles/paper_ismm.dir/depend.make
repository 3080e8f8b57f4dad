# Empty dependencies file for paper_ismm.
# This may be replaced when dependencies are built.
