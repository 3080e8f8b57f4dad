# Mixtures of experts through the installed libmoe. The fitted model lives in the library's
# buffer format (object$model, a raw vector); everything else is computed from it on demand.

# R calls the two-class family by glm's name; the library calls it logistic, and its
# binomial the experts of successes out of trials (glm's cbind(successes, failures)
# response, libmoe 1.2). The other names are the library's own (moe_family_from_name reads
# them in the C glue).
.library_family <- function(family, trials = FALSE) {
  if (family == "binomial" && !trials) "logistic" else family
}

# glm's binomial response of two columns, successes and failures: the successes as y and
# their sum, the trials, as the design's last column, which neither part sees (the spec's
# trials_feature). NULL for any other response.
.trials_response <- function(response, family) {
  if (family != "binomial" || !is.matrix(response) || ncol(response) != 2) return(NULL)
  if (!is.numeric(response))
    stop("family binomial with cbind(successes, failures) needs numeric counts", call. = FALSE)
  list(y = as.double(response[, 1]), trials = as.double(response[, 1] + response[, 2]))
}

# The inputs list with the trials column (the design's last, 0-based index `column`) held
# out of both parts.
.with_trials <- function(inputs, column, intercept) {
  if (is.null(inputs))
    inputs <- list(rep(1L, column + 1L), rep(1L, column + 1L), TRUE, TRUE, -1L)
  inputs[[1]][column + 1L] <- 0L
  inputs[[2]][column + 1L] <- 0L
  c(inputs[1:5], list(column))
}

# The library's built-in estimators (moe_estimator_name, moe_estimator_description), in its
# order.
moe_estimators <- function() {
  estimators <- .Call(C_libmoe_estimators)
  data.frame(name = estimators$name, description = estimators$description,
             stringsAsFactors = FALSE)
}

# Every option an estimator takes, as the library lists them (moe_fitter_option_info).
moe_options <- function(estimator = "em") {
  if (!is.character(estimator) || length(estimator) != 1 || is.na(estimator))
    stop("estimator must be one string", call. = FALSE)
  known <- moe_estimators()$name
  if (!estimator %in% known)
    stop("unknown estimator '", estimator, "': the library has ",
         paste(known, collapse = ", "), call. = FALSE)
  as.data.frame(.Call(C_libmoe_options, estimator), stringsAsFactors = FALSE)
}

# Scalar arguments are checked here, before .Call: the C side would take the first of
# several values, read NA as a number (NA_integer_ is INT_MIN, a size_t near 2^64) and
# truncate 2.7 to 2. Messages start with the argument's name.
.one_value <- function(name, value) {
  if (length(value) != 1)
    stop(name, " takes one value, got ", length(value), call. = FALSE)
  if (is.na(value)) stop(name, " is NA", call. = FALSE)
}

.whole_number <- function(name, value, lower, upper = .Machine$integer.max) {
  .one_value(name, value)
  if (!is.numeric(value) || !is.finite(value) || value != round(value) || value < lower ||
      value > upper)
    stop(sprintf("%s must be a whole number in [%.0f, %.0f], got %s", name, lower, upper,
                 format(value)), call. = FALSE)
  value
}

# Integral values print without a fraction so that integer options accept them.
.decimal <- function(value) {
  if (value == round(value) && abs(value) < 2^53) sprintf("%.0f", value)
  else sprintf("%.17g", value)
}

# The bounds of an option as c(lower, upper, is_integer, lower_open, upper_open): the chosen
# estimator's (moe_options), else those of the first estimator that takes the name (so that a
# bad value of another estimator's option is still refused as a value), else NULL.
.option_bounds <- function(name, estimator) {
  own <- moe_options(estimator)
  row <- own[own$name == name, ]
  if (nrow(row) == 1)
    return(c(row$lower, row$upper, if (row$type == "real") 0 else 1,
             as.numeric(row$lower_open), as.numeric(row$upper_open)))
  .Call(C_libmoe_option_bounds, name)
}

