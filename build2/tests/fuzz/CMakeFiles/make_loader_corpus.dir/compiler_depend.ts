# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for make_loader_corpus.
