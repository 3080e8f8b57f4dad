# The gate's own formula (gate = ~ z) and an offset() term of the experts (libmoe 1.1, model
# spec version 2): the design is the union of the formulas' columns, each part estimates its
# own, and coef, vcov and summary list only those.

gated_by_z <- function(n, seed) {
  set.seed(seed)
  x <- runif(n, -2, 2)
  z <- rnorm(n)
  first <- runif(n) < plogis(0.5 + 2 * z)
  y <- ifelse(first, 2 + 1.5 * x, -1 - x) + rnorm(n, sd = 0.3)
  data.frame(x = x, z = z, y = y)
}

test_that("a gate on its own covariate recovers the truth", {
  data <- gated_by_z(2000, 1)
  fit <- moe(y ~ x, data, gate = ~ z, seed = 1)
  estimates <- coef(fit)
  expect_equal(length(estimates), 8)
  expect_true(all(c("gate.expert1:(Intercept)", "gate.expert1:z") %in% names(estimates)))
  expect_false(any(c("gate.expert1:x", "expert1:z", "expert2:z") %in% names(estimates)))
  slopes <- estimates[c("expert1:x", "expert2:x")]
  rising <- which.max(slopes)
  expect_equal(unname(sort(slopes)), c(-1, 1.5), tolerance = 0.05)
  # The gate's slope on z, as the rising expert's log-odds: 2 in the truth.
  gate_slope <- estimates[["gate.expert1:z"]] * (if (rising == 1) 1 else -1)
  expect_equal(gate_slope, 2, tolerance = 0.1)
  # Held coefficients are exactly zero in the model's arrays.
  parameters <- libmoe:::.parameters(fit)
  expect_true(all(parameters$gate[, "x"] == 0))
  expect_true(all(parameters$experts[, "z"] == 0))
  covariance <- vcov(fit)
  expect_equal(dim(covariance), c(8L, 8L))
  expect_equal(rownames(covariance), names(estimates))
  table <- summary(fit)$coefficients
  expect_equal(rownames(table), names(estimates))
  expect_true(all(is.finite(table[, "Std. Error"])))
  expect_equal(attr(logLik(fit), "df"), 8)
  printed <- capture.output(print(fit))
  expect_true(any(grepl("held at 0", printed)))
  # predict builds the union design from newdata
  gate <- predict(fit, data.frame(x = c(0, 0), z = c(-3, 3)), type = "gate")
  expect_true(gate[1, rising] < 0.1 && gate[2, rising] > 0.9)
  expect_equal(predict(fit, data[1:5, ]), predict(fit)[1:5])
})

# flexmix's concomitant-variable model: flexmix(y ~ experts, concomitant = FLXPmultinom(~
# gate)); its best of five starts against libmoe's fit from its defaults.
flexmix_best <- function(formula, gate, data) {
  runs <- vapply(1:5, function(seed) {
    set.seed(seed)
    fit <- tryCatch(flexmix::flexmix(formula, k = 2, data = data,
                                     concomitant = flexmix::FLXPmultinom(gate),
                                     control = list(tolerance = 1e-10, iter.max = 2000)),
                    error = function(e) NULL)
    if (is.null(fit) || fit@k < 2) NA_real_ else fit@logLik
  }, numeric(1))
  max(runs, na.rm = TRUE)
}

test_that("NPreg: at least flexmix's concomitant fits, the gate's covariates the same or not", {
  skip_if_not_installed("flexmix")
  data("NPreg", package = "flexmix", envir = environment())
  cases <- list(list(yn ~ x, ~ x), list(yn ~ 1, ~ x), list(yn ~ x, ~ 1))
  for (case in cases) {
    ours <- as.numeric(logLik(moe(case[[1]], NPreg, gate = case[[2]])))
    theirs <- flexmix_best(case[[1]], case[[2]], NPreg)
    message(sprintf("NPreg %s, gate %s: libmoe %.6f, flexmix %.6f", deparse(case[[1]]),
                    deparse(case[[2]]), ours, theirs))
    expect_gte(ours, theirs - 1e-3 * abs(theirs))
  }
  # experts of the intercept alone: a mixture of two means weighted by a gate on x
  means <- moe(yn ~ 1, NPreg, gate = ~ x)
  expect_equal(names(coef(means)),
               c("gate.expert1:(Intercept)", "gate.expert1:x", "expert1:(Intercept)",
                 "expert2:(Intercept)", "variance.expert1", "variance.expert2"))
})

test_that("an offset(log(t)) term is a Poisson exposure", {
  set.seed(7)
  n <- 3000
  x <- runif(n, -1, 1)
  exposure <- runif(n, 0.5, 5)
  first <- runif(n) < plogis(3 * x)
  counts <- rpois(n, exposure * exp(ifelse(first, 1 + 0.5 * x, -0.5 - 0.5 * x)))
  data <- data.frame(x = x, exposure = exposure, counts = counts)
  fit <- moe(counts ~ x + offset(log(exposure)), data, family = "poisson", seed = 1)
  estimates <- coef(fit)
  expect_equal(length(estimates), 6)
  expect_false(any(grepl("offset", names(estimates))))
  slopes <- sort(estimates[c("expert1:x", "expert2:x")])
  expect_equal(unname(slopes), c(-0.5, 0.5), tolerance = 0.1)
  expect_equal(dim(vcov(fit)), c(6L, 6L))
  # The mean count follows the exposure, on the fit's data and on new data.
  expect_equal(sum(predict(fit)), sum(counts), tolerance = 0.02)
  doubled <- predict(fit, transform(data[1:10, ], exposure = 2 * exposure))
  expect_equal(doubled, 2 * predict(fit, data[1:10, ]))
  expect_true(any(grepl("offset", capture.output(print(fit)))))
})

test_that("the gate's formula errors are clear", {
  data <- gated_by_z(300, 2)
  expect_error(moe(y ~ x, data, gate = "z"), "one-sided formula")
  expect_error(moe(y ~ x, data, gate = ~ w), "w")
  expect_error(moe(y ~ x - 1, data, gate = ~ 1 - 1 + 0), "gate sees no input")
  expect_error(moe(y ~ x, data, gate = ~ z + offset(x)), "gate takes no offset")
  expect_error(moe(factor(y > 0) ~ x + offset(z), data, family = "multinomial"), "offset")
})
