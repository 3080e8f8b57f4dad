
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/lib/estimators/em.c" "tests/CMakeFiles/test_outside_estimators.dir/__/lib/estimators/em.c.o" "gcc" "tests/CMakeFiles/test_outside_estimators.dir/__/lib/estimators/em.c.o.d"
  "/work/wt-t/lib/estimators/gd.c" "tests/CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gd.c.o" "gcc" "tests/CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gd.c.o.d"
  "/work/wt-t/lib/estimators/gem.c" "tests/CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gem.c.o" "gcc" "tests/CMakeFiles/test_outside_estimators.dir/__/lib/estimators/gem.c.o.d"
  "/work/wt-t/tests/outside/test_outside_estimators.c" "tests/CMakeFiles/test_outside_estimators.dir/outside/test_outside_estimators.c.o" "gcc" "tests/CMakeFiles/test_outside_estimators.dir/outside/test_outside_estimators.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-t/build2/CMakeFiles/moe.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
