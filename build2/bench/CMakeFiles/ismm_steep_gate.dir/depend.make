# Empty dependencies file for ismm_steep_gate.
# This may be replaced when dependencies are built.
