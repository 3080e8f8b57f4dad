file(REMOVE_RECURSE
  "CMakeFiles/bench_estep_paths.dir/bench_estep_paths.c.o"
  "CMakeFiles/bench_estep_paths.dir/bench_estep_paths.c.o.d"
  "bench_estep_paths"
  "bench_estep_paths.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_estep_paths.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
