# Empty dependencies file for test_student_t.
# This may be replaced when dependencies are built.
