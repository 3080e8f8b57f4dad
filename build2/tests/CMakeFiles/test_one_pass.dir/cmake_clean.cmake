file(REMOVE_RECURSE
  "CMakeFiles/test_one_pass.dir/test_one_pass.c.o"
  "CMakeFiles/test_one_pass.dir/test_one_pass.c.o.d"
  "test_one_pass"
  "test_one_pass.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_one_pass.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
