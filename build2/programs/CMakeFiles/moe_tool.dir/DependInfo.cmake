
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-t/lib/common/replace_file.c" "programs/CMakeFiles/moe_tool.dir/__/lib/common/replace_file.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/__/lib/common/replace_file.c.o.d"
  "/work/wt-t/programs/atomic_file.c" "programs/CMakeFiles/moe_tool.dir/atomic_file.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/atomic_file.c.o.d"
  "/work/wt-t/programs/cli_common.c" "programs/CMakeFiles/moe_tool.dir/cli_common.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_common.c.o.d"
  "/work/wt-t/programs/cli_families.c" "programs/CMakeFiles/moe_tool.dir/cli_families.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_families.c.o.d"
  "/work/wt-t/programs/cli_fit.c" "programs/CMakeFiles/moe_tool.dir/cli_fit.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_fit.c.o.d"
  "/work/wt-t/programs/cli_info.c" "programs/CMakeFiles/moe_tool.dir/cli_info.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_info.c.o.d"
  "/work/wt-t/programs/cli_inputs.c" "programs/CMakeFiles/moe_tool.dir/cli_inputs.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_inputs.c.o.d"
  "/work/wt-t/programs/cli_options.c" "programs/CMakeFiles/moe_tool.dir/cli_options.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_options.c.o.d"
  "/work/wt-t/programs/cli_plot.c" "programs/CMakeFiles/moe_tool.dir/cli_plot.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_plot.c.o.d"
  "/work/wt-t/programs/cli_predict.c" "programs/CMakeFiles/moe_tool.dir/cli_predict.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_predict.c.o.d"
  "/work/wt-t/programs/cli_select.c" "programs/CMakeFiles/moe_tool.dir/cli_select.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_select.c.o.d"
  "/work/wt-t/programs/cli_stream.c" "programs/CMakeFiles/moe_tool.dir/cli_stream.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_stream.c.o.d"
  "/work/wt-t/programs/cli_summary.c" "programs/CMakeFiles/moe_tool.dir/cli_summary.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/cli_summary.c.o.d"
  "/work/wt-t/programs/decimal.c" "programs/CMakeFiles/moe_tool.dir/decimal.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/decimal.c.o.d"
  "/work/wt-t/programs/moe.c" "programs/CMakeFiles/moe_tool.dir/moe.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/moe.c.o.d"
  "/work/wt-t/programs/name_index.c" "programs/CMakeFiles/moe_tool.dir/name_index.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/name_index.c.o.d"
  "/work/wt-t/programs/row_message.c" "programs/CMakeFiles/moe_tool.dir/row_message.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/row_message.c.o.d"
  "/work/wt-t/programs/svg.c" "programs/CMakeFiles/moe_tool.dir/svg.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/svg.c.o.d"
  "/work/wt-t/programs/table.c" "programs/CMakeFiles/moe_tool.dir/table.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/table.c.o.d"
  "/work/wt-t/programs/utf8.c" "programs/CMakeFiles/moe_tool.dir/utf8.c.o" "gcc" "programs/CMakeFiles/moe_tool.dir/utf8.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-t/build2/CMakeFiles/moe.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
