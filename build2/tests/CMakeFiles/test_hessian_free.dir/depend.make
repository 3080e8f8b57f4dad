# Empty dependencies file for test_hessian_free.
# This may be replaced when dependencies are built.
