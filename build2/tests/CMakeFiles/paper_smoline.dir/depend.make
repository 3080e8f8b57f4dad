# Empty dependencies file for paper_smoline.
# This may be replaced when dependencies are built.
