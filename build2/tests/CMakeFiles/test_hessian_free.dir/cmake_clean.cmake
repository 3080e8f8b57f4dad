file(REMOVE_RECURSE
  "CMakeFiles/test_hessian_free.dir/test_hessian_free.c.o"
  "CMakeFiles/test_hessian_free.dir/test_hessian_free.c.o.d"
  "test_hessian_free"
  "test_hessian_free.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_hessian_free.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
