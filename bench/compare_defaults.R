# compare_defaults.R: flexmix with its defaults, the R side of bench/compare_defaults.
#
#   Rscript compare_defaults.R DATA.csv K SEED
#
# stepFlexmix(y ~ all covariates, k = K, nrep = 3) with Gaussian regression
# components (FLXMRglm) and the gate as a multinomial concomitant model on the
# same covariates (FLXPmultinom), flexmix's default control (tolerance, iteration
# limit, minimum prior). Prints "flexmix seconds=S loglik=L components=k" where S
# is the elapsed time of the stepFlexmix call alone (reading the CSV excluded).
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages(library(flexmix))
frame <- read.csv(args[1])
K <- as.integer(args[2])
set.seed(as.integer(args[3]))
covariates <- setdiff(names(frame), "y")
formula <- as.formula(paste("y ~", paste(covariates, collapse = " + ")))
gate <- as.formula(paste("~", paste(covariates, collapse = " + ")))
started <- proc.time()[["elapsed"]]
fitted <- stepFlexmix(formula, data = frame, k = K, nrep = 3, verbose = FALSE,
                      model = FLXMRglm(family = "gaussian"),
                      concomitant = FLXPmultinom(gate))
seconds <- proc.time()[["elapsed"]] - started
cat(sprintf("flexmix seconds=%.3f loglik=%.10f components=%d\n", seconds,
            as.numeric(logLik(fitted)), fitted@k))