# One option's text, checked against the bounds the library lists for it
# (moe_fitter_option_info); a name no estimator takes must be one finite value.
.option_text <- function(name, value, estimator = "em") {
  if (!is.numeric(value) && !is.logical(value) && !is.character(value))
    stop("option ", name, " takes a number, a logical or a string, got ", class(value)[1],
         call. = FALSE)
  .one_value(name, value)
  if (is.character(value)) return(value)
  if (is.logical(value)) return(if (value) "1" else "0")
  bounds <- .option_bounds(name, estimator)
  if (is.null(bounds)) {
    if (!is.finite(value)) stop(name, " must be a finite number, got ", value, call. = FALSE)
    return(.decimal(value))
  }
  if (bounds[3] == 1) return(.decimal(.whole_number(name, value, bounds[1], bounds[2])))
  below <- if (bounds[4] == 1) value <= bounds[1] else value < bounds[1]
  above <- if (bounds[5] == 1) value >= bounds[2] else value > bounds[2]
  if (!is.finite(value) || below || above)
    stop(sprintf("%s must be a number in %s%g, %g%s, got %s", name,
                 if (bounds[4] == 1) "(" else "[", bounds[1], bounds[2],
                 if (bounds[5] == 1) ")" else "]", format(value)), call. = FALSE)
  .decimal(value)
}

# Every per-row array against X's rows, and X's columns against the model's features: the
# library takes their lengths from X alone. The C glue checks again.
.check_rows <- function(X, y, weights, n_features) {
  n <- nrow(X)
  if (ncol(X) != n_features)
    stop(sprintf("X has %d columns, the model %d", ncol(X), n_features), call. = FALSE)
  for (name in c("y", "weights")) {
    values <- if (name == "y") y else weights
    if (!is.null(values) && length(values) != n)
      stop(sprintf("%s has %d values for %d rows of X: it needs one value per row", name,
                   length(values), n), call. = FALSE)
  }
}

.n_features <- function(object) .Call(C_libmoe_n_features, object$model)

# A library message about one row of X (moe/common.h: "row I: ", "row I, column J: ",
# "row I, response: ", "row I, weight: ", counting from 0; the C glue puts "libmoe what: "
# before it) in R's terms: the data's row, counted from 1, and X's column by name.
# model.matrix keeps the data's row names, so a row that subset or na.action left out of X
# does not shift the rows after it.
.name_rows <- function(message, X) {
  parts <- regmatches(message, regexec("^(libmoe [^:]*: )?row ([0-9]+)(, column ([0-9]+))?([,:].*)$",
                                       message))[[1]]
  if (!length(parts)) return(message)
  i <- as.numeric(parts[3]) + 1
  names <- rownames(X)
  row <- if (is.null(names) || i > length(names)) format(i) else names[i]
  # A number is the row's place only in data with automatic row names: a subset's keep
  # their old numbers (df[df$g == 1, ] has row "57" at place 12), so those are names.
  positions <- !identical(attr(X, "row_positions"), FALSE)
  row <- if (positions && grepl("^[0-9]+$", row)) paste0("row ", row, " (counting from 1)") else
    paste0("row \"", row, "\"")
  if (nzchar(parts[4])) {
    j <- as.numeric(parts[5]) + 1
    row <- paste0(row, ", column ", if (j <= ncol(X)) paste0("'", colnames(X)[j], "'") else j)
  }
  paste0(parts[2], row, parts[6])
}

# Whether data's rows are numbered by place (automatic row names, or not a data frame).
.automatic_rows <- function(data) !is.data.frame(data) || .row_names_info(data) < 0L

# Evaluate a call of the library on X, its errors' rows named as .name_rows does, and a
# message about the whole response ("the response is constant ...") naming it.
.naming_rows <- function(X, expr, response = NULL) {
  tryCatch(expr, error = function(e) {
    message <- .name_rows(conditionMessage(e), X)
    if (!is.null(response))
      message <- sub("^(libmoe [^:]*: )?the response is constant",
                     paste0("\\1the response, ", gsub("\\", "\\\\", response, fixed = TRUE),
                            ", is constant"), message)
    stop(message, call. = FALSE)
  })
}

