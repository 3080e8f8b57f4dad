file(REMOVE_RECURSE
  "CMakeFiles/make_state_corpus.dir/make_state_corpus.c.o"
  "CMakeFiles/make_state_corpus.dir/make_state_corpus.c.o.d"
  "make_state_corpus"
  "make_state_corpus.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/make_state_corpus.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
