# Empty dependencies file for make_loader_corpus.
# This may be replaced when dependencies are built.
