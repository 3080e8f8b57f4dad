# Gamma experts (libmoe 1.2): moe(y ~ x, family = Gamma(link = "log")).

gamma_mixture <- function(n = 1500, seed = 3) {
  set.seed(seed)
  x <- runif(n, -2, 2)
  first <- runif(n) < plogis(2.5 * x)
  mean <- exp(ifelse(first, 1 + 0.6 * x, 2.5 - 0.4 * x))
  shape <- ifelse(first, 4, 10)
  data.frame(x = x, y = rgamma(n, shape = shape, rate = shape / mean))
}

test_that("Gamma(link = \"log\") experts: dgamma's log-likelihood, shapes, predictions", {
  data <- gamma_mixture()
  fit <- moe(y ~ x, data, family = Gamma(link = "log"), seed = 1)
  expect_equal(fit$family, "gamma")
  shapes <- coef(fit)[grepl("^shape", names(coef(fit)))]
  expect_equal(length(shapes), 2L)
  expect_equal(sort(unname(shapes)), c(4, 10), tolerance = 0.25)
  gate <- predict(fit, type = "gate")
  means <- sapply(1:2, function(k)
    exp(coef(fit)[paste0("expert", k, ":(Intercept)")] + coef(fit)[paste0("expert", k, ":x")] *
          data$x))
  density <- rowSums(gate * sapply(1:2, function(k)
    dgamma(data$y, shape = shapes[k], rate = shapes[k] / means[, k])))
  expect_equal(as.numeric(logLik(fit)), sum(log(density)), tolerance = 1e-8)
  expect_equal(unname(predict(fit)), unname(rowSums(gate * means)), tolerance = 1e-10)
  expect_equal(dim(vcov(fit)), c(8L, 8L))
  expect_error(moe(y ~ x, data, family = Gamma()), "Gamma\\(link = \"log\"\\)")
  data$y[3] <- -1
  expect_error(moe(y ~ x, data, family = "gamma"), "row 3")
})
