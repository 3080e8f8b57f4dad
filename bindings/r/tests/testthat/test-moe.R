regimes <- function(n, seed) {
  set.seed(seed)
  x <- runif(n, -2, 2)
  z <- rnorm(n)
  upper <- runif(n) < plogis(3 * x)
  y <- ifelse(upper, 2 * x + 1, -x - 1) + rnorm(n, sd = 0.3)
  data.frame(x = x, z = z, y = y)
}

test_that("a two-regime regression is recovered", {
  data <- regimes(2000, 1)
  fit <- moe(y ~ x, data, k = 2, seed = 3)
  experts <- coef(fit)[grep("^expert", names(coef(fit)))]
  slopes <- sort(experts[grep(":x$", names(experts))])
  expect_equal(unname(slopes), c(-1, 2), tolerance = 0.05)
  expect_equal(unname(sort(coef(fit)[grep("^variance", names(coef(fit)))])), c(0.09, 0.09),
               tolerance = 0.2)
  expect_equal(nobs(fit), 2000)
  expect_equal(attr(logLik(fit), "df"), 2 + 2 * 2 + 2)
  expect_equal(AIC(fit), -2 * as.numeric(logLik(fit)) + 2 * 8)
  expect_length(fitted(fit), 2000)
  expect_equal(unname(residuals(fit)), unname(data$y - fitted(fit)))
  posterior <- predict(fit, data, type = "posterior")
  expect_equal(unname(rowSums(posterior)), rep(1, 2000))
  gate <- predict(fit, data.frame(x = c(-2, 2)), type = "gate")
  expect_true(all(gate > 0 & gate < 1))
})

test_that("summary carries standard errors from the library", {
  fit <- moe(y ~ x, regimes(1500, 2), k = 2, seed = 1)
  table <- summary(fit)$coefficients
  expect_equal(colnames(table), c("Estimate", "Std. Error", "z value", "Pr(>|z|)"))
  expect_true(all(is.finite(table[, "Std. Error"]) & table[, "Std. Error"] > 0))
  expect_equal(dim(vcov(fit)), c(8, 8))
  expect_output(print(summary(fit)), "Std. Error")
  expect_output(print(fit), "Gate")
})

# n times the Hessian of the fitters' penalty, built from include/moe/model.h's layout (the
# gate's K - 1 free rows, then the experts' rows, each row running over the inputs, intercept
# first; then the variances) independently of the library's own code for it.
penalty_hessian <- function(fit, N) {
  K <- fit$k
  inputs <- c("(Intercept)", colnames(fit$X))
  p <- length(inputs)
  slopes <- which(inputs != "(Intercept)")
  P <- length(coef(fit))
  H <- matrix(0, P, P, dimnames = list(names(coef(fit)), names(coef(fit))))
  gate <- fit$penalty[["gate_l2"]] * N * (diag(K - 1) - 1 / K)
  for (j in slopes) {
    at <- (seq_len(K - 1) - 1) * p + j
    expect_equal(names(coef(fit))[at], paste0("gate.expert", seq_len(K - 1), ":", inputs[j]))
    H[at, at] <- gate
  }
  experts <- (K - 1) * p + (rep(seq_len(K), each = length(slopes)) - 1) * p + slopes
  expect_true(all(grepl("^expert[0-9]+:", names(coef(fit))[experts])))
  H[cbind(experts, experts)] <- fit$penalty[["expert_ridge"]] * N
  H
}

three_regimes <- function(n, seed) {
  set.seed(seed)
  x <- runif(n, -3, 3)
  z <- rnorm(n)
  regime <- 1 + (x + 0.3 * rnorm(n) > -1) + (x + 0.3 * rnorm(n) > 1)
  y <- c(-2, 0, 3)[regime] + c(1, -1, 2)[regime] * x + 0.5 * z + rnorm(n, sd = 0.3)
  data.frame(x = x, z = z, y = y)
}

expect_penalised_information <- function(fit, N) {
  penalised <- vcov(fit)
  plain <- vcov(fit, penalized = FALSE)
  expect_true(all(diag(penalised) > 0))
  difference <- solve(penalised) - solve(plain)
  expect_lt(max(abs(difference - penalty_hessian(fit, N))), 1e-6 * max(abs(solve(plain))))
}

