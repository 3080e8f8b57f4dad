# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for latin1_model.
