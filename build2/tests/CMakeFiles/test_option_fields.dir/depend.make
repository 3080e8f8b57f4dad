# Empty dependencies file for test_option_fields.
# This may be replaced when dependencies are built.
