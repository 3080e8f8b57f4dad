file(REMOVE_RECURSE
  "CMakeFiles/fuzz_state_replay.dir/fuzz_state.c.o"
  "CMakeFiles/fuzz_state_replay.dir/fuzz_state.c.o.d"
  "CMakeFiles/fuzz_state_replay.dir/replay.c.o"
  "CMakeFiles/fuzz_state_replay.dir/replay.c.o.d"
  "fuzz_state_replay"
  "fuzz_state_replay.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/fuzz_state_replay.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
