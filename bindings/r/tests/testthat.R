library(testthat)
library(libmoe)
test_check("libmoe")
