file(REMOVE_RECURSE
  "libmoe.pdb"
  "libmoe.so"
  "libmoe.so.1"
  "libmoe.so.1.2.0"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/moe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
