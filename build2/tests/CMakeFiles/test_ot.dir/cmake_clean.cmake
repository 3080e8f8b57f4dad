file(REMOVE_RECURSE
  "CMakeFiles/test_ot.dir/test_ot.c.o"
  "CMakeFiles/test_ot.dir/test_ot.c.o.d"
  "test_ot"
  "test_ot.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_ot.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
