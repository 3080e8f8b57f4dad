file(REMOVE_RECURSE
  "CMakeFiles/test_versioned.dir/test_versioned.c.o"
  "CMakeFiles/test_versioned.dir/test_versioned.c.o.d"
  "test_versioned"
  "test_versioned.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_versioned.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
