# Empty dependencies file for fuzz_csv_replay.
# This may be replaced when dependencies are built.