.response_codes <- function(y, family) {
  if (family == "gamma") {
    if (!is.numeric(y)) stop("family gamma needs a numeric response above 0")
    return(list(y = as.double(y), levels = NULL))
  }
  if (family == "t") {
    if (!is.numeric(y)) stop("family t needs a numeric response")
    return(list(y = as.double(y), levels = NULL))
  }
  if (family == "poisson") {
    if (!is.numeric(y)) stop("family poisson needs a numeric response of counts 0, 1, 2, ...")
    return(list(y = as.double(y), levels = NULL))
  }
  if (family == "gaussian") {
    if (!is.numeric(y)) stop("family gaussian needs a numeric response")
    return(list(y = as.double(y), levels = NULL))
  }
  if (family == "binomial" && (is.numeric(y) || is.logical(y))) {
    y <- as.double(y)
    if (any(y != 0 & y != 1)) stop("family binomial needs a 0/1, logical or two-level factor response")
    return(list(y = y, levels = c("0", "1")))
  }
  y <- as.factor(y)
  if (family == "binomial" && nlevels(y) != 2)
    stop("family binomial needs two classes; use family = \"multinomial\" for more")
  if (nlevels(y) < 2) stop("the response has fewer than two classes")
  list(y = as.double(as.integer(y) - 1L), levels = levels(y))
}

.design <- function(terms, frame, contrasts = NULL) {
  X <- model.matrix(terms, frame, contrasts)
  # The library adds the intercept itself (to the gate too), so the column is dropped here.
  keep <- colnames(X) != "(Intercept)"
  contrasts <- attr(X, "contrasts")
  X <- X[, keep, drop = FALSE]
  # An offset term (offset(log(t))) is the last column, which the experts take with
  # coefficient 1 (the spec's offset_feature); predict recomputes it from newdata.
  offset <- model.offset(frame)
  if (!is.null(offset)) X <- cbind(X, "(offset)" = as.double(offset))
  list(X = X, contrasts = contrasts, intercept = attr(terms, "intercept") == 1L,
       offset = !is.null(offset))
}

# The formula whose right-hand side holds the expert formula's terms and the gate's (the
# design is their union; each part then sees its own columns).
.union_formula <- function(formula, gate) {
  if (!inherits(gate, "formula") || length(gate) != 2)
    stop("gate must be a one-sided formula, such as gate = ~ z", call. = FALSE)
  if (!is.null(attr(terms(gate), "offset")))
    stop("the gate takes no offset: put offset() terms in the experts' formula", call. = FALSE)
  expert_terms <- terms(formula)
  variables <- as.list(attr(expert_terms, "variables"))[-1]
  offsets <- vapply(variables[attr(expert_terms, "offset")],
                    function(term) paste(deparse(term), collapse = " "), character(1))
  # Always with an intercept, so that factors are coded alike in the union and in each part
  # that has one; the parts' own intercepts go to the spec.
  labels <- unique(c(attr(expert_terms, "term.labels"), attr(terms(gate), "term.labels"),
                     offsets))
  if (!length(labels)) labels <- "1"
  reformulate(labels, response = formula[[2]], intercept = TRUE,
              env = environment(formula))
}

# The columns of X (the union design) each part sees, as the library's spec takes them:
# NULL when the gate is not given and there is no offset (every input, as before 1.1).
.part_inputs <- function(formula, gate, frame, design, contrasts) {
  if (is.null(gate) && !design$offset) return(NULL)
  columns <- colnames(design$X)
  part_columns <- function(part) {
    part_terms <- terms(part, data = frame)
    X <- model.matrix(part_terms, frame, contrasts)
    unknown <- setdiff(colnames(X), c(columns, "(Intercept)"))
    if (length(unknown))
      stop("libmoe: cannot place the columns ", paste(unknown, collapse = ", "),
           " of ", deparse(part), " in the design", call. = FALSE)
    list(features = as.integer(columns %in% colnames(X)),
         intercept = attr(part_terms, "intercept") == 1L)
  }
  experts <- part_columns(formula)
  gates <- if (is.null(gate)) experts else part_columns(gate)
  if (design$offset) gates$features[length(columns)] <- 0L
  offset <- if (design$offset) length(columns) - 1L else -1L
  # The model has an intercept when either part sees one; the flags say which.
  intercept <- experts$intercept || gates$intercept
  list(intercept = intercept,
       spec = list(gates$features, experts$features, gates$intercept || !intercept,
                   experts$intercept || !intercept, offset))
}


