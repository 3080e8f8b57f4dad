# Empty dependencies file for test_gate_inputs.
# This may be replaced when dependencies are built.
