file(REMOVE_RECURSE
  "CMakeFiles/paper_fashion_mnist.dir/__/examples/paper/fashion_mnist.c.o"
  "CMakeFiles/paper_fashion_mnist.dir/__/examples/paper/fashion_mnist.c.o.d"
  "paper_fashion_mnist"
  "paper_fashion_mnist.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/paper_fashion_mnist.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
