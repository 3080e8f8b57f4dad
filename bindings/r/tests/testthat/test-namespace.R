# The package must find every stats function it calls through its own NAMESPACE imports,
# not on the search path: Rscript --default-packages=base,methods (or a script run with
# R_DEFAULT_PACKAGES=NULL) does not attach stats, and moe(..., gate = ) and offsets once
# failed there with "could not find function" (issue 42). A test run always has stats
# attached, so the fits are made in a fresh R without it.

test_that("gate = and offsets work when stats is not attached", {
  rscript <- file.path(R.home("bin"), "Rscript")
  skip_if_not(file.exists(rscript), "no Rscript beside this R")
  set.seed(42)
  n <- 400
  x <- runif(n, -1, 1)
  z <- runif(n, -1, 1)
  exposure <- runif(n, 0.5, 3)
  counts <- rpois(n, exposure * exp(ifelse(z > 0, 1 + 0.5 * x, -0.5 * x)))
  data <- data.frame(x = x, z = z, exposure = exposure, counts = counts)
  files <- tempfile(c("data", "script", "fits", "output"), fileext = c(".rds", ".R", ".rds", ".txt"))
  on.exit(unlink(files))
  saveRDS(data, files[1])
  # In the child: the stats functions it needs itself by stats::, and of stats only offset
  # attached, since an offset() term is evaluated in the formula's environment (as glm's
  # is); model.offset, reformulate and the rest must come from libmoe's imports.
  writeLines(c(
    "if (\"package:stats\" %in% search()) stop(\"stats is attached: the test proves nothing\")",
    "library(libmoe)",
    sprintf("data <- readRDS(%s)", deparse(files[1])),
    "fits <- list(",
    "  gate = moe(counts ~ x, data, family = \"poisson\", gate = ~ z, seed = 1),",
    "  argument = moe(counts ~ x, data, family = \"poisson\", offset = log(exposure), seed = 1))",
    "library(stats, include.only = \"offset\")",
    "fits$term <- moe(counts ~ x + offset(log(exposure)), data, family = \"poisson\", seed = 1)",
    sprintf("saveRDS(lapply(fits, function(fit) fit$loglik), %s)", deparse(files[3]))),
    files[2])
  status <- system2(rscript, c("--vanilla", "--default-packages=base,methods", files[2]),
                    stdout = files[4], stderr = files[4],
                    env = paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = ":"))))
  output <- paste(readLines(files[4]), collapse = "\n")
  expect_equal(status, 0L, info = output)
  expect_true(file.exists(files[3]), info = output)
  if (!file.exists(files[3])) return()
  # The same fits as with stats attached.
  logliks <- readRDS(files[3])
  expect_equal(logliks$gate,
               moe(counts ~ x, data, family = "poisson", gate = ~ z, seed = 1)$loglik)
  expect_equal(logliks$argument,
               moe(counts ~ x, data, family = "poisson", offset = log(exposure), seed = 1)$loglik)
  expect_equal(logliks$term, logliks$argument)
})