test_that("standard errors of a penalised fit come from the penalised information", {
  data <- three_regimes(2000, 12)
  fit <- moe(y ~ x + z, data, k = 3, seed = 1, gate_l2 = 0.05, expert_ridge = 0.1)
  expect_identical(fit$penalty, c(gate_l2 = 0.05, expert_ridge = 0.1))
  expect_penalised_information(fit, nrow(data))
  expect_equal(unname(summary(fit)$coefficients[, "Std. Error"]),
               unname(sqrt(diag(vcov(fit)))))
  expect_output(print(summary(fit)),
                "penalised information, gate_l2 = 0.05, expert_ridge = 0.1", fixed = TRUE)
  expect_output(print(fit), "Penalised fit (gate_l2 = 0.05, expert_ridge = 0.1)", fixed = TRUE)

  # One penalty alone, and weights: N is the total weight, not the number of rows.
  data <- regimes(800, 13)
  w <- rep(c(1, 3), 400)
  ridge <- moe(y ~ x + z, data, k = 2, seed = 1, weights = w, expert_ridge = 0.2)
  expect_identical(ridge$penalty, c(gate_l2 = 0, expert_ridge = 0.2))
  expect_penalised_information(ridge, sum(w))
  expect_output(print(summary(ridge)), "gate_l2 = 0, expert_ridge = 0.2", fixed = TRUE)
})

test_that("without a penalty vcov and summary are the likelihood's", {
  fit <- moe(y ~ x, regimes(1500, 2), k = 2, seed = 1)
  expect_identical(fit$penalty, c(gate_l2 = 0, expert_ridge = 0))
  expect_identical(vcov(fit), vcov(fit, penalized = FALSE))
  # A fit saved before the object kept its penalties.
  old <- fit
  old$penalty <- NULL
  expect_identical(vcov(old), vcov(fit))
  text <- capture.output(print(summary(fit)), print(fit))
  expect_true(any(grepl("standard errors from the observed information", text, fixed = TRUE)))
  expect_false(any(grepl("penalised", text, ignore.case = TRUE)))
  # Zero penalties passed by name are no penalty.
  zero <- moe(y ~ x, regimes(1500, 2), k = 2, seed = 1, gate_l2 = 0, expert_ridge = 0)
  expect_identical(vcov(zero), vcov(fit))
  expect_false(any(grepl("penalised", capture.output(print(summary(zero))))))
})

test_that("factors, missing values and weights follow lm's conventions", {
  data <- regimes(1200, 4)
  data$group <- factor(sample(c("a", "b", "c"), 1200, replace = TRUE))
  data$x[c(3, 10)] <- NA
  fit <- moe(y ~ x + group, data, k = 2, seed = 2)
  expect_true(any(grepl("groupb", names(coef(fit)))))
  expect_equal(nobs(fit), 1198)
  expect_length(fitted(fit), 1198)
  keep <- moe(y ~ x + group, data, k = 2, seed = 2, na.action = na.exclude)
  expect_length(fitted(keep), 1200)
  expect_true(is.na(fitted(keep)[3]))
  weighted <- moe(y ~ x, regimes(600, 5), k = 2, seed = 1, weights = rep(2, 600))
  plain <- moe(y ~ x, rbind(regimes(600, 5), regimes(600, 5)), k = 2, seed = 1)
  expect_equal(as.numeric(logLik(weighted)), as.numeric(logLik(plain)), tolerance = 1e-6)
})

test_that("classifiers take factors", {
  set.seed(7)
  data <- data.frame(x = rnorm(1500), w = rnorm(1500))
  data$label <- factor(ifelse(data$x + 0.3 * rnorm(1500) > 0, "yes", "no"))
  binary <- moe(label ~ x + w, data, k = 2, family = "binomial", seed = 1)
  p <- predict(binary, data)
  expect_true(mean((p > 0.5) == (data$label == "yes")) > 0.85)
  data$three <- cut(data$x + 0.2 * rnorm(1500), c(-Inf, -0.5, 0.5, Inf),
                    labels = c("low", "mid", "high"))
  multi <- moe(three ~ x, data, k = 2, family = "multinomial", seed = 1)
  probabilities <- predict(multi, data)
  expect_equal(colnames(probabilities), c("low", "mid", "high"))
  expect_equal(unname(rowSums(probabilities)), rep(1, 1500))
})

test_that("errors are R conditions with the library's message", {
  data <- regimes(300, 6)
  expect_error(moe(y ~ x, data, k = 2, no_such_option = 1), "no_such_option")
  expect_error(moe(y ~ x, data, k = 2, estimator = "nonsense"), "nonsense")
  expect_error(moe(y ~ x, data, k = 0), "^k must be a whole number")
  expect_error(moe(y ~ x, data, gate = "z"), "one-sided formula")
  expect_error(moe(y ~ x, data[1:3, ], k = 2), "libmoe")
  expect_error(moe(y ~ x, data, family = "binomial"), "binomial")
})

