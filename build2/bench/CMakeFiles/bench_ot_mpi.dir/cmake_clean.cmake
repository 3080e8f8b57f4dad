file(REMOVE_RECURSE
  "CMakeFiles/bench_ot_mpi.dir/mpi/bench_ot_mpi.c.o"
  "CMakeFiles/bench_ot_mpi.dir/mpi/bench_ot_mpi.c.o.d"
  "bench_ot_mpi"
  "bench_ot_mpi.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_ot_mpi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
