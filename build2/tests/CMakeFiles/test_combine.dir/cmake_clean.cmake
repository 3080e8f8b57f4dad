file(REMOVE_RECURSE
  "CMakeFiles/test_combine.dir/test_combine.c.o"
  "CMakeFiles/test_combine.dir/test_combine.c.o.d"
  "test_combine"
  "test_combine.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_combine.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
