# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for ismm_steep_gate.
