file(REMOVE_RECURSE
  "CMakeFiles/test_gradients.dir/test_gradients.c.o"
  "CMakeFiles/test_gradients.dir/test_gradients.c.o.d"
  "test_gradients"
  "test_gradients.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_gradients.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
