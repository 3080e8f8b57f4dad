file(REMOVE_RECURSE
  "CMakeFiles/paper_ismm_streams.dir/__/examples/paper/ismm_streams.c.o"
  "CMakeFiles/paper_ismm_streams.dir/__/examples/paper/ismm_streams.c.o.d"
  "paper_ismm_streams"
  "paper_ismm_streams.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/paper_ismm_streams.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
