file(REMOVE_RECURSE
  "CMakeFiles/test_mpi_exact.dir/mpi/test_mpi_exact.c.o"
  "CMakeFiles/test_mpi_exact.dir/mpi/test_mpi_exact.c.o.d"
  "test_mpi_exact"
  "test_mpi_exact.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_mpi_exact.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
