file(REMOVE_RECURSE
  "CMakeFiles/test_estep_pass.dir/test_estep_pass.c.o"
  "CMakeFiles/test_estep_pass.dir/test_estep_pass.c.o.d"
  "test_estep_pass"
  "test_estep_pass.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_estep_pass.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
