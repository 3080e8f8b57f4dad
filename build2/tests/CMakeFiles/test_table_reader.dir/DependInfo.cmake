
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/programs/decimal.c" "tests/CMakeFiles/test_table_reader.dir/__/programs/decimal.c.o" "gcc" "tests/CMakeFiles/test_table_reader.dir/__/programs/decimal.c.o.d"
  "/work/wt-t/programs/name_index.c" "tests/CMakeFiles/test_table_reader.dir/__/programs/name_index.c.o" "gcc" "tests/CMakeFiles/test_table_reader.dir/__/programs/name_index.c.o.d"
  "/work/wt-t/programs/table.c" "tests/CMakeFiles/test_table_reader.dir/__/programs/table.c.o" "gcc" "tests/CMakeFiles/test_table_reader.dir/__/programs/table.c.o.d"
  "/work/wt-t/programs/utf8.c" "tests/CMakeFiles/test_table_reader.dir/__/programs/utf8.c.o" "gcc" "tests/CMakeFiles/test_table_reader.dir/__/programs/utf8.c.o.d"
  "/work/wt-t/tests/table/test_table_reader.c" "tests/CMakeFiles/test_table_reader.dir/table/test_table_reader.c.o" "gcc" "tests/CMakeFiles/test_table_reader.dir/table/test_table_reader.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-t/build2/tests/CMakeFiles/moe_test_support.dir/DependInfo.cmake"
  "/work/wt-t/build2/tests/CMakeFiles/moe_internal.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