# A family object (poisson(), binomial(), gaussian()) or its function, as glm takes them, to
# the name: only the links libmoe fits (log for Poisson, logit, identity).
.family_name <- function(family) {
  if (is.function(family)) family <- family()
  if (!inherits(family, "family")) return(family)
  links <- c(gaussian = "identity", binomial = "logit", poisson = "log", Gamma = "log")
  if (!family$family %in% names(links) || family$link != links[[family$family]])
    stop("family ", family$family, "(link = \"", family$link, "\") is not one libmoe fits: ",
         "gaussian(), binomial() or poisson() with their canonical links, or ",
         "Gamma(link = \"log\")", call. = FALSE)
  if (family$family == "Gamma") "gamma" else family$family
}

moe <- function(formula, data, k = 2,
                family = c("gaussian", "binomial", "multinomial", "poisson", "t", "gamma"),
                estimator = "em", weights, subset, na.action, offset, contrasts = NULL,
                gate = NULL, seed = NULL, ...) {
  family <- match.arg(.family_name(family),
                      c("gaussian", "binomial", "multinomial", "poisson", "t", "gamma"))
  k <- as.integer(.whole_number("k", k, 1))
  if (!is.character(estimator) || length(estimator) != 1 || is.na(estimator))
    stop("estimator must be one string, such as \"em\"", call. = FALSE)
  known <- moe_estimators()$name
  if (!estimator %in% known)
    stop("estimator \"", estimator, "\" is not one of libmoe's: ", paste(known, collapse = ", "),
         " (moe_estimators() describes them)", call. = FALSE)
  call <- match.call()
  frame_call <- match.call(expand.dots = FALSE)
  # offset = as glm takes it: model.frame keeps it as "(offset)", evaluated in data, and
  # model.offset (.design) adds it to the formula's offset() terms.
  keep <- match(c("formula", "data", "subset", "weights", "na.action", "offset"),
                names(frame_call), 0L)
  frame_call <- frame_call[c(1L, keep)]
  frame_call$drop.unused.levels <- TRUE
  frame_call[[1L]] <- quote(stats::model.frame)
  # With its own gate formula, the frame holds the union of the two formulas' variables.
  if (!is.null(gate)) frame_call$formula <- .union_formula(formula, gate)
  frame <- eval(frame_call, parent.frame())
  mt <- attr(frame, "terms")
  design <- .design(mt, frame, contrasts)
  attr(design$X, "row_positions") <- missing(data) || .automatic_rows(data)
  inputs <- .part_inputs(formula, gate, frame, design, contrasts)
  if (!is.null(inputs)) {
    design$intercept <- inputs$intercept
    inputs <- inputs$spec
  }
  counts <- .trials_response(model.response(frame), family)
  if (is.null(counts)) {
    response <- .response_codes(model.response(frame), family)
  } else {
    response <- list(y = counts$y, levels = NULL)
    design$X <- cbind(design$X, "(trials)" = counts$trials)
    inputs <- .with_trials(inputs, ncol(design$X) - 1L, design$intercept)
  }
  w <- model.weights(frame)
  if (!is.null(w)) w <- as.double(w)
  n_classes <- if (family == "multinomial") length(response$levels) else 0L
  options <- list(...)
  if (!is.null(seed)) options$seed <- seed
  if (length(options) && (is.null(names(options)) || any(names(options) == "")))
    stop("fitter options must be named, as in max_iter = 500")
  option_values <- vapply(names(options),
                          function(name) .option_text(name, options[[name]], estimator),
                          character(1))
  .check_rows(design$X, response$y, w, ncol(design$X))
  fit <- .naming_rows(design$X,
                      .Call(C_libmoe_fit, .library_family(family, !is.null(counts)), k,
                            design$X, response$y, w,
                            design$intercept, as.integer(n_classes), estimator,
                            as.character(names(options)), unname(option_values), inputs),
                      response = paste(deparse(formula[[2]]), collapse = " "))
  if (is.character(fit))
    stop(structure(class = c("interrupt", "condition"),
                   list(message = paste("libmoe:", fit), call = call)))
  object <- list(model = fit$model, loglik = fit$loglik, iterations = fit$iterations,
                 converged = fit$converged, penalty = fit$penalty,
                 total_iterations = fit$total_iterations, search_runs = fit$search_runs,
                 search_iterations = fit$search_iterations,
                 gate_separated = fit$gate_separated, gate_transition = fit$gate_transition,
                 call = call, terms = mt,
                 family = family, k = k, estimator = estimator, X = design$X, y = response$y,
                 weights = w, levels = response$levels, intercept = design$intercept,
                 trials = !is.null(counts),
                 contrasts = design$contrasts, xlevels = .getXlevels(mt, frame),
                 na.action = attr(frame, "na.action"))
  class(object) <- "moe"
  if (isTRUE(object$gate_separated))
    warning(.separation_text(object), call. = FALSE)
  object
}

