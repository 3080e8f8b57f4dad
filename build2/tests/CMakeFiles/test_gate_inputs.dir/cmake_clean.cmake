file(REMOVE_RECURSE
  "CMakeFiles/test_gate_inputs.dir/test_gate_inputs.c.o"
  "CMakeFiles/test_gate_inputs.dir/test_gate_inputs.c.o.d"
  "test_gate_inputs"
  "test_gate_inputs.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_gate_inputs.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
