file(REMOVE_RECURSE
  "CMakeFiles/paper_smoline.dir/__/examples/paper/smoline.c.o"
  "CMakeFiles/paper_smoline.dir/__/examples/paper/smoline.c.o.d"
  "paper_smoline"
  "paper_smoline.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/paper_smoline.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