# What a separated gate means and what to do (moe/fitter.h, MOE_WARNING_GATE_SEPARATED).
.separation_text <- function(object) {
  paste0("the gate separates the rows (its smallest transition holds ",
         format(object$gate_transition, digits = 2), " rows): its maximum likelihood lies ",
         "at infinity, so its coefficients are where the iterations stopped and their ",
         "standard errors and p-values are not meaningful (the likelihood is flat towards ",
         "infinity); the experts and the gate's borders are still estimated. For a finite ",
         "gate, refit with a gate penalty: moe(..., gate_l2 = 1e-4)")
}

# The iterations: the start search's (default init = mixed) apart from the best restart's.
.iterations_text <- function(x) {
  final <- paste0(x$iterations, " in the best restart")
  if (is.null(x$search_runs) || x$search_runs == 0) return(final)
  paste0(x$search_iterations, " in the start search (", x$search_runs, " EM runs), then ",
         final)
}

.parameters <- function(object) {
  parameters <- .Call(C_libmoe_parameters, object$model)
  inputs <- c(if (object$intercept) "(Intercept)", colnames(object$X))
  colnames(parameters[[1]]) <- inputs
  colnames(parameters[[2]]) <- inputs
  rownames(parameters[[1]]) <- paste0("expert", seq_len(object$k))
  rows <- nrow(parameters[[2]]) / object$k
  rownames(parameters[[2]]) <- if (rows == 1) paste0("expert", seq_len(object$k)) else
    paste0("expert", rep(seq_len(object$k), each = rows), ":", object$levels)
  names(parameters) <- c("gate", "experts", "variances", "degrees")
  # What each input is to the gate and to the experts (libmoe 1.1): 0 held at zero, 1
  # estimated, 2 the experts' offset (held at one).
  roles <- .Call(C_libmoe_inputs, object$model)
  parameters$gate_roles <- setNames(roles[[1]], inputs)
  parameters$expert_roles <- setNames(roles[[2]], inputs)
  parameters
}

# A coefficient matrix for printing: held coefficients as "-", the offset's as "offset".
.held_as_text <- function(values, roles) {
  text <- format(values, digits = getOption("digits") - 2)
  text[, roles == 0] <- "-"
  text[, roles == 2] <- "offset"
  text[, roles == 3] <- "trials"
  noquote(text)
}

# In the order of the library's covariance: the gate's free rows, the experts' free rows,
# then the variances.

coef.moe <- function(object, ...) {
  parameters <- .parameters(object)
  K <- object$k
  # Only what is estimated: the inputs each part sees (the library's covariance layout).
  gate <- parameters$gate[-K, parameters$gate_roles == 1, drop = FALSE]
  values <- as.vector(t(gate))
  names <- if (K > 1) as.vector(outer(colnames(gate), rownames(gate),
                                      function(j, r) paste0("gate.", r, ":", j))) else character(0)
  experts <- parameters$experts[, parameters$expert_roles == 1, drop = FALSE]
  if (object$family == "multinomial") {
    C <- length(object$levels)
    experts <- experts[-seq(C, K * C, by = C), , drop = FALSE]
  }
  values <- c(values, as.vector(t(experts)))
  names <- c(names, as.vector(outer(colnames(experts), rownames(experts),
                                    function(j, r) paste0(r, ":", j))))
  if (object$family == "gaussian") {
    values <- c(values, parameters$variances)
    names <- c(names, paste0("variance.expert", seq_len(K)))
  }
  if (object$family == "t") {
    values <- c(values, parameters$variances, parameters$degrees)
    names <- c(names, paste0("scale2.expert", seq_len(K)), paste0("nu.expert", seq_len(K)))
  }
  if (object$family == "gamma") {
    values <- c(values, parameters$degrees)
    names <- c(names, paste0("shape.expert", seq_len(K)))
  }
  setNames(values, names)
}


