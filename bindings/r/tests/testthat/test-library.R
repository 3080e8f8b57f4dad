# What the package takes from the installed library instead of knowing it itself (issue 26).

labelled <- function(n, seed) {
  set.seed(seed)
  data <- data.frame(x = rnorm(n), w = rnorm(n))
  data$label <- factor(ifelse(data$x + 0.3 * rnorm(n) > 0, "yes", "no"))
  data$three <- cut(data$x + 0.2 * rnorm(n), c(-Inf, -0.5, 0.5, Inf),
                    labels = c("low", "mid", "high"))
  data
}

test_that("moe_estimators lists the library's estimators, and moe takes exactly those", {
  estimators <- moe_estimators()
  expect_s3_class(estimators, "data.frame")
  expect_identical(names(estimators), c("name", "description"))
  # include/moe/fitter.h: the 1.0 estimators come first in this order; later ones append.
  expect_identical(head(estimators$name, 6), c("em", "gem", "gd", "cqt", "ismm", "ot"))
  expect_true(all(nzchar(estimators$description) & !grepl("\n", estimators$description)))
  expect_false(anyDuplicated(estimators$name) > 0)
  set.seed(31)
  x <- runif(400, -2, 2)
  data <- data.frame(x = x, y = ifelse(runif(400) < plogis(x), 2 * x, -x) +
                       rnorm(400, sd = 0.3))
  text <- tryCatch(moe(y ~ x, data, estimator = "nonsense"), error = conditionMessage)
  expect_identical(text, paste0("estimator \"nonsense\" is not one of libmoe's: ",
                                paste(estimators$name, collapse = ", "),
                                " (moe_estimators() describes them)"))
  for (name in c("em", "gem", "gd")) {
    fit <- moe(y ~ x, data, k = 2, seed = 1, estimator = name, n_init = 1, max_iter = 5)
    expect_identical(fit$estimator, name)
  }
})

test_that("the C glue reads the family by the library's names", {
  data <- labelled(300, 32)
  X <- cbind(x = data$x)
  glue <- getNativeSymbolInfo("libmoe_fit", "libmoe")
  fit <- .Call(glue, "logistic", 2L, X, as.double(data$label == "yes"), NULL, TRUE, 0L, "em",
               "seed", "1", NULL)
  expect_type(fit$model, "raw")
  expect_error(.Call(glue, "weibull", 2L, X, data$x, NULL, TRUE, 0L, "em", character(0),
                     character(0), NULL),
               "unknown family \"weibull\"", fixed = TRUE)
  # poisson (libmoe 1.1) is a family the glue reads: the library then judges the counts
  expect_error(.Call(glue, "poisson", 2L, X, data$x, NULL, TRUE, 0L, "em", character(0),
                     character(0), NULL),
               "poisson experts need counts", fixed = TRUE)
  expect_error(.Call(glue, 1L, 2L, X, data$x, NULL, TRUE, 0L, "em", character(0),
                     character(0), NULL),
               "the family must be one string")
})

test_that("class predictions are the most probable class, by the library's rule", {
  data <- labelled(1500, 33)
  multi <- moe(three ~ x, data, k = 2, family = "multinomial", seed = 1)
  classes <- predict(multi, type = "class")
  probabilities <- predict(multi)
  expect_s3_class(classes, "factor")
  expect_identical(levels(classes), c("low", "mid", "high"))
  expect_identical(as.integer(classes), max.col(probabilities, ties.method = "first"))
  fresh <- labelled(50, 34)
  expect_identical(as.integer(predict(multi, fresh, type = "class")),
                   max.col(predict(multi, fresh), ties.method = "first"))
  binary <- moe(label ~ x + w, data, k = 2, family = "binomial", seed = 1)
  expect_identical(predict(binary, type = "class"),
                   factor(ifelse(predict(binary) > 0.5, "yes", "no"), levels = c("no", "yes")))
  numeric <- moe(as.integer(label == "yes") ~ x, data, k = 2, family = "binomial", seed = 1)
  expect_identical(levels(predict(numeric, type = "class")), c("0", "1"))
  gaussian <- moe(x ~ w, data, k = 1)
  expect_error(predict(gaussian, type = "class"), "libmoe classify: .*classification family")
})

test_that("cluster predictions are the expert of largest posterior, or gate without y", {
  set.seed(35)
  x <- runif(800, -2, 2)
  data <- data.frame(x = x, y = ifelse(runif(800) < plogis(3 * x), 2 * x + 1, -x - 1) +
                       rnorm(800, sd = 0.3))
  fit <- moe(y ~ x, data, k = 3, seed = 1)
  clusters <- predict(fit, type = "cluster")
  expect_type(clusters, "integer")
  expect_identical(clusters, max.col(predict(fit, data, type = "posterior"),
                                     ties.method = "first"))
  expect_identical(predict(fit, data, type = "cluster"), clusters)
  fresh <- data.frame(x = seq(-2, 2, length.out = 41))
  expect_identical(predict(fit, fresh, type = "cluster"),
                   max.col(predict(fit, fresh, type = "gate"), ties.method = "first"))
  expect_true(all(clusters %in% seq_len(3)))
})

test_that("moe_options lists an estimator's options as the library does", {
  ot <- moe_options("ot")
  expect_true(all(c("name", "type", "default", "lower", "upper", "keywords",
                    "description", "pinned") %in% names(ot)))
  shards <- ot[ot$name == "shards", ]
  expect_equal(shards$type, "integer")
  expect_equal(shards$default, "4")
  expect_equal(shards$lower, 1)
  expect_false(shards$pinned)
  expect_equal(ot$keywords[ot$name == "reduction"], "transport|middle|average")
  expect_true(ot$pinned[ot$name == "tol"])
  expect_false("optimizer" %in% ot$name)
  decay <- moe_options("ismm")[moe_options("ismm")$name == "step_decay", ]
  expect_true(decay$lower_open)
  for (name in moe_estimators()$name) expect_gt(nrow(moe_options(name)), 0)
  expect_error(moe_options("nope"), "unknown estimator 'nope'")
})
