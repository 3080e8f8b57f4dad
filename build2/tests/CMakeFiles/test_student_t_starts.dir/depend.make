# Empty dependencies file for test_student_t_starts.
# This may be replaced when dependencies are built.
