file(REMOVE_RECURSE
  "CMakeFiles/latin1_model.dir/cli/latin1_model.c.o"
  "CMakeFiles/latin1_model.dir/cli/latin1_model.c.o.d"
  "latin1_model"
  "latin1_model.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/latin1_model.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
