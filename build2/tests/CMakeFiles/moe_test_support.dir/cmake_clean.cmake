file(REMOVE_RECURSE
  "CMakeFiles/moe_test_support.dir/support/labels.c.o"
  "CMakeFiles/moe_test_support.dir/support/labels.c.o.d"
  "CMakeFiles/moe_test_support.dir/support/lockstep.c.o"
  "CMakeFiles/moe_test_support.dir/support/lockstep.c.o.d"
  "CMakeFiles/moe_test_support.dir/support/option_lookup.c.o"
  "CMakeFiles/moe_test_support.dir/support/option_lookup.c.o.d"
  "CMakeFiles/moe_test_support.dir/support/runner.c.o"
  "CMakeFiles/moe_test_support.dir/support/runner.c.o.d"
  "CMakeFiles/moe_test_support.dir/support/synthetic.c.o"
  "CMakeFiles/moe_test_support.dir/support/synthetic.c.o.d"
  "CMakeFiles/moe_test_support.dir/support/tensor_truth.c.o"
  "CMakeFiles/moe_test_support.dir/support/tensor_truth.c.o.d"
  "libmoe_test_support.a"
  "libmoe_test_support.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/moe_test_support.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
