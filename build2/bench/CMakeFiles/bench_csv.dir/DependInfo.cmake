
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/programs/decimal.c" "bench/CMakeFiles/bench_csv.dir/__/programs/decimal.c.o" "gcc" "bench/CMakeFiles/bench_csv.dir/__/programs/decimal.c.o.d"
  "/work/wt-t/programs/name_index.c" "bench/CMakeFiles/bench_csv.dir/__/programs/name_index.c.o" "gcc" "bench/CMakeFiles/bench_csv.dir/__/programs/name_index.c.o.d"
  "/work/wt-t/programs/table.c" "bench/CMakeFiles/bench_csv.dir/__/programs/table.c.o" "gcc" "bench/CMakeFiles/bench_csv.dir/__/programs/table.c.o.d"
  "/work/wt-t/programs/utf8.c" "bench/CMakeFiles/bench_csv.dir/__/programs/utf8.c.o" "gcc" "bench/CMakeFiles/bench_csv.dir/__/programs/utf8.c.o.d"
  "/work/wt-t/bench/bench_csv.c" "bench/CMakeFiles/bench_csv.dir/bench_csv.c.o" "gcc" "bench/CMakeFiles/bench_csv.dir/bench_csv.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
