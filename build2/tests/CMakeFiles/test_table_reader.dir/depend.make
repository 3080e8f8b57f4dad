# Empty dependencies file for test_table_reader.
# This may be replaced when dependencies are built.
