# Binomial experts with trials (libmoe 1.2): glm's cbind(successes, failures) response.

test_that("betablocker: cbind(Deaths, Total - Deaths) ~ Treatment reaches flexmix's best", {
  skip_if_not_installed("flexmix")
  data("betablocker", package = "flexmix", envir = environment())
  for (k in 2:3) {
    fit <- moe(cbind(Deaths, Total - Deaths) ~ Treatment, betablocker, k = k,
               family = binomial(), seed = 1)
    runs <- vapply(1:10, function(seed) {
      set.seed(seed)
      other <- tryCatch(flexmix::flexmix(cbind(Deaths, Total - Deaths) ~ Treatment,
                                         data = betablocker, k = k,
                                         model = flexmix::FLXMRglm(family = "binomial")),
                        error = function(e) NULL)
      if (is.null(other) || other@k < k) NA_real_ else other@logLik
    }, numeric(1))
    theirs <- max(runs, na.rm = TRUE)
    message(sprintf("betablocker K = %d: libmoe %.6f, flexmix best of 10 %.6f", k,
                    as.numeric(logLik(fit)), theirs))
    expect_gte(as.numeric(logLik(fit)), theirs - 1e-6 * abs(theirs))
    # the trials are neither a covariate nor a parameter
    expect_false(any(grepl("trials", names(coef(fit)))))
    expect_equal(length(coef(fit)), (k - 1) * 2 + k * 2)
  }
  # predict: success probabilities, with or without the response in newdata
  probability <- predict(fit)
  expect_true(all(probability > 0 & probability < 1))
  expect_equal(predict(fit, betablocker[, c("Treatment", "Center")]), probability,
               ignore_attr = TRUE)
  posterior <- predict(fit, betablocker, type = "posterior")
  expect_equal(dim(posterior), c(nrow(betablocker), 3L))
  expect_equal(rowSums(posterior), rep(1, nrow(betablocker)))
})

test_that("binomial counts are checked by the library, with the row", {
  data <- data.frame(s = c(1, 5, 2, 0), f = c(3, -1, 1, 4), x = c(0.1, 0.5, 0.2, 0.9))
  expect_error(moe(cbind(s, f) ~ x, data, family = "binomial"), "row 2")
  # a 0/1 response stays the logistic experts'
  fit <- moe(y ~ x, data.frame(y = rep(c(0, 1), 20), x = seq(-1, 1, length.out = 40)),
             family = "binomial", k = 1, seed = 1)
  expect_false(isTRUE(fit$trials))
})
