file(REMOVE_RECURSE
  "CMakeFiles/ismm_steep_gate.dir/ismm_steep_gate.c.o"
  "CMakeFiles/ismm_steep_gate.dir/ismm_steep_gate.c.o.d"
  "ismm_steep_gate"
  "ismm_steep_gate.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ismm_steep_gate.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
