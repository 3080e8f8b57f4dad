file(REMOVE_RECURSE
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/decimal.c.o"
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/decimal.c.o.d"
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/name_index.c.o"
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/name_index.c.o.d"
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/table.c.o"
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/table.c.o.d"
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/utf8.c.o"
  "CMakeFiles/fuzz_csv_replay.dir/__/__/programs/utf8.c.o.d"
  "CMakeFiles/fuzz_csv_replay.dir/fuzz_csv.c.o"
  "CMakeFiles/fuzz_csv_replay.dir/fuzz_csv.c.o.d"
  "CMakeFiles/fuzz_csv_replay.dir/replay.c.o"
  "CMakeFiles/fuzz_csv_replay.dir/replay.c.o.d"
  "fuzz_csv_replay"
  "fuzz_csv_replay.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/fuzz_csv_replay.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
