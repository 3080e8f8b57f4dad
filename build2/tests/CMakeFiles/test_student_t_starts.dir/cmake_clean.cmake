file(REMOVE_RECURSE
  "CMakeFiles/test_student_t_starts.dir/test_student_t_starts.c.o"
  "CMakeFiles/test_student_t_starts.dir/test_student_t_starts.c.o.d"
  "test_student_t_starts"
  "test_student_t_starts.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_student_t_starts.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
