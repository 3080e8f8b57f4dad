file(REMOVE_RECURSE
  "libmoe_internal.a"
)
