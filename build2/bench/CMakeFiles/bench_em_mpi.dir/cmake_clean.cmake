file(REMOVE_RECURSE
  "CMakeFiles/bench_em_mpi.dir/mpi/bench_em_mpi.c.o"
  "CMakeFiles/bench_em_mpi.dir/mpi/bench_em_mpi.c.o.d"
  "bench_em_mpi"
  "bench_em_mpi.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_em_mpi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
