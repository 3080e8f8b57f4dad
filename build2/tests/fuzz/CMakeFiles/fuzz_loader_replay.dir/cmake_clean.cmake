file(REMOVE_RECURSE
  "CMakeFiles/fuzz_loader_replay.dir/fuzz_loader.c.o"
  "CMakeFiles/fuzz_loader_replay.dir/fuzz_loader.c.o.d"
  "CMakeFiles/fuzz_loader_replay.dir/replay.c.o"
  "CMakeFiles/fuzz_loader_replay.dir/replay.c.o.d"
  "fuzz_loader_replay"
  "fuzz_loader_replay.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/fuzz_loader_replay.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
