
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/programs/decimal.c" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/decimal.c.o" "gcc" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/decimal.c.o.d"
  "/work/wt-t/programs/name_index.c" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/name_index.c.o" "gcc" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/name_index.c.o.d"
  "/work/wt-t/programs/table.c" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/table.c.o" "gcc" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/table.c.o.d"
  "/work/wt-t/programs/utf8.c" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/utf8.c.o" "gcc" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/__/__/programs/utf8.c.o.d"
  "/work/wt-t/tests/fuzz/fuzz_csv.c" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/fuzz_csv.c.o" "gcc" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/fuzz_csv.c.o.d"
  "/work/wt-t/tests/fuzz/replay.c" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/replay.c.o" "gcc" "tests/fuzz/CMakeFiles/fuzz_csv_replay.dir/replay.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
