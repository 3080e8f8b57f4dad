file(REMOVE_RECURSE
  "CMakeFiles/paper_cqt.dir/__/examples/paper/cqt.c.o"
  "CMakeFiles/paper_cqt.dir/__/examples/paper/cqt.c.o.d"
  "paper_cqt"
  "paper_cqt.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/paper_cqt.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
