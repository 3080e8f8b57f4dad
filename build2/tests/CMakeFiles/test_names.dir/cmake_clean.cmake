file(REMOVE_RECURSE
  "CMakeFiles/test_names.dir/test_names.c.o"
  "CMakeFiles/test_names.dir/test_names.c.o.d"
  "test_names"
  "test_names.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_names.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
