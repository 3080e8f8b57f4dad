# Standard errors of libmoe (the R package, moe_model_vcov) against flexmix's refit() on one
# synthetic data set: two Gaussian experts, a gate sloped in x. Both fits are maximum
# likelihood on the same rows; the script prints each parameter's estimates and standard
# errors side by side and their relative difference. flexmix's refit() has no standard
# errors for sigma, so the variances are not compared. Needs R, flexmix and the libmoe R
# package (bindings/r) installed; not run by CI.
#   Rscript bench/flexmix_standard_errors.R [n] [seed]
suppressPackageStartupMessages({ library(flexmix); library(libmoe) })
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.integer(args[1]) else 2000L
seed <- if (length(args) >= 2) as.integer(args[2]) else 1L
set.seed(seed)
x <- rnorm(n)
first <- runif(n) < plogis(0.3 + 2 * x)
y <- ifelse(first, 1 + 2 * x, -1 - x) + rnorm(n, sd = ifelse(first, 0.5, sqrt(0.5)))
data <- data.frame(x = x, y = y)

ours <- moe(y ~ x, data, k = 2, seed = 1, n_init = 10, tol = 1e-12, max_iter = 5000)
estimates <- coef(ours)
errors <- sqrt(diag(vcov(ours)))

flex <- stepFlexmix(y ~ x, data = data, k = 2, nrep = 5, verbose = FALSE,
                    concomitant = FLXPmultinom(~ x),
                    control = list(tolerance = 1e-12, iter.max = 5000))
refitted <- refit(flex)
invisible(capture.output({
  model_summary <- summary(refitted, which = "model")
  gate_summary <- summary(refitted, which = "concomitant")
}))
expert_tables <- lapply(1:2, function(k) model_summary@components[[1]][[k]])
gate_table <- gate_summary@concomitant[[1]]

# Match flexmix's components to ours by the slope.
our_slopes <- estimates[c("expert1:x", "expert2:x")]
flex_slopes <- sapply(expert_tables, function(t) t["x", 1])
order <- if (abs(our_slopes[1] - flex_slopes[1]) < abs(our_slopes[1] - flex_slopes[2])) 1:2 else 2:1

rows <- list()
add <- function(name, ours_estimate, ours_error, flex_estimate, flex_error) {
  rows[[length(rows) + 1]] <<- data.frame(parameter = name, libmoe = ours_estimate,
    flexmix = flex_estimate, se_libmoe = ours_error, se_flexmix = flex_error,
    relative = ours_error / flex_error - 1)
}
for (k in 1:2) {
  table <- expert_tables[[order[k]]]
  for (term in c("(Intercept)", "x")) {
    name <- paste0("expert", k, ":", term)
    add(name, estimates[[name]], errors[[name]], table[term, 1], table[term, 2])
  }
}
# flexmix's gate: component 1 is the reference and the row shown is component 2 against it;
# ours has the last expert as reference. With our expert k matched to flexmix's order[k]:
sign <- if (identical(order, 1:2)) -1 else 1
for (term in c("(Intercept)", "x")) {
  name <- paste0("gate.expert1:", term)
  add(name, estimates[[name]], errors[[name]], sign * gate_table[term, 1], gate_table[term, 2])
}
result <- do.call(rbind, rows)
cat(sprintf("n = %d, seed = %d; log-likelihood libmoe %.6f, flexmix %.6f\n", n, seed,
            as.numeric(logLik(ours)), flex@logLik))
print(result, digits = 5, row.names = FALSE)
cat(sprintf("largest relative difference of standard errors: %.4f\n", max(abs(result$relative))))
