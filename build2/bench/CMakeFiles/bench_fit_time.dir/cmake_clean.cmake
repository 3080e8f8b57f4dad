file(REMOVE_RECURSE
  "CMakeFiles/bench_fit_time.dir/bench_fit_time.c.o"
  "CMakeFiles/bench_fit_time.dir/bench_fit_time.c.o.d"
  "bench_fit_time"
  "bench_fit_time.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_fit_time.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
