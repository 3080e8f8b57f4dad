file(REMOVE_RECURSE
  "CMakeFiles/test_gamma.dir/test_gamma.c.o"
  "CMakeFiles/test_gamma.dir/test_gamma.c.o.d"
  "test_gamma"
  "test_gamma.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_gamma.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
