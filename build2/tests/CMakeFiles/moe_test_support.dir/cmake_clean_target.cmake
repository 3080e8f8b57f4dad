file(REMOVE_RECURSE
  "libmoe_test_support.a"
)
