file(REMOVE_RECURSE
  "CMakeFiles/moe_bitwise_driver.dir/bitwise/cases.c.o"
  "CMakeFiles/moe_bitwise_driver.dir/bitwise/cases.c.o.d"
  "CMakeFiles/moe_bitwise_driver.dir/bitwise/data.c.o"
  "CMakeFiles/moe_bitwise_driver.dir/bitwise/data.c.o.d"
  "CMakeFiles/moe_bitwise_driver.dir/bitwise/driver.c.o"
  "CMakeFiles/moe_bitwise_driver.dir/bitwise/driver.c.o.d"
  "moe_bitwise_driver"
  "moe_bitwise_driver.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/moe_bitwise_driver.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
