file(REMOVE_RECURSE
  "CMakeFiles/test_estimator_interface.dir/test_estimator_interface.c.o"
  "CMakeFiles/test_estimator_interface.dir/test_estimator_interface.c.o.d"
  "test_estimator_interface"
  "test_estimator_interface.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_estimator_interface.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
