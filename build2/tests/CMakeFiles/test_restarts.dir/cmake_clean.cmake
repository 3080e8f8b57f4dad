file(REMOVE_RECURSE
  "CMakeFiles/test_restarts.dir/test_restarts.c.o"
  "CMakeFiles/test_restarts.dir/test_restarts.c.o.d"
  "test_restarts"
  "test_restarts.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_restarts.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