# Objects saved before the fit kept its penalties have no $penalty: they count as unpenalised,
# which is what their vcov reported then.
.penalty <- function(object) {
  if (is.null(object$penalty)) c(gate_l2 = 0, expert_ridge = 0) else object$penalty
}

.penalty_text <- function(penalty) {
  paste0("gate_l2 = ", format(penalty[["gate_l2"]], digits = 6), ", expert_ridge = ",
         format(penalty[["expert_ridge"]], digits = 6))
}


vcov.moe <- function(object, penalized = TRUE, ...) {
  penalty <- if (isTRUE(penalized)) .penalty(object) else c(gate_l2 = 0, expert_ridge = 0)
  .check_rows(object$X, object$y, object$weights, .n_features(object))
  result <- .naming_rows(object$X, .Call(C_libmoe_vcov, object$model, object$X, object$y,
                                          object$weights, as.double(penalty)))
  if (is.character(result)) stop("no covariance: ", .name_rows(result, object$X))
  dimnames(result) <- list(names(coef(object)), names(coef(object)))
  result
}


logLik.moe <- function(object, ...) {
  P <- length(coef(object))
  structure(object$loglik, df = P, nobs = nobs(object), class = "logLik")
}


nobs.moe <- function(object, ...) {
  if (is.null(object$weights)) length(object$y) else sum(object$weights > 0)
}

.newdata_design <- function(object, newdata) {
  if (missing(newdata) || is.null(newdata)) return(list(X = object$X, y = object$y))
  mt <- delete.response(object$terms)
  frame <- model.frame(mt, newdata, na.action = na.pass, xlev = object$xlevels)
  # As predict.glm: the offset = argument is evaluated again in newdata (the formula's
  # environment behind it), and added to the offset() terms by model.offset.
  if (!is.null(object$call$offset)) {
    offset <- eval(object$call$offset, newdata, environment(object$terms))
    if (length(offset) != nrow(frame))
      stop(sprintf("the offset (%s) has %d values in newdata's %d rows: give newdata the ",
                   deparse(object$call$offset), length(offset), nrow(frame)),
           "variables it is computed from", call. = FALSE)
    frame[["(offset)"]] <- as.double(offset)
  }
  X <- .design(mt, frame, object$contrasts)$X
  y <- NULL
  if (isTRUE(object$trials)) {
    # The trials from newdata's successes and failures when it has them (a posterior needs
    # them); else 1, which the probabilities do not depend on.
    counts <- tryCatch(.trials_response(model.response(model.frame(object$terms, newdata,
                                                                   na.action = na.pass)),
                                        "binomial"),
                       error = function(e) NULL)
    X <- cbind(X, "(trials)" = if (is.null(counts)) 1 else counts$trials)
    attr(X, "row_positions") <- .automatic_rows(newdata)
    return(list(X = X, y = if (!is.null(counts)) counts$y))
  }
  attr(X, "row_positions") <- .automatic_rows(newdata)
  response <- all.vars(object$terms)[1]
  if (response %in% names(newdata)) {
    values <- newdata[[response]]
    if (!is.null(object$levels) && !is.numeric(values)) {
      values <- match(as.character(values), object$levels) - 1
    }
    y <- as.double(values)
  }
  list(X = X, y = y)
}


