file(REMOVE_RECURSE
  "CMakeFiles/test_fitter.dir/test_fitter.c.o"
  "CMakeFiles/test_fitter.dir/test_fitter.c.o.d"
  "test_fitter"
  "test_fitter.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_fitter.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
