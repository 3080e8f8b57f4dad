file(REMOVE_RECURSE
  "CMakeFiles/test_gradient_estimators.dir/test_gradient_estimators.c.o"
  "CMakeFiles/test_gradient_estimators.dir/test_gradient_estimators.c.o.d"
  "test_gradient_estimators"
  "test_gradient_estimators.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_gradient_estimators.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
