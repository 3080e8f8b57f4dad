file(REMOVE_RECURSE
  "CMakeFiles/test_cqt.dir/test_cqt.c.o"
  "CMakeFiles/test_cqt.dir/test_cqt.c.o.d"
  "test_cqt"
  "test_cqt.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_cqt.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
