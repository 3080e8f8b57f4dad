file(REMOVE_RECURSE
  "CMakeFiles/test_softmax_stacked.dir/test_softmax_stacked.c.o"
  "CMakeFiles/test_softmax_stacked.dir/test_softmax_stacked.c.o.d"
  "test_softmax_stacked"
  "test_softmax_stacked.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_softmax_stacked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
