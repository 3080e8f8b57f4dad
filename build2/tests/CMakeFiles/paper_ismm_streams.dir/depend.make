# Empty dependencies file for paper_ismm_streams.
# This may be replaced when dependencies are built.
