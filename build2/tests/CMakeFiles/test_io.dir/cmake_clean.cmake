file(REMOVE_RECURSE
  "CMakeFiles/test_io.dir/test_io.c.o"
  "CMakeFiles/test_io.dir/test_io.c.o.d"
  "test_io"
  "test_io.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_io.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
