# Empty dependencies file for test_small_products.
# This may be replaced when dependencies are built.
