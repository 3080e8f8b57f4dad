# families.R: the R side of bench/families/compare.sh (binomial and Gamma experts).
#
#   Rscript families.R betablocker OUT.csv   flexmix's betablocker as numbers (treated 0/1),
#                                            and flexmix's best of 20 at K = 2 and 3
#   Rscript families.R gamma OUT.csv         a generated Gamma mixture with the gate on x
#                                            (n = 1000, seed 2026), flexmix's best of 20
#                                            and the direct maximum likelihood
#
# Result lines ("K=2 flexmix_best=..." and "direct_ml=...") go to stdout.
suppressMessages(library(flexmix))
args <- commandArgs(trailingOnly = TRUE)

best_of <- function(fit_one, runs = 20) {
  values <- vapply(seq_len(runs), function(seed) {
    set.seed(seed)
    fit <- tryCatch(fit_one(), error = function(e) NULL)
    if (is.null(fit)) NA_real_ else fit
  }, numeric(1))
  max(values, na.rm = TRUE)
}

if (args[1] == "betablocker") {
  data(betablocker)
  write.csv(data.frame(deaths = betablocker$Deaths, total = betablocker$Total,
                       treated = as.integer(betablocker$Treatment == "Treated")),
            args[2], row.names = FALSE)
  for (k in 2:3) {
    best <- best_of(function() {
      fit <- flexmix(cbind(Deaths, Total - Deaths) ~ Treatment, data = betablocker, k = k,
                     model = FLXMRglm(family = "binomial"),
                     control = list(tolerance = 1e-10, iter.max = 5000))
      if (fit@k < k) NA_real_ else fit@logLik
    })
    cat(sprintf("K=%d flexmix_best=%.6f\n", k, best))
  }
} else if (args[1] == "gamma") {
  set.seed(2026)
  n <- 1000
  x <- runif(n, -2, 2)
  first <- runif(n) < plogis(2.5 * x)
  mean <- exp(ifelse(first, 1 + 0.6 * x, 2.5 - 0.4 * x))
  shape <- ifelse(first, 4, 10)
  y <- rgamma(n, shape = shape, rate = shape / mean)
  data <- data.frame(x = x, y = y)
  write.csv(data, args[2], row.names = FALSE)
  # the mixture's log-likelihood at theta = (gate a, b; expert 1 c, d; expert 2 c, d;
  # log shape 1, 2), gate P(expert 1 | x) = plogis(a + b x)
  loglik <- function(theta) {
    p <- plogis(theta[1] + theta[2] * x)
    a1 <- exp(theta[7]); a2 <- exp(theta[8])
    f1 <- dgamma(y, shape = a1, rate = a1 / exp(theta[3] + theta[4] * x))
    f2 <- dgamma(y, shape = a2, rate = a2 / exp(theta[5] + theta[6] * x))
    sum(log(p * f1 + (1 - p) * f2))
  }
  best <- best_of(function() {
    fit <- flexmix(y ~ x, data = data, k = 2, model = FLXMRglm(family = "Gamma"),
                   concomitant = FLXPmultinom(~ x),
                   control = list(tolerance = 1e-10, iter.max = 5000))
    if (fit@k < 2) NA_real_ else fit@logLik
  })
  cat(sprintf("flexmix_best=%.6f\n", best))
  # direct maximisation (BFGS, then Nelder-Mead polish) from 20 random starts and the truth
  starts <- c(list(c(0, 2.5, 1, 0.6, 2.5, -0.4, log(4), log(10))),
              lapply(1:20, function(s) { set.seed(100 + s); c(rnorm(2), rnorm(4, 1.5, 1),
                                                                  rnorm(2, 1, 0.5)) }))
  values <- vapply(starts, function(start) {
    fit <- tryCatch(optim(start, loglik, method = "BFGS",
                          control = list(fnscale = -1, maxit = 5000, reltol = 1e-14)),
                    error = function(e) NULL)
    if (is.null(fit) || !is.finite(fit$value)) NA_real_ else fit$value
  }, numeric(1))
  cat(sprintf("direct_ml=%.6f (best of %d BFGS runs, truth start %.6f)\n",
              max(values, na.rm = TRUE), sum(is.finite(values)), values[1]))
}
