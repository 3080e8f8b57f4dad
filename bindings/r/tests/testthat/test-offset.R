# moe(..., offset = ) as glm takes it (issue 38): a vector added to every expert's linear
# predictor, the same model as an offset() term, combined with such terms by addition, and
# evaluated again in newdata by predict.

exposure_counts <- function(n, seed) {
  set.seed(seed)
  x <- runif(n, -1, 1)
  exposure <- runif(n, 0.5, 5)
  extra <- runif(n, -0.2, 0.2)
  first <- runif(n) < plogis(3 * x)
  counts <- rpois(n, exposure * exp(extra + ifelse(first, 1 + 0.5 * x, -0.5 - 0.5 * x)))
  data.frame(x = x, exposure = exposure, extra = extra, counts = counts)
}

test_that("offset = is the model of an offset() term", {
  data <- exposure_counts(800, 3)
  by_term <- moe(counts ~ x + offset(log(exposure)), data, family = "poisson", seed = 1)
  by_argument <- moe(counts ~ x, data, family = "poisson", seed = 1, offset = log(exposure))
  expect_equal(coef(by_argument), coef(by_term))
  expect_equal(as.numeric(logLik(by_argument)), as.numeric(logLik(by_term)))
  expect_false(any(grepl("offset", names(coef(by_argument)))))
  expect_equal(predict(by_argument), predict(by_term))
  # newdata: the offset's expression is evaluated there, as predict.glm does.
  new <- data[1:10, ]
  expect_equal(predict(by_argument, new), predict(by_term, new))
  doubled <- transform(new, exposure = 2 * exposure)
  expect_equal(predict(by_argument, doubled), 2 * predict(by_argument, new))
})

test_that("offset = adds to the formula's offset() terms", {
  data <- exposure_counts(800, 4)
  both <- moe(counts ~ x + offset(log(exposure)), data, family = "poisson", seed = 1,
              offset = extra)
  summed <- moe(counts ~ x + offset(log(exposure) + extra), data, family = "poisson",
                seed = 1)
  expect_equal(coef(both), coef(summed))
  expect_equal(predict(both, data[1:10, ]), predict(summed, data[1:10, ]))
})

test_that("offset = works with a gate formula and with a vector of the caller's", {
  data <- exposure_counts(800, 5)
  with_gate <- moe(counts ~ x, data, family = "poisson", seed = 1, gate = ~ x,
                   offset = log(exposure))
  by_term <- moe(counts ~ x + offset(log(exposure)), data, family = "poisson", seed = 1,
                 gate = ~ x)
  expect_equal(coef(with_gate), coef(by_term))
  log_exposure <- log(data$exposure)
  outside <- moe(counts ~ x, data, family = "poisson", seed = 1, offset = log_exposure)
  expect_equal(coef(outside), coef(with_gate))
  # A vector of the fit's rows cannot be evaluated in 10 rows of newdata: a clear error.
  expect_error(predict(outside, data[1:10, ]), "the offset (log_exposure) has 800 values",
               fixed = TRUE)
  expect_error(moe(counts ~ x, data, family = "poisson", offset = 1:3), "offset")
})
