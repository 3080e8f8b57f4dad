file(REMOVE_RECURSE
  "CMakeFiles/cqt_magnitudes.dir/cqt_magnitudes.c.o"
  "CMakeFiles/cqt_magnitudes.dir/cqt_magnitudes.c.o.d"
  "cqt_magnitudes"
  "cqt_magnitudes.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cqt_magnitudes.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
