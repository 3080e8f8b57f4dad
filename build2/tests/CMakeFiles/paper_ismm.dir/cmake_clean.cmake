file(REMOVE_RECURSE
  "CMakeFiles/paper_ismm.dir/__/examples/paper/ismm.c.o"
  "CMakeFiles/paper_ismm.dir/__/examples/paper/ismm.c.o.d"
  "paper_ismm"
  "paper_ismm.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/paper_ismm.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