predict.moe <- function(object, newdata,
                        type = c("response", "gate", "posterior", "class", "cluster"), ...) {
  type <- match.arg(type)
  design <- .newdata_design(object, newdata)
  if (type == "posterior" && is.null(design$y))
    stop("type = \"posterior\" needs the response in newdata")
  .check_rows(design$X, if (type %in% c("posterior", "cluster")) design$y, NULL,
              .n_features(object))
  # Hard assignments by the library's rules (moe_model_classify, moe_model_cluster), which
  # break ties the same way in every binding; classify refuses Gaussian experts itself.
  if (type == "class") {
    classes <- .naming_rows(design$X, .Call(C_libmoe_assign, object$model, design$X, NULL, 0L))
    return(factor(object$levels[classes], levels = object$levels))
  }
  if (type == "cluster")
    return(.naming_rows(design$X, .Call(C_libmoe_assign, object$model, design$X, design$y, 1L)))
  what <- match(type, c("response", "gate", "posterior")) - 1L
  out <- .naming_rows(design$X, .Call(C_libmoe_predict, object$model, design$X, design$y, what))
  if (type == "response") {
    if (object$family == "multinomial") {
      colnames(out) <- object$levels
      return(out)
    }
    return(drop(out))
  }
  colnames(out) <- paste0("expert", seq_len(object$k))
  out
}


fitted.moe <- function(object, ...) {
  napredict(object$na.action, predict(object))
}


residuals.moe <- function(object, ...) {
  if (object$family == "multinomial") stop("residuals are not defined for multinomial experts")
  naresid(object$na.action, object$y - predict(object))
}


print.moe <- function(x, ...) {
  cat("Mixture of ", x$k, " ", x$family, " experts fitted by libmoe\nestimator: ", x$estimator,
      "\n", sep = "")
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  parameters <- .parameters(x)
  held <- any(parameters$gate_roles != 1) || any(parameters$expert_roles != 1)
  cat("Experts:\n")
  print(.held_as_text(parameters$experts, parameters$expert_roles))
  if (length(parameters$variances)) {
    cat(if (x$family == "t") "\nSquared scales:\n" else "\nVariances:\n")
    print(setNames(parameters$variances, paste0("expert", seq_len(x$k))))
  }
  if (length(parameters$degrees)) {
    cat(if (x$family == "gamma") "\nShapes:\n" else "\nDegrees of freedom (nu):\n")
    print(setNames(parameters$degrees, paste0("expert", seq_len(x$k))))
  }
  cat("\nGate (softmax; the last expert is the reference):\n")
  print(.held_as_text(parameters$gate, parameters$gate_roles))
  if (held)
    cat("(-: an input the part does not see, held at 0",
        if (any(parameters$expert_roles == 2)) "; offset: coefficient fixed at 1", ")\n",
        sep = "")
  ll <- logLik(x)
  cat("\nlog-likelihood ", format(as.numeric(ll), digits = 8), " (df = ", attr(ll, "df"),
      "), BIC ", format(BIC(ll), digits = 8), "\niterations: ", .iterations_text(x),
      if (!x$converged) " (not converged)", "\n", sep = "")
  if (isTRUE(x$gate_separated)) cat("\nWarning: ", .separation_text(x), "\n", sep = "")
  if (any(.penalty(x) != 0))
    cat("Penalised fit (", .penalty_text(.penalty(x)), "): the log-likelihood is the ",
        "likelihood's alone;\nvcov and summary use the penalised information\n", sep = "")
  invisible(x)
}


summary.moe <- function(object, ...) {
  estimates <- coef(object)
  covariance <- tryCatch(vcov(object), error = function(e) conditionMessage(e))
  if (is.character(covariance)) {
    errors <- rep(NA_real_, length(estimates))
    note <- covariance
  } else {
    errors <- sqrt(diag(covariance))
    note <- NULL
  }
  z <- estimates / errors
  table <- cbind(Estimate = estimates, `Std. Error` = errors, `z value` = z,
                 `Pr(>|z|)` = 2 * pnorm(-abs(z)))
  penalty <- .penalty(object)
  structure(list(call = object$call, coefficients = table, note = note,
                 loglik = logLik(object), family = object$family, k = object$k,
                 penalty = if (any(penalty != 0)) penalty,
                 gate_separated = isTRUE(object$gate_separated),
                 separation = if (isTRUE(object$gate_separated)) .separation_text(object)),
            class = "summary.moe")
}


