file(REMOVE_RECURSE
  "CMakeFiles/test_option_fields.dir/test_option_fields.c.o"
  "CMakeFiles/test_option_fields.dir/test_option_fields.c.o.d"
  "test_option_fields"
  "test_option_fields.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_option_fields.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
