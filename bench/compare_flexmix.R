# compare_flexmix.R: the R side of bench/compare_flexmix.
#
#   Rscript compare_flexmix.R --data data.csv --k K [--restarts R] [--tol T]
#                             [--iter-max M] [--seed S]
#       Fits flexmix: K Gaussian linear-regression components
#       (FLXMRglm, y on all covariates with an intercept) with a multinomial
#       logit concomitant model on all covariates (FLXPmultinom(~ x1 + ... + xD)),
#       control tolerance T (default 1e-8) and iter.max M (default 10000),
#       R restarts (default 3) from flexmix's default random initial
#       partition, seeds S + 1, ..., S + R; the restart with the best
#       log-likelihood is kept (what stepFlexmix(nrep = R) does). Prints
#
#         flexmix seconds=... loglik=... iterations=... total_iterations=...
#                 restarts=R converged=0|1 components=k
#
#       seconds is the elapsed time of all R flexmix() calls (the CSV is read
#       before the clock starts); iterations are those of the best restart.
#
#   Rscript compare_flexmix.R --mixtools --data data.csv [--tol T]
#                             [--iter-max M] [--seed S]
#       mixtools::hmeEM(y, x, k = 2, epsilon = T, maxit = M) on a CSV with one
#       covariate: a two-expert hierarchical mixture of linear regressions
#       (intercept + slope on x) with a logistic gate on [1, x]. hmeEM has no
#       restarts of its own (it restarts only after a numerical failure).
#       Prints
#
#         mixtools seconds=... loglik=... iterations=... internal_restarts=...
#
# Details (parameters, versions) go to stderr; the result line to stdout.

suppressPackageStartupMessages({
  library(flexmix)
})

args <- commandArgs(trailingOnly = TRUE)
opt <- list(data = NULL, k = NA_integer_, restarts = 3L, tol = 1e-8,
            iter.max = 10000L, seed = 1L, mixtools = FALSE)
i <- 1L
while (i <= length(args)) {
  a <- args[[i]]
  if (a == "--mixtools") {
    opt$mixtools <- TRUE
    i <- i + 1L
    next
  }
  if (i == length(args)) stop("option ", a, " needs a value")
  v <- args[[i + 1L]]
  switch(a,
         "--data" = opt$data <- v,
         "--k" = opt$k <- as.integer(v),
         "--restarts" = opt$restarts <- as.integer(v),
         "--tol" = opt$tol <- as.numeric(v),
         "--iter-max" = opt$iter.max <- as.integer(v),
         "--seed" = opt$seed <- as.integer(v),
         stop("unknown option ", a))
  i <- i + 2L
}
if (is.null(opt$data)) stop("--data is required")

df <- read.csv(opt$data)
if (!"y" %in% names(df)) stop("the CSV has no column y")
xnames <- setdiff(names(df), "y")
if (length(xnames) < 1) stop("the CSV has no covariates")

say <- function(...) cat(..., "\n", sep = "", file = stderr())
say(R.version.string, "; flexmix ", as.character(packageVersion("flexmix")),
    "; BLAS ", if (!is.null(extSoftVersion()["BLAS"])) extSoftVersion()["BLAS"] else "?",
    "; OPENBLAS_NUM_THREADS=", Sys.getenv("OPENBLAS_NUM_THREADS", "unset"))

if (!opt$mixtools) {
  if (is.na(opt$k) || opt$k < 1) stop("--k (>= 1) is required")
  K <- opt$k
  model_formula <- as.formula(paste("y ~", paste(xnames, collapse = " + ")))
  gate_formula <- as.formula(paste("~", paste(xnames, collapse = " + ")))
  control <- list(tolerance = opt$tol, iter.max = opt$iter.max)

  best <- NULL
  total_iterations <- 0L
  failures <- 0L
  start <- proc.time()[["elapsed"]]
  for (r in seq_len(opt$restarts)) {
    set.seed(opt$seed + r)
    fit <- tryCatch(
      flexmix(model_formula, data = df, k = K,
              model = FLXMRglm(family = "gaussian"),
              concomitant = FLXPmultinom(gate_formula),
              control = control),
      error = function(e) {
        say("flexmix restart ", r, " failed: ", conditionMessage(e))
        NULL
      })
    if (is.null(fit)) {
      failures <- failures + 1L
      next
    }
    total_iterations <- total_iterations + fit@iter
    say("flexmix restart ", r, ": logLik=", format(fit@logLik, digits = 15),
        " iterations=", fit@iter, " converged=", fit@converged, " components=", fit@k)
    # A restart that lost components (prior below minprior) fits a smaller
    # model: only take it if no full-size restart exists.
    better <- is.null(best) ||
      (fit@k == K && best@k != K) ||
      (fit@k == best@k && fit@logLik > best@logLik)
    if (better) best <- fit
  }
  seconds <- proc.time()[["elapsed"]] - start
  if (is.null(best)) {
    say("flexmix: every restart failed")
    quit(status = 1)
  }
  if (best@k != K) say("flexmix: WARNING: no restart kept all ", K, " components")
  say("flexmix best: df=", best@df, " (free parameters), BIC=", format(BIC(best), digits = 12))
  say("flexmix expert parameters (one column per component: coef, sigma):")
  capture.output(print(parameters(best)), file = stderr())
  say("flexmix concomitant (gate) coefficients, first component the reference:")
  capture.output(print(parameters(best, which = "concomitant")), file = stderr())
  cat(sprintf(paste0("flexmix seconds=%.6f loglik=%.10f iterations=%d total_iterations=%d ",
                     "restarts=%d converged=%d components=%d failed_restarts=%d\n"),
              seconds, best@logLik, best@iter, total_iterations, opt$restarts,
              as.integer(best@converged), best@k, failures))
} else {
  suppressPackageStartupMessages(library(mixtools))
  say("mixtools ", as.character(packageVersion("mixtools")))
  if (length(xnames) != 1) stop("hmeEM handles exactly one covariate; the CSV has ",
                                length(xnames))
  x <- df[[xnames[1]]]
  y <- df$y
  set.seed(opt$seed)
  printed <- NULL
  start <- proc.time()[["elapsed"]]
  printed <- capture.output(
    fit <- hmeEM(y, x, k = 2, epsilon = opt$tol, maxit = opt$iter.max))
  seconds <- proc.time()[["elapsed"]] - start
  if (length(printed)) say("hmeEM printed: ", paste(printed, collapse = " | "))
  iterations <- length(fit$all.loglik) - 1L
  say("mixtools beta (columns = experts: intercept, slope):")
  capture.output(print(fit$beta), file = stderr())
  say("mixtools sigma: ", paste(format(fit$sigma, digits = 6), collapse = ", "),
      "; gate w (logit of expert 1 on [1, x]): ", paste(format(fit$w, digits = 6),
                                                         collapse = ", "))
  cat(sprintf("mixtools seconds=%.6f loglik=%.10f iterations=%d internal_restarts=%d converged=%d\n",
              seconds, fit$loglik, iterations, as.integer(fit$restarts),
              as.integer(iterations < opt$iter.max)))
}