test_that("moe_select tabulates BIC over k", {
  table <- moe_select(y ~ x, regimes(1500, 8), k = 1:3, seed = 1)
  expect_equal(table$k, 1:3)
  expect_equal(which.min(table$BIC), 2)
})

test_that("the same fit as the moe tool of the same libmoe", {
  tool <- Sys.getenv("MOE_TOOL")
  skip_if(tool == "", "MOE_TOOL (the moe program of the same libmoe) is not set")
  data <- regimes(1000, 3)
  path <- tempfile(fileext = ".csv")
  write.csv(data[, c("x", "y")], path, row.names = FALSE)
  # The tool reads the file's decimal text; the fit here reads the same text back.
  data <- read.csv(path)
  out <- system2(tool, c("fit", path, "--response", "y", "-k", "2", "--seed", "5", "--json"),
                 stdout = TRUE)
  c_loglik <- as.numeric(sub(".*\"loglik\": *([-0-9.eE+]+).*", "\\1",
                             grep("\"loglik\"", out, value = TRUE)[1]))
  fit <- moe(y ~ x, data, k = 2, seed = 5)
  expect_equal(as.numeric(logLik(fit)), c_loglik, tolerance = 1e-12)
})

test_that("the best of flexmix's restarts is not better than libmoe's fit", {
  skip_if_not_installed("flexmix")
  data <- regimes(1000, 9)
  fit <- moe(y ~ x, data, k = 2, seed = 1, n_init = 10)
  set.seed(1)
  flex <- flexmix::stepFlexmix(y ~ x, data = data, k = 2, nrep = 5, verbose = FALSE,
                               concomitant = flexmix::FLXPmultinom(~ x),
                               control = list(tolerance = 1e-10, iter.max = 2000))
  # flexmix's gate M-step is an inexact multinom() fit, so its optimum sits slightly below
  # the exact one: libmoe must be at least as high, and at the same optimum.
  difference <- as.numeric(logLik(fit)) - flex@logLik
  message(sprintf("libmoe - flexmix log-likelihood: %.3g", difference))
  expect_gte(difference, -1e-4)
  expect_lt(difference, 1e-2)
})

test_that("an interrupt stops a fit and is signalled as an interrupt", {
  timeout <- Sys.which("timeout")
  skip_if(timeout == "", "no timeout program to send the interrupt")
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(libmoe)",
    "set.seed(1); n <- 200000",
    "data <- data.frame(a = rnorm(n), b = rnorm(n), c = rnorm(n), y = rnorm(n))",
    "result <- tryCatch(moe(y ~ a + b + c, data, k = 4, max_iter = 100000, tol = 0, n_init = 50),",
    "                   interrupt = function(e) 'interrupted')",
    "quit(status = if (identical(result, 'interrupted')) 3 else 0)"), script)
  # SIGINT after 4 s, a kill 60 s later if the fit ignores it.
  status <- system2(timeout, c("--preserve-status", "-k", "60", "-s", "INT", "4",
                               file.path(R.home("bin"), "Rscript"), script),
                    env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")),
                    stdout = FALSE, stderr = FALSE)
  expect_equal(status, 3)
})

test_that("print says how the start search's iterations and the final ones add up", {
  fit <- moe(y ~ x, regimes(600, 4), k = 2, seed = 1)
  expect_gt(fit$search_runs, 23)
  expect_gt(fit$search_iterations, fit$total_iterations)
  expect_output(print(fit),
                "iterations: [0-9]+ in the start search \\([0-9]+ EM runs\\), then [0-9]+ in the best restart")
  plain <- moe(y ~ x, regimes(600, 4), k = 2, seed = 1, init = "kmeans")
  expect_equal(plain$search_runs, 0)
  expect_output(print(plain), "iterations: [0-9]+ in the best restart")
})

