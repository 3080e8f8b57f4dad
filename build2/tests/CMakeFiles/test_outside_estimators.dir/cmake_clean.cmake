file(REMOVE_RECURSE
  "CMakeFiles/test_outside_estimators.dir/__/lib/estimators/em.c.o"
  "CMakeFiles/test_outside_estimators.dir/__/lib/estimators/em.c.o.d"
  "CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gd.c.o"
  "CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gd.c.o.d"
  "CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gem.c.o"
  "CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gem.c.o.d"
  "CMakeFiles/test_outside_estimators.dir/outside/test_outside_estimators.c.o"
  "CMakeFiles/test_outside_estimators.dir/outside/test_outside_estimators.c.o.d"
  "test_outside_estimators"
  "test_outside_estimators.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_outside_estimators.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
