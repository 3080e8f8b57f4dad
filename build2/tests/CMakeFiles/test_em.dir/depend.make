# Empty dependencies file for test_em.
# This may be replaced when dependencies are built.
