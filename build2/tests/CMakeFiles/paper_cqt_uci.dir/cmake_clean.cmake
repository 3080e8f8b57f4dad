file(REMOVE_RECURSE
  "CMakeFiles/paper_cqt_uci.dir/__/examples/paper/cqt_uci.c.o"
  "CMakeFiles/paper_cqt_uci.dir/__/examples/paper/cqt_uci.c.o.d"
  "paper_cqt_uci"
  "paper_cqt_uci.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/paper_cqt_uci.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
