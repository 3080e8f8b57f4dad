file(REMOVE_RECURSE
  "CMakeFiles/test_em.dir/test_em.c.o"
  "CMakeFiles/test_em.dir/test_em.c.o.d"
  "test_em"
  "test_em.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_em.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
