file(REMOVE_RECURSE
  "CMakeFiles/long_cqt.dir/long_cqt.c.o"
  "CMakeFiles/long_cqt.dir/long_cqt.c.o.d"
  "long_cqt"
  "long_cqt.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/long_cqt.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
