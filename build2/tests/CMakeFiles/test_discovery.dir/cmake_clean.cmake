file(REMOVE_RECURSE
  "CMakeFiles/test_discovery.dir/test_discovery.c.o"
  "CMakeFiles/test_discovery.dir/test_discovery.c.o.d"
  "test_discovery"
  "test_discovery.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_discovery.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
