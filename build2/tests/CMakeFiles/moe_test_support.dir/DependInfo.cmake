
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/tests/support/labels.c" "tests/CMakeFiles/moe_test_support.dir/support/labels.c.o" "gcc" "tests/CMakeFiles/moe_test_support.dir/support/labels.c.o.d"
  "/work/wt-t/tests/support/lockstep.c" "tests/CMakeFiles/moe_test_support.dir/support/lockstep.c.o" "gcc" "tests/CMakeFiles/moe_test_support.dir/support/lockstep.c.o.d"
  "/work/wt-t/tests/support/option_lookup.c" "tests/CMakeFiles/moe_test_support.dir/support/option_lookup.c.o" "gcc" "tests/CMakeFiles/moe_test_support.dir/support/option_lookup.c.o.d"
  "/work/wt-t/tests/support/runner.c" "tests/CMakeFiles/moe_test_support.dir/support/runner.c.o" "gcc" "tests/CMakeFiles/moe_test_support.dir/support/runner.c.o.d"
  "/work/wt-t/tests/support/synthetic.c" "tests/CMakeFiles/moe_test_support.dir/support/synthetic.c.o" "gcc" "tests/CMakeFiles/moe_test_support.dir/support/synthetic.c.o.d"
  "/work/wt-t/tests/support/tensor_truth.c" "tests/CMakeFiles/moe_test_support.dir/support/tensor_truth.c.o" "gcc" "tests/CMakeFiles/moe_test_support.dir/support/tensor_truth.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-t/build2/tests/CMakeFiles/moe_internal.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
