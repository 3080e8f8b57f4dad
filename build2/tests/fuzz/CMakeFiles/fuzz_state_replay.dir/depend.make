# Empty dependencies file for fuzz_state_replay.
# This may be replaced when dependencies are built.
