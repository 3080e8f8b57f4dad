file(REMOVE_RECURSE
  "CMakeFiles/bench_classification.dir/bench_classification.c.o"
  "CMakeFiles/bench_classification.dir/bench_classification.c.o.d"
  "bench_classification"
  "bench_classification.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_classification.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
