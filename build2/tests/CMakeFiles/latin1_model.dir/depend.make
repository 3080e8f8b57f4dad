# Empty dependencies file for latin1_model.
# This may be replaced when dependencies are built.
