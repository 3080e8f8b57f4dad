# Empty dependencies file for paper_cqt_uci.
# This may be replaced when dependencies are built.
