# Empty dependencies file for fuzz_loader_replay.
# This may be replaced when dependencies are built.
