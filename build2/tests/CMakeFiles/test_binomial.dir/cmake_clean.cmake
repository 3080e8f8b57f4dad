file(REMOVE_RECURSE
  "CMakeFiles/test_binomial.dir/test_binomial.c.o"
  "CMakeFiles/test_binomial.dir/test_binomial.c.o.d"
  "test_binomial"
  "test_binomial.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_binomial.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
