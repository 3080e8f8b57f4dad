# Messages about a row of the data (issue 38): the library counts the rows of its arrays from
# 0; R names the data's row, counted from 1 and saying so, and X's column by name.

counts_with_a_gap <- function() {
  data.frame(x = c(0.1, 0.5, NA, 0.7, 0.2, 0.9, 0.3, 0.4, 0.8, 0.6),
             count = c(2, 1, 3, 2, -1, 4, 0, 2, 5, 1))
}

test_that("a bad count names the data's row, counted from 1", {
  data <- counts_with_a_gap()
  # Row 3 (NA) leaves the model frame: the negative count is the library's row 3, the data's 5.
  expect_error(moe(count ~ x, data, k = 1, family = "poisson"),
               "row 5 (counting from 1), response: -1 is not a count", fixed = TRUE)
  data$count[5] <- 1.5
  expect_error(moe(count ~ x, data, k = 1, family = "poisson", subset = x > 0.15),
               "row 5 (counting from 1), response: 1.5 is not a count", fixed = TRUE)
})

test_that("a row with a name is named by it", {
  data <- counts_with_a_gap()
  rownames(data) <- letters[seq_len(nrow(data))]
  expect_error(moe(count ~ x, data, k = 1, family = "poisson"),
               "row \"e\", response: -1 is not a count", fixed = TRUE)
})

test_that("predict names newdata's row", {
  data <- counts_with_a_gap()[-5, ]
  fit <- moe(count ~ x, data, k = 1, family = "poisson", seed = 1)
  expect_error(predict(fit, data.frame(x = c(0.5, 0.25, 1e308))),
               "row 3 (counting from 1): the prediction is infinite", fixed = TRUE)
})

test_that("a row and column of X are named by the data's row and the column's name", {
  expect_equal(libmoe:::.name_rows("libmoe predict: row 1, column 0: the value is NaN",
                                   matrix(0, 2, 1, dimnames = list(c("7", "9"), "x"))),
               "libmoe predict: row 9 (counting from 1), column 'x': the value is NaN")
  expect_equal(libmoe:::.name_rows("libmoe fit: the fit failed", matrix(0, 1, 1)),
               "libmoe fit: the fit failed")
})

test_that("a constant response is refused, naming it", {
  data <- data.frame(x = seq(0.05, 2, by = 0.05), level = 2.5)
  expect_error(moe(level ~ x, data, k = 2, seed = 1),
               "the response, level, is constant", fixed = TRUE)
  expect_error(moe(log(level) ~ x, data, k = 2, seed = 1),
               "the response, log(level), is constant", fixed = TRUE)
})

test_that("the numbers of a subset's rows are names, not places", {
  data <- counts_with_a_gap()
  data$g <- c(1, 2, 1, 2, 1, 2, 1, 2, 1, 2)
  odd <- data[data$g == 1, ]
  # the negative count is the data frame's row "5", third of the subset's rows
  expect_error(moe(count ~ x, odd, k = 1, family = "poisson"),
               "row \"5\", response: -1 is not a count", fixed = TRUE)
})
