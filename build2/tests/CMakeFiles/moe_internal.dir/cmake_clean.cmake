file(REMOVE_RECURSE
  "libmoe_internal.a"
  "libmoe_internal.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/moe_internal.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
