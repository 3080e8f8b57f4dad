
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/lib/common/exp_array.c" "bench/CMakeFiles/bench_em.dir/__/lib/common/exp_array.c.o" "gcc" "bench/CMakeFiles/bench_em.dir/__/lib/common/exp_array.c.o.d"
  "/work/wt-t/bench/bench_em.c" "bench/CMakeFiles/bench_em.dir/bench_em.c.o" "gcc" "bench/CMakeFiles/bench_em.dir/bench_em.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-t/build2/CMakeFiles/moe.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
