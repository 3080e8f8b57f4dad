two_regimes <- function(n, seed) {
  set.seed(seed)
  x <- runif(n, -2, 2)
  z <- rnorm(n)
  upper <- runif(n) < plogis(3 * x)
  y <- ifelse(upper, 2 * x + 1, -x - 1) + rnorm(n, sd = 0.3)
  data.frame(x = x, z = z, y = y)
}

message_of <- function(expression) {
  tryCatch({
    expression
    ""
  }, error = function(e) conditionMessage(e))
}

test_that("k is one whole number of at least 1, never rounded, truncated or wrapped", {
  data <- two_regimes(300, 21)
  bad <- list(2.7, c(2, 3), NA, NA_real_, NaN, -1, 0, Inf, "2", TRUE, 2^40)
  for (k in bad) {
    text <- message_of(moe(y ~ x, data, k = k, seed = 1))
    expect_match(text, "^k (must be a whole number in \\[1, 2147483647\\]|takes one value|is NA)",
                 info = deparse(k))
    expect_false(grepl("1844674407", text), info = deparse(k))
  }
  # A whole number of any type is a count: 2 and 2L fit the same model.
  double <- moe(y ~ x, data, k = 2, seed = 1, n_init = 1)
  integer <- moe(y ~ x, data, k = 2L, seed = 1L, n_init = 1L)
  expect_identical(integer$model, double$model)
  expect_identical(names(coef(double))[1:2], c("gate.expert1:(Intercept)", "gate.expert1:x"))
})

test_that("options are one value, not NA, whole numbers where the library counts", {
  data <- two_regimes(300, 22)
  fit <- function(...) message_of(moe(y ~ x, data, k = 2, seed = 1, ...))
  expect_match(fit(tol = NA), "^tol is NA")
  expect_match(fit(tol = NaN), "^tol is NA")
  expect_match(fit(tol = c(1e-6, 1e-8)), "^tol takes one value, got 2")
  expect_match(fit(tol = -1), "^tol must be a number in \\[0, 1\\], got -1")
  expect_match(fit(max_iter = 2.5), "^max_iter must be a whole number in \\[1, 1000000000\\]")
  expect_match(fit(max_iter = 0), "^max_iter must be a whole number")
  expect_match(fit(max_iter = NA_integer_), "^max_iter is NA")
  expect_match(fit(n_init = c(1, 2)), "^n_init takes one value")
  expect_match(fit(threads = -1), "^threads must be a whole number in \\[0, 1024\\]")
  expect_match(fit(threads = NA), "^threads is NA")
  expect_match(fit(batch_size = -5), "^batch_size must be a whole number")
  expect_match(fit(init = NA_character_), "^init is NA")
  expect_match(fit(init = c("kmeans", "random")), "^init takes one value")
  expect_match(fit(gate_l2 = list(1)), "^option gate_l2 takes a number, a logical or a string")
  expect_match(message_of(moe(y ~ x, data, k = 2, seed = -1)),
               "^seed must be a whole number in \\[0, 9007199254740991\\], got -1")
  expect_match(message_of(moe(y ~ x, data, k = 2, seed = 1.5)), "^seed must be a whole number")
  expect_match(message_of(moe(y ~ x, data, k = 2, seed = NA)), "^seed is NA")
  expect_match(message_of(moe(y ~ x, data, k = 2, estimator = c("em", "gd"))),
               "^estimator must be one string")
  expect_match(message_of(moe(y ~ x, data, k = 2, estimator = NA_character_)),
               "^estimator must be one string")
  # An estimator's own options: the bounds the library lists for them.
  expect_match(message_of(moe(y ~ x, data, k = 2, estimator = "ismm", step_scale = NaN)),
               "^step_scale is NA")
  expect_match(message_of(moe(y ~ x, data, k = 2, estimator = "ismm", step_scale = Inf)),
               "^step_scale must be a number in \\(0, 1\\], got Inf")
  expect_match(message_of(moe(y ~ x, data, k = 2, estimator = "ismm", step_decay = 0.5)),
               "^step_decay must be a number in \\(0.5, 1\\], got 0.5")
  expect_match(message_of(moe(y ~ x, data, k = 2, estimator = "ot", shards = 0)),
               "^shards must be a whole number")
  # Whole doubles are counts: three iterations exactly. A random start, because the default
  # search runs its survivors to a fixed point under tol = 0 (where an exactly unchanged
  # log-likelihood stops the fit), and how soon that happens varies with the compiler.
  three <- moe(y ~ x, data, k = 2, seed = 1, n_init = 1, max_iter = 3, tol = 0,
               init = "random")
  expect_false(three$converged)
  expect_identical(three$iterations, 3L)
  four <- moe(y ~ x, data, k = 2, seed = 1, n_init = 1, max_iter = 4L, tol = 0,
              init = "random")
  expect_identical(four$iterations, 4L)
  expect_false(identical(three$model, four$model))
})

