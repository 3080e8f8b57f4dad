file(REMOVE_RECURSE
  "CMakeFiles/bench_ismm.dir/bench_ismm.c.o"
  "CMakeFiles/bench_ismm.dir/bench_ismm.c.o.d"
  "bench_ismm"
  "bench_ismm.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_ismm.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
