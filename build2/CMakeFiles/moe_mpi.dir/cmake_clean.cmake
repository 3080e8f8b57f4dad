file(REMOVE_RECURSE
  "CMakeFiles/moe_mpi.dir/lib/mpi/exact_em.c.o"
  "CMakeFiles/moe_mpi.dir/lib/mpi/exact_em.c.o.d"
  "CMakeFiles/moe_mpi.dir/lib/mpi/moe_mpi.c.o"
  "CMakeFiles/moe_mpi.dir/lib/mpi/moe_mpi.c.o.d"
  "CMakeFiles/moe_mpi.dir/lib/mpi/mpi_shuffle.c.o"
  "CMakeFiles/moe_mpi.dir/lib/mpi/mpi_shuffle.c.o.d"
  "libmoe_mpi.pdb"
  "libmoe_mpi.so"
  "libmoe_mpi.so.1"
  "libmoe_mpi.so.1.1.0"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/moe_mpi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