test_that("y, the weights and X's columns are checked against the model before the library", {
  data <- two_regimes(300, 23)
  fit <- moe(y ~ x + z, data, k = 2, seed = 1, n_init = 1)
  short <- fit
  short$y <- fit$y[-1]
  expect_error(vcov(short), "y has 299 values for 300 rows of X")
  expect_error(predict(short, type = "posterior"), "y has 299 values for 300 rows of X")
  weighted <- fit
  weighted$weights <- rep(1, 10)
  expect_error(vcov(weighted), "weights has 10 values for 300 rows of X")
  wide <- fit
  wide$X <- cbind(fit$X, extra = 1)
  expect_error(vcov(wide), "X has 3 columns, the model 2")
  expect_error(predict(wide), "X has 3 columns, the model 2")
  narrow <- fit
  narrow$X <- fit$X[, 1, drop = FALSE]
  expect_error(predict(narrow, type = "gate"), "X has 1 columns, the model 2")
  # The untouched fit still works, and its covariance is the library's.
  expect_equal(dim(vcov(fit)), c(length(coef(fit)), length(coef(fit))))
  expect_true(all(diag(vcov(fit)) > 0))
})

test_that("the C glue refuses what the R side would have refused", {
  data <- two_regimes(300, 24)
  fit <- moe(y ~ x + z, data, k = 2, seed = 1, n_init = 1)
  glue <- function(name) getNativeSymbolInfo(name, "libmoe")
  wide <- cbind(fit$X, 1)
  expect_error(.Call(glue("libmoe_vcov"), fit$model, wide, fit$y, NULL, c(0, 0)),
               "X has 3 columns, the model 2")
  expect_error(.Call(glue("libmoe_predict"), fit$model, wide, NULL, 0L),
               "X has 3 columns, the model 2")
  expect_error(.Call(glue("libmoe_loglik"), fit$model, wide, fit$y, NULL),
               "X has 3 columns, the model 2")
  expect_error(.Call(glue("libmoe_loglik"), fit$model, fit$X, fit$y[-1], NULL), "y must be")
  for (experts in list(-1L, NA_integer_, 2.5, c(2L, 3L))) {
    text <- message_of(.Call(glue("libmoe_fit"), "gaussian", experts, fit$X, fit$y, NULL, TRUE,
                             0L, "em", character(0), character(0), NULL))
    expect_match(text, "number of experts must be one whole number", info = deparse(experts))
    expect_false(grepl("1844674407", text))
  }
  expect_match(message_of(.Call(glue("libmoe_fit"), "gaussian", 2L, fit$X, fit$y, NULL, NA, 0L,
                                "em", character(0), character(0), NULL)),
               "intercept must be TRUE or FALSE")
  expect_match(message_of(.Call(glue("libmoe_fit"), "gaussian", 2L, fit$X, fit$y, NULL, TRUE,
                                -3L, "em", character(0), character(0), NULL)),
               "number of classes must be one whole number")
})
