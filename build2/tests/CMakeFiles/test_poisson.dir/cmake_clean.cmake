file(REMOVE_RECURSE
  "CMakeFiles/test_poisson.dir/test_poisson.c.o"
  "CMakeFiles/test_poisson.dir/test_poisson.c.o.d"
  "test_poisson"
  "test_poisson.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_poisson.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
