file(REMOVE_RECURSE
  "CMakeFiles/bench_ot.dir/bench_ot.c.o"
  "CMakeFiles/bench_ot.dir/bench_ot.c.o.d"
  "bench_ot"
  "bench_ot.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_ot.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
