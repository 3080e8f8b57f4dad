file(REMOVE_RECURSE
  "CMakeFiles/bench_em.dir/__/lib/common/exp_array.c.o"
  "CMakeFiles/bench_em.dir/__/lib/common/exp_array.c.o.d"
  "CMakeFiles/bench_em.dir/bench_em.c.o"
  "CMakeFiles/bench_em.dir/bench_em.c.o.d"
  "bench_em"
  "bench_em.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_em.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
