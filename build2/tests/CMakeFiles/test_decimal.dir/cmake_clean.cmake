file(REMOVE_RECURSE
  "CMakeFiles/test_decimal.dir/__/programs/decimal.c.o"
  "CMakeFiles/test_decimal.dir/__/programs/decimal.c.o.d"
  "CMakeFiles/test_decimal.dir/table/test_decimal.c.o"
  "CMakeFiles/test_decimal.dir/table/test_decimal.c.o.d"
  "test_decimal"
  "test_decimal.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_decimal.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
