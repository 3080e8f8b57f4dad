file(REMOVE_RECURSE
  "CMakeFiles/test_classification.dir/test_classification.c.o"
  "CMakeFiles/test_classification.dir/test_classification.c.o.d"
  "test_classification"
  "test_classification.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_classification.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
