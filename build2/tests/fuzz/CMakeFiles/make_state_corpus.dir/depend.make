# Empty dependencies file for make_state_corpus.
# This may be replaced when dependencies are built.
