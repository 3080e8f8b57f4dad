file(REMOVE_RECURSE
  "CMakeFiles/test_links.dir/test_links.c.o"
  "CMakeFiles/test_links.dir/test_links.c.o.d"
  "test_links"
  "test_links.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_links.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
