
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/bench/bitwise/cases.c" "bench/CMakeFiles/moe_bitwise_driver.dir/bitwise/cases.c.o" "gcc" "bench/CMakeFiles/moe_bitwise_driver.dir/bitwise/cases.c.o.d"
  "/work/wt-t/bench/bitwise/data.c" "bench/CMakeFiles/moe_bitwise_driver.dir/bitwise/data.c.o" "gcc" "bench/CMakeFiles/moe_bitwise_driver.dir/bitwise/data.c.o.d"
  "/work/wt-t/bench/bitwise/driver.c" "bench/CMakeFiles/moe_bitwise_driver.dir/bitwise/driver.c.o" "gcc" "bench/CMakeFiles/moe_bitwise_driver.dir/bitwise/driver.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-t/build2/CMakeFiles/moe.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
