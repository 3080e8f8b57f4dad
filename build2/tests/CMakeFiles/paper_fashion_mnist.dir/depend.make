# Empty dependencies file for paper_fashion_mnist.
# This may be replaced when dependencies are built.
