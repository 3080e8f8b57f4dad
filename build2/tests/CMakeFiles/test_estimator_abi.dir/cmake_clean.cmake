file(REMOVE_RECURSE
  "CMakeFiles/test_estimator_abi.dir/test_estimator_abi.c.o"
  "CMakeFiles/test_estimator_abi.dir/test_estimator_abi.c.o.d"
  "test_estimator_abi"
  "test_estimator_abi.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_estimator_abi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
