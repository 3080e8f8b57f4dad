file(REMOVE_RECURSE
  "CMakeFiles/test_information.dir/test_information.c.o"
  "CMakeFiles/test_information.dir/test_information.c.o.d"
  "test_information"
  "test_information.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_information.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
