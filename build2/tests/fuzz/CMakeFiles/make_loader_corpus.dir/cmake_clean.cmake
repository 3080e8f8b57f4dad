file(REMOVE_RECURSE
  "CMakeFiles/make_loader_corpus.dir/make_loader_corpus.c.o"
  "CMakeFiles/make_loader_corpus.dir/make_loader_corpus.c.o.d"
  "make_loader_corpus"
  "make_loader_corpus.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/make_loader_corpus.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
