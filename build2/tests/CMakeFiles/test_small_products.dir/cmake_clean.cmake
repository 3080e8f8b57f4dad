file(REMOVE_RECURSE
  "CMakeFiles/test_small_products.dir/test_small_products.c.o"
  "CMakeFiles/test_small_products.dir/test_small_products.c.o.d"
  "test_small_products"
  "test_small_products.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_small_products.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
