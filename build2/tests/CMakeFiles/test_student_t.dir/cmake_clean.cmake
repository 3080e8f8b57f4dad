file(REMOVE_RECURSE
  "CMakeFiles/test_student_t.dir/test_student_t.c.o"
  "CMakeFiles/test_student_t.dir/test_student_t.c.o.d"
  "test_student_t"
  "test_student_t.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_student_t.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
