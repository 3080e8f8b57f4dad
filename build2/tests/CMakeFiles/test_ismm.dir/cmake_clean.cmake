file(REMOVE_RECURSE
  "CMakeFiles/test_ismm.dir/test_ismm.c.o"
  "CMakeFiles/test_ismm.dir/test_ismm.c.o.d"
  "test_ismm"
  "test_ismm.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_ismm.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
