file(REMOVE_RECURSE
  "CMakeFiles/long_coverage.dir/long_coverage.c.o"
  "CMakeFiles/long_coverage.dir/long_coverage.c.o.d"
  "long_coverage"
  "long_coverage.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/long_coverage.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