test_that("a separated gate is said, with what its standard errors mean and the remedy", {
  for (k in 3:4) {
    expect_warning(fit <- moe(accel ~ times, mcycle, k = k, seed = 0),
                   "gate separates the rows.*gate_l2 = 1e-4")
    expect_true(fit$gate_separated)
    expect_lt(fit$gate_transition, 1e-3)
    expect_output(print(fit), "Warning: the gate separates the rows")
    expect_output(print(summary(fit)), "the gate's standard errors and p-values are not meaningful")
  }
  expect_silent(fit <- moe(accel ~ times, mcycle, k = 2, seed = 0))
  expect_false(fit$gate_separated)
  expect_silent(penalised <- moe(accel ~ times, mcycle, k = 3, seed = 0, gate_l2 = 1e-4))
  expect_false(penalised$gate_separated)
  expect_silent(ordinary <- moe(y ~ x, regimes(1500, 2), k = 2, seed = 1))
  expect_false(ordinary$gate_separated)
})

test_that("poisson experts: family = \"poisson\" and poisson() fit NPreg's counts as flexmix", {
  skip_if_not_installed("flexmix")
  data("NPreg", package = "flexmix", envir = environment())
  fit <- moe(yp ~ x, NPreg, k = 2, family = "poisson", seed = 1)
  expect_equal(fit$family, "poisson")
  # flexmix 2.3: stepFlexmix(yp ~ x, k = 2, FLXMRglm(family = "poisson"),
  # concomitant = FLXPmultinom(~ x), nrep = 10) reaches -440.5527454
  expect_gte(as.numeric(logLik(fit)), -440.5527454 - 1e-6)
  expect_equal(attr(logLik(fit), "df"), 6)
  # refit()'s standard errors of the experts (rising expert first) and the gate's slope
  se <- sqrt(diag(vcov(fit)))
  experts <- coef(fit)[grep("^expert", names(coef(fit)))]
  slopes <- experts[grep(":x$", names(experts))]
  rising <- sub(":x$", "", names(slopes)[which.max(slopes)])
  falling <- sub(":x$", "", names(slopes)[which.min(slopes)])
  ours <- se[c(paste0(rising, c(":(Intercept)", ":x")), paste0(falling, c(":(Intercept)", ":x")))]
  flexmix_se <- c(0.159750, 0.025856, 0.223487, 0.046644)
  expect_equal(unname(ours), flexmix_se, tolerance = 0.02)
  expect_true(all(predict(fit) > 0))
  same <- moe(yp ~ x, NPreg, k = 2, family = poisson(), seed = 1)
  expect_equal(logLik(same), logLik(fit))
  expect_error(moe(yp ~ x, NPreg, family = poisson(link = "identity")), "canonical")
  bad <- NPreg
  bad$yp[5] <- 2.5
  expect_error(moe(yp ~ x, bad, k = 2, family = "poisson"), "counts")
})

test_that("t experts: family = \"t\" recovers two slopes through 5% gross outliers", {
  set.seed(3)
  n <- 1000
  x <- runif(n, -2, 2)
  rising <- runif(n) < 1 / (1 + exp(-6 * x))
  y <- ifelse(rising, 2.5, -2.5) * x + rnorm(n, sd = 0.3)
  outliers <- seq_len(n) %% 20 == 7
  y[outliers] <- sample(c(-1, 1), sum(outliers), TRUE) * runif(sum(outliers), 20, 40)
  data <- data.frame(x = x, y = y)
  fit <- moe(y ~ x, data, k = 2, family = "t", seed = 1)
  expect_equal(fit$family, "t")
  estimates <- coef(fit)
  slopes <- sort(estimates[c("expert1:x", "expert2:x")])
  expect_equal(unname(slopes), c(-2.5, 2.5), tolerance = 0.2 / 2.5)
  expect_true(all(estimates[c("nu.expert1", "nu.expert2")] > 0))
  expect_output(print(fit), "Degrees of freedom")
  # Standard errors for every parameter, nu included (libmoe 1.1 derives its information).
  errors <- sqrt(diag(vcov(fit)))
  expect_equal(names(errors), names(estimates))
  expect_true(all(is.finite(errors) & errors > 0))
  expect_null(summary(fit)$note)
  held <- moe(y ~ x, data, k = 2, family = "t", seed = 1, update_degrees = 0)
  expect_equal(unname(coef(held)[c("nu.expert1", "nu.expert2")]), c(4, 4))
  # gem steps nu with the other parameters (libmoe 1.1); ismm still refuses t experts.
  gem <- moe(y ~ x, data, k = 2, family = "t", estimator = "gem", seed = 1)
  expect_equal(unname(sort(coef(gem)[c("expert1:x", "expert2:x")])), c(-2.5, 2.5),
               tolerance = 0.2 / 2.5)
  expect_error(moe(y ~ x, data, k = 2, family = "t", estimator = "ismm"), "t expert")
})
