file(REMOVE_RECURSE
  "CMakeFiles/test_table_reader.dir/__/programs/decimal.c.o"
  "CMakeFiles/test_table_reader.dir/__/programs/decimal.c.o.d"
  "CMakeFiles/test_table_reader.dir/__/programs/name_index.c.o"
  "CMakeFiles/test_table_reader.dir/__/programs/name_index.c.o.d"
  "CMakeFiles/test_table_reader.dir/__/programs/table.c.o"
  "CMakeFiles/test_table_reader.dir/__/programs/table.c.o.d"
  "CMakeFiles/test_table_reader.dir/__/programs/utf8.c.o"
  "CMakeFiles/test_table_reader.dir/__/programs/utf8.c.o.d"
  "CMakeFiles/test_table_reader.dir/table/test_table_reader.c.o"
  "CMakeFiles/test_table_reader.dir/table/test_table_reader.c.o.d"
  "test_table_reader"
  "test_table_reader.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_table_reader.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
