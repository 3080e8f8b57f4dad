# flexmix's default fit of a data set of the start benchmark: Gaussian
# regression experts on every covariate, the gate as a concomitant multinomial
# model on the same covariates, stepFlexmix with nrep = 3 (the best of three
# random-label starts). Prints "loglik VALUE".
#     Rscript flexmix.R DATA.csv K
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(flexmix))
frame <- read.csv(args[1])
K <- as.integer(args[2])
covariates <- setdiff(names(frame), "y")
formula <- as.formula(paste("y ~", paste(covariates, collapse = " + ")))
gate <- as.formula(paste("~", paste(covariates, collapse = " + ")))
set.seed(1)
fitted <- stepFlexmix(formula, data = frame, k = K, nrep = 3, verbose = FALSE,
                      model = FLXMRglm(family = "gaussian"),
                      concomitant = FLXPmultinom(gate))
cat(sprintf("loglik %.10f\n", as.numeric(logLik(fitted))))
