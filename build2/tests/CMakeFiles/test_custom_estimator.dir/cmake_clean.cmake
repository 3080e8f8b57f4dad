file(REMOVE_RECURSE
  "CMakeFiles/test_custom_estimator.dir/test_custom_estimator.c.o"
  "CMakeFiles/test_custom_estimator.dir/test_custom_estimator.c.o.d"
  "test_custom_estimator"
  "test_custom_estimator.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_custom_estimator.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
