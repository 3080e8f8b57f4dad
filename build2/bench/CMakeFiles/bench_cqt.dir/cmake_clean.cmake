file(REMOVE_RECURSE
  "CMakeFiles/bench_cqt.dir/bench_cqt.c.o"
  "CMakeFiles/bench_cqt.dir/bench_cqt.c.o.d"
  "bench_cqt"
  "bench_cqt.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_cqt.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
