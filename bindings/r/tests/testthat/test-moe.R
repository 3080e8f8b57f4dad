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

# The criteria computed here from each fit's log-likelihood and parameter count, and the
# posterior's entropy (moe/model.h's definitions), not from moe_select's own code.
criteria_of <- function(fit) {
  ll <- fit$loglik
  P <- length(coef(fit))
  n <- nobs(fit)
  r <- predict(fit, type = "posterior")
  entropy <- -sum(r[r > 0] * log(r[r > 0]))
  c(AIC = -2 * ll + 2 * P, BIC = -2 * ll + P * log(n),
    ICL = -2 * ll + P * log(n) + 2 * entropy)
}

test_that("moe_select has the AIC, BIC and ICL of moe select and marks the best", {
  data <- regimes(600, 9)
  table <- moe_select(y ~ x, data, k = 1:3, seed = 1)
  expected <- t(sapply(1:3, function(k) criteria_of(moe(y ~ x, data, k = k, seed = 1))))
  expect_equal(as.matrix(table[, c("AIC", "BIC", "ICL")]), expected, ignore_attr = TRUE)
  expect_equal(table$best, seq_len(3) == which.min(expected[, "BIC"]))
  expect_equal(attr(table, "criterion"), "bic")
  # The printed table: the columns, and the marker on the best row alone.
  text <- capture.output(print(table))
  expect_match(text[1], "^ *k +loglik +df +AIC +BIC +ICL +converged *$")
  marked <- grep("\\*$", text[2:4])
  expect_equal(marked, which.min(expected[, "BIC"]))
  expect_equal(text[5], paste0("best by bic: k = ", which.min(expected[, "BIC"])))
  # Another criterion moves the marker to its own minimum.
  for (criterion in c("aic", "icl")) {
    chosen <- moe_select(y ~ x, data, k = 1:3, seed = 1, criterion = criterion)
    column <- expected[, toupper(criterion)]
    expect_equal(which(chosen$best), which.min(column))
    expect_match(capture.output(print(chosen))[1 + which.min(column)], "\\*$")
  }
  expect_error(moe_select(y ~ x, data, k = 1:2, criterion = "loglik"), "should be one of")
})

test_that("moe_select marks no row when every fit fails", {
  data <- regimes(600, 9)
  table <- moe_select(y ~ x, data, k = 1:2, seed = 1, max_iter = -1)
  expect_false(any(table$best))
  expect_true(all(is.na(table$BIC)))
  expect_output(print(table), "best by bic: none")
})

test_that("print names the estimator plainly", {
  fit <- moe(y ~ x, regimes(500, 10), k = 2, seed = 1)
  text <- capture.output(print(fit))
  expect_equal(text[1], "Mixture of 2 gaussian experts fitted by libmoe")
  expect_equal(text[2], "estimator: em")
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

test_that("moe_select's criteria and best are those of moe select", {
  tool <- Sys.getenv("MOE_TOOL")
  skip_if(tool == "", "MOE_TOOL (the moe program of the same libmoe) is not set")
  data <- regimes(600, 11)
  path <- tempfile(fileext = ".csv")
  on.exit(unlink(path))
  write.csv(data[, c("x", "y")], path, row.names = FALSE)
  data <- read.csv(path)
  out <- system2(tool, c("select", path, "--response", "y", "-k", "1:3", "--seed", "1",
                         "--criterion", "icl", "--json"), stdout = TRUE)
  out <- paste(out, collapse = " ")
  # Every value of a key in the JSON, in order (one per K; "best" once).
  number <- function(key) {
    found <- regmatches(out, gregexpr(paste0("\"", key, "\": *[-0-9.eE+]+"), out))[[1]]
    as.numeric(sub(".*: *", "", found))
  }
  table <- moe_select(y ~ x, data, k = 1:3, seed = 1, criterion = "icl")
  expect_equal(table$AIC, number("aic"), tolerance = 1e-9)
  expect_equal(table$BIC, number("bic"), tolerance = 1e-9)
  expect_equal(table$ICL, number("icl"), tolerance = 1e-9)
  expect_equal(table$k[table$best], number("best"))
})

test_that("gate = ~ 1 is flexmix's constant mixing weights, at flexmix's optimum", {
  skip_if_not_installed("flexmix")
  # Poisson experts: flexmix's M-step for them is an exact weighted glm fit (its Gaussian
  # one estimates sigma with a degrees-of-freedom correction, so not at the likelihood's
  # maximum).
  set.seed(12)
  x <- runif(800, -1, 1)
  first <- runif(800) < 0.4
  data <- data.frame(x = x, y = rpois(800, exp(ifelse(first, 2 + x, 0.5 - 0.5 * x))))
  fit <- moe(y ~ x, data, k = 2, family = "poisson", seed = 1, gate = ~ 1, tol = 1e-10,
             max_iter = 5000)
  # The gate sees no covariate: every row has the same weights.
  gate <- predict(fit, type = "gate")
  expect_equal(unname(apply(gate, 2, sd)), c(0, 0), tolerance = 1e-12)
  # flexmix(y ~ x) fits the same model (its default concomitant model is constant); started
  # from libmoe's clusters and run to a tight tolerance, it stops at the same optimum.
  flex <- flexmix::flexmix(y ~ x, data = data, cluster = predict(fit, type = "cluster"),
                           model = flexmix::FLXMRglm(family = "poisson"),
                           control = list(tolerance = 1e-12, iter.max = 5000))
  expect_equal(attr(logLik(fit), "df"), flex@df)
  expect_equal(as.numeric(logLik(fit)), flex@logLik, tolerance = 1e-9)
  expect_equal(sort(unname(gate[1, ])), sort(unname(flex@prior)), tolerance = 1e-4)
  # The default gate sees x as well: another model, with one more parameter.
  default <- moe(y ~ x, data, k = 2, family = "poisson", seed = 1)
  expect_equal(attr(logLik(default), "df"), attr(logLik(fit), "df") + 1)
  expect_gt(max(apply(predict(default, type = "gate"), 2, sd)), 1e-3)
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
