file(REMOVE_RECURSE
  "CMakeFiles/test_mpi.dir/mpi/test_mpi.c.o"
  "CMakeFiles/test_mpi.dir/mpi/test_mpi.c.o.d"
  "test_mpi"
  "test_mpi.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_mpi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
