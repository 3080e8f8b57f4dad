file(REMOVE_RECURSE
  "CMakeFiles/test_extremes.dir/test_extremes.c.o"
  "CMakeFiles/test_extremes.dir/test_extremes.c.o.d"
  "test_extremes"
  "test_extremes.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_extremes.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
