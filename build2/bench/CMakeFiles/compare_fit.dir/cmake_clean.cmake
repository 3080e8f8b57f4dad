file(REMOVE_RECURSE
  "CMakeFiles/compare_fit.dir/compare_fit.c.o"
  "CMakeFiles/compare_fit.dir/compare_fit.c.o.d"
  "compare_fit"
  "compare_fit.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/compare_fit.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