print.summary.moe <- function(x, ...) {
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  if (is.null(x$penalty)) {
    cat("Coefficients (standard errors from the observed information):\n")
  } else {
    cat("Coefficients (standard errors from the penalised information, ",
        .penalty_text(x$penalty), "):\n", sep = "")
  }
  printCoefmat(x$coefficients, ...)
  if (isTRUE(x$gate_separated))
    cat("\nWarning: the gate's standard errors and p-values are not meaningful: ",
        x$separation, "\n", sep = "")
  if (!is.null(x$note)) cat("\nNo standard errors: ", x$note, "\n", sep = "")
  cat("\nlog-likelihood ", format(as.numeric(x$loglik), digits = 8), " (df = ",
      attr(x$loglik, "df"), "), AIC ", format(AIC(x$loglik), digits = 8), ", BIC ",
      format(BIC(x$loglik), digits = 8), "\n", sep = "")
  invisible(x)
}


plot.moe <- function(x, ...) {
  if (!x$family %in% c("gaussian", "poisson", "t", "gamma")) {
    posterior <- predict(x, type = "gate")
    matplot(posterior, type = "p", pch = 20, xlab = "row", ylab = "gate probability",
                      ...)
    return(invisible(x))
  }
  expert <- predict(x, type = "cluster")
  plot(predict(x), x$y, col = expert, pch = 20, xlab = "fitted", ylab = "response", ...)
  abline(0, 1, lty = 2)
  legend("topleft", legend = paste("expert", seq_len(x$k)), col = seq_len(x$k), pch = 20,
         bty = "n")
  invisible(x)
}


# ICL as the library defines it (moe/model.h, moe_model_criteria; `moe select` prints it):
# BIC plus twice the entropy of the posterior, -sum_i w_i sum_k r_ik log r_ik.
.icl <- function(fit) {
  posterior <- predict(fit, type = "posterior")
  terms <- ifelse(posterior > 0, posterior * log(posterior), 0)
  w <- if (is.null(fit$weights)) 1 else fit$weights
  BIC(logLik(fit)) - 2 * sum(w * rowSums(terms))
}

# The table of `moe select`: log-likelihood, AIC, BIC and ICL for each number of experts,
# the best by the criterion marked.
moe_select <- function(formula, data, k = 1:5, criterion = c("bic", "aic", "icl"), ...) {
  criterion <- match.arg(criterion)
  rows <- lapply(k, function(experts) {
    fit <- tryCatch(moe(formula, data, k = experts, ...), error = function(e) e)
    if (inherits(fit, "error"))
      return(data.frame(k = experts, loglik = NA_real_, df = NA_integer_, AIC = NA_real_,
                        BIC = NA_real_, ICL = NA_real_, converged = NA,
                        message = conditionMessage(fit), stringsAsFactors = FALSE))
    ll <- logLik(fit)
    data.frame(k = experts, loglik = as.numeric(ll), df = attr(ll, "df"), AIC = AIC(ll),
               BIC = BIC(ll), ICL = .icl(fit), converged = fit$converged, message = "",
               stringsAsFactors = FALSE)
  })
  table <- do.call(rbind, rows)
  # The smallest finite value of the criterion, as the tool chooses (a failed fit is NA).
  values <- table[[toupper(criterion)]]
  best <- if (any(is.finite(values))) which.min(replace(values, !is.finite(values), Inf))
  table$best <- seq_len(nrow(table)) %in% best
  attr(table, "criterion") <- criterion
  class(table) <- c("moe_select", "data.frame")
  table
}

print.moe_select <- function(x, ...) {
  # A table cut down by `[` keeps the class but may lose the marker or the criterion.
  if (is.null(x$best) || is.null(attr(x, "criterion"))) return(NextMethod())
  shown <- as.data.frame(unclass(x), stringsAsFactors = FALSE)
  shown$best <- ifelse(shown$best, "*", "")
  names(shown)[names(shown) == "best"] <- " "
  if (all(shown$message == "")) shown$message <- NULL
  print(shown, row.names = FALSE, ...)
  best <- x$k[x$best]
  cat("best by ", attr(x, "criterion"), ": ",
      if (length(best)) paste0("k = ", best) else "none (no fit succeeded)", "\n", sep = "")
  invisible(x)
}


libmoe_version <- function() .Call(C_libmoe_version)
