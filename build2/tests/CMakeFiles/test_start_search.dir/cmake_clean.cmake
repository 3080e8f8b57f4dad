file(REMOVE_RECURSE
  "CMakeFiles/test_start_search.dir/test_start_search.c.o"
  "CMakeFiles/test_start_search.dir/test_start_search.c.o.d"
  "test_start_search"
  "test_start_search.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_start_search.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
