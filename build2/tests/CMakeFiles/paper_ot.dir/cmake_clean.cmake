file(REMOVE_RECURSE
  "CMakeFiles/paper_ot.dir/__/examples/paper/ot.c.o"
  "CMakeFiles/paper_ot.dir/__/examples/paper/ot.c.o.d"
  "paper_ot"
  "paper_ot.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/paper_ot.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
