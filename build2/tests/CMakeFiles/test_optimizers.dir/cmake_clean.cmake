file(REMOVE_RECURSE
  "CMakeFiles/test_optimizers.dir/test_optimizers.c.o"
  "CMakeFiles/test_optimizers.dir/test_optimizers.c.o.d"
  "test_optimizers"
  "test_optimizers.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_optimizers.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
