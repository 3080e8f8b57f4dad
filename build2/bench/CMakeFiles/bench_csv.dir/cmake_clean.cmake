file(REMOVE_RECURSE
  "CMakeFiles/bench_csv.dir/__/programs/decimal.c.o"
  "CMakeFiles/bench_csv.dir/__/programs/decimal.c.o.d"
  "CMakeFiles/bench_csv.dir/__/programs/name_index.c.o"
  "CMakeFiles/bench_csv.dir/__/programs/name_index.c.o.d"
  "CMakeFiles/bench_csv.dir/__/programs/table.c.o"
  "CMakeFiles/bench_csv.dir/__/programs/table.c.o.d"
  "CMakeFiles/bench_csv.dir/__/programs/utf8.c.o"
  "CMakeFiles/bench_csv.dir/__/programs/utf8.c.o.d"
  "CMakeFiles/bench_csv.dir/bench_csv.c.o"
  "CMakeFiles/bench_csv.dir/bench_csv.c.o.d"
  "bench_csv"
  "bench_csv.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_csv.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
