/*
 * .Call glue between R and the installed libmoe. Models cross the boundary as the library's
 * own buffer format (a raw vector), so an R object holds no pointer that a saved workspace
 * could leave dangling. Every error frees the handles first and then raises an R condition
 * with the library's message.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#include <moe/moe.h>

#define MESSAGE_SIZE 1024

static void fail(const char *what, moe_status status, const char *message)
{
    char text[MESSAGE_SIZE];
    /* Copied before the caller's handles go away: the message may live inside them. */
    snprintf(text, sizeof text, "%s", (message && message[0]) ? message : moe_strerror(status));
    Rf_error("libmoe %s: %s", what, text);
}

/* R matrices are column-major; libmoe reads rows. One copy, in R's memory (freed by R). */
static double *rows_of(SEXP matrix, size_t *n, size_t *d)
{
    SEXP dims = Rf_getAttrib(matrix, R_DimSymbol);
    if (!Rf_isReal(matrix) || Rf_length(dims) != 2)
        Rf_error("libmoe: X must be a numeric matrix");
    *n = (size_t)INTEGER(dims)[0];
    *d = (size_t)INTEGER(dims)[1];
    double *out = (double *)R_alloc(*n * (*d > 0 ? *d : 1), sizeof(double));
    const double *column_major = REAL(matrix);
    for (size_t i = 0; i < *n; i++)
        for (size_t j = 0; j < *d; j++)
            out[i * *d + j] = column_major[j * *n + i];
    return out;
}

static const double *optional_vector(SEXP vector, size_t n, const char *name)
{
    if (Rf_isNull(vector))
        return NULL;
    if (!Rf_isReal(vector) || (size_t)XLENGTH(vector) != n)
        Rf_error("libmoe: %s must be a numeric vector of one value per row", name);
    return REAL(vector);
}

static moe_model_t *model_of(SEXP raw)
{
    if (TYPEOF(raw) != RAWSXP)
        Rf_error("libmoe: the model must be a raw vector written by libmoe");
    moe_model_t *model = NULL;
    moe_status status = moe_model_load_buffer(&model, RAW(raw), (size_t)XLENGTH(raw));
    if (status != MOE_OK)
        fail("model", status, moe_last_error());
    return model;
}

/* X's columns against the model's features: with more columns the library would read the
 * first ones of each row as if they were the model's (ldx is X's width), silently. */
static void check_columns(moe_model_t *model, size_t d)
{
    size_t features = moe_model_n_features(model);
    if (d != features) {
        moe_model_free(model);
        Rf_error("libmoe: X has %zu columns, the model %zu", d, features);
    }
}

/* One non-NA whole number >= lower, as R's .Call passes it after the R side's checks; NA
 * otherwise. Rf_asInteger would take the first of several values and truncate 2.5. */
static int whole_number(SEXP value, int lower)
{
    if (XLENGTH(value) != 1 || (!Rf_isInteger(value) && !Rf_isReal(value)))
        return NA_INTEGER;
    double number = Rf_asReal(value);
    if (ISNAN(number) || number < lower || number > INT_MAX || number != floor(number))
        return NA_INTEGER;
    return (int)number;
}

static SEXP raw_of(moe_model_t *model)
{
    size_t size = 0;
    moe_status status = moe_model_save_buffer(model, NULL, 0, &size);
    if (status != MOE_OK && status != MOE_ERR_BUFFER_TOO_SMALL) {
        moe_model_free(model);
        fail("save", status, moe_last_error());
    }
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)size));
    status = moe_model_save_buffer(model, RAW(out), size, &size);
    if (status != MOE_OK) {
        moe_model_free(model);
        fail("save", status, moe_last_error());
    }
    UNPROTECT(1);
    return out;
}

static void check_interrupt(void *unused)
{
    (void)unused;
    R_CheckUserInterrupt();
}

/* Ctrl-C cannot longjmp through the library: look for it here, where R may run, and ask
 * the fit to stop; the caller raises the interrupt once the library has returned. */
static int progress(const moe_progress *state, void *interrupted)
{
    (void)state;
    if (!R_ToplevelExec(check_interrupt, NULL)) {
        *(int *)interrupted = 1;
        return 1;
    }
    return 0;
}

/* d bytes from an integer vector of 0/1 of length d (R_alloc'ed), or NULL for R's NULL. */
static const unsigned char *feature_mask(SEXP values, size_t d, const char *name)
{
    if (Rf_isNull(values))
        return NULL;
    if (!Rf_isInteger(values) || (size_t)XLENGTH(values) != d)
        Rf_error("libmoe: %s must be an integer vector of one 0 or 1 per column of X", name);
    unsigned char *mask = (unsigned char *)R_alloc(d > 0 ? d : 1, 1);
    for (size_t j = 0; j < d; j++)
        mask[j] = INTEGER(values)[j] != 0;
    return mask;
}

/* The inputs the gate and the experts see (moe_model_spec version 2), from R's list(gate,
 * experts, gate_intercept, expert_intercept, offset[, trials]) or NULL (every input); the
 * binomial experts' trials column needs spec version 3 (libmoe 1.2). */
static void spec_inputs(SEXP inputs, size_t d, moe_model_spec *spec)
{
    if (Rf_isNull(inputs))
        return;
    if (TYPEOF(inputs) != VECSXP || (XLENGTH(inputs) != 5 && XLENGTH(inputs) != 6))
        Rf_error("libmoe: inputs must be list(gate, experts, gate_intercept, "
                 "expert_intercept, offset[, trials])");
    if (XLENGTH(inputs) == 6) {
        int trials = whole_number(VECTOR_ELT(inputs, 5), -1);
        if (trials == NA_INTEGER || spec->version < 3)
            Rf_error("libmoe: the trials must be a column index or -1, and need libmoe 1.2");
        spec->trials_feature = trials;
    }
    spec->gate_features = feature_mask(VECTOR_ELT(inputs, 0), d, "the gate's features");
    spec->expert_features = feature_mask(VECTOR_ELT(inputs, 1), d, "the experts' features");
    int gate_intercept = Rf_asLogical(VECTOR_ELT(inputs, 2));
    int expert_intercept = Rf_asLogical(VECTOR_ELT(inputs, 3));
    int offset = whole_number(VECTOR_ELT(inputs, 4), -1);
    if (gate_intercept == NA_LOGICAL || expert_intercept == NA_LOGICAL || offset == NA_INTEGER)
        Rf_error("libmoe: the intercept flags must be TRUE or FALSE and the offset a column "
                 "index or -1");
    spec->gate_intercept = gate_intercept;
    spec->expert_intercept = expert_intercept;
    spec->offset_feature = offset;
}

/* The model to fit: the spec's defaults from the library (moe_model_spec_init), the family
 * from its name as the library spells it (moe_family_from_name), and the inputs each part
 * sees. */
static moe_model_t *new_model(SEXP family, int experts, size_t d, int intercept, int classes,
                              SEXP inputs)
{
    if (!Rf_isString(family) || XLENGTH(family) != 1 || STRING_ELT(family, 0) == NA_STRING)
        Rf_error("libmoe: the family must be one string");
    moe_model_spec spec;
    moe_status status = moe_model_spec_init(&spec, MOE_MODEL_SPEC_VERSION);
    if (status == MOE_OK)
        status = moe_family_from_name(CHAR(STRING_ELT(family, 0)), &spec.family);
    if (status != MOE_OK)
        fail("model", status, moe_last_error());
    spec.n_experts = (size_t)experts;
    spec.n_features = d;
    spec.intercept = intercept;
    spec.n_classes = (size_t)classes;
    spec_inputs(inputs, d, &spec);
    moe_model_t *model = NULL;
    status = moe_model_create(&model, &spec);
    if (status != MOE_OK)
        fail("model", status, moe_last_error());
    return model;
}

/* The fitter for the estimator, with the options set; on an error the model is freed. */
static moe_fitter_t *new_fitter(moe_model_t *model, SEXP estimator, SEXP option_names,
                                SEXP option_values)
{
    moe_fitter_t *fitter = NULL;
    moe_status status = moe_fitter_create(&fitter, CHAR(STRING_ELT(estimator, 0)));
    if (status != MOE_OK) {
        moe_model_free(model);
        fail("estimator", status, moe_last_error());
    }
    for (R_xlen_t i = 0; i < XLENGTH(option_names); i++) {
        status = moe_fitter_set_option(fitter, CHAR(STRING_ELT(option_names, i)),
                                       CHAR(STRING_ELT(option_values, i)));
        if (status != MOE_OK) {
            char text[MESSAGE_SIZE];
            snprintf(text, sizeof text, "%s", moe_fitter_last_error(fitter));
            moe_fitter_free(fitter);
            moe_model_free(model);
            fail("option", status, text);
        }
    }
    return fitter;
}

/* The fitted model and what R keeps of the fit's report, as a named list. */
static SEXP fit_result(moe_model_t *model, const moe_fit_report *report, double gate_l2,
                       double expert_ridge)
{
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 10));
    SEXP names = PROTECT(Rf_allocVector(STRSXP, 10));
    SET_VECTOR_ELT(out, 0, raw_of(model));
    SET_STRING_ELT(names, 0, Rf_mkChar("model"));
    SET_VECTOR_ELT(out, 1, Rf_ScalarReal(report->loglik));
    SET_STRING_ELT(names, 1, Rf_mkChar("loglik"));
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger((int)report->iterations));
    SET_STRING_ELT(names, 2, Rf_mkChar("iterations"));
    SET_VECTOR_ELT(out, 3, Rf_ScalarLogical(report->converged != 0));
    SET_STRING_ELT(names, 3, Rf_mkChar("converged"));
    SEXP penalty = PROTECT(Rf_allocVector(REALSXP, 2));
    SEXP penalty_names = PROTECT(Rf_allocVector(STRSXP, 2));
    REAL(penalty)[0] = gate_l2;
    REAL(penalty)[1] = expert_ridge;
    SET_STRING_ELT(penalty_names, 0, Rf_mkChar("gate_l2"));
    SET_STRING_ELT(penalty_names, 1, Rf_mkChar("expert_ridge"));
    Rf_setAttrib(penalty, R_NamesSymbol, penalty_names);
    SET_VECTOR_ELT(out, 4, penalty);
    SET_STRING_ELT(names, 4, Rf_mkChar("penalty"));
    /* The start search's work apart from the restarts' iterations, and
       whether the gate separates the rows (its standard errors then mean nothing). */
    SET_VECTOR_ELT(out, 5, Rf_ScalarReal((double)report->total_iterations));
    SET_STRING_ELT(names, 5, Rf_mkChar("total_iterations"));
    SET_VECTOR_ELT(out, 6, Rf_ScalarReal((double)report->search_runs));
    SET_STRING_ELT(names, 6, Rf_mkChar("search_runs"));
    SET_VECTOR_ELT(out, 7, Rf_ScalarReal((double)report->search_iterations));
    SET_STRING_ELT(names, 7, Rf_mkChar("search_iterations"));
    SET_VECTOR_ELT(out, 8,
                   Rf_ScalarLogical((report->warnings & MOE_WARNING_GATE_SEPARATED) != 0));
    SET_STRING_ELT(names, 8, Rf_mkChar("gate_separated"));
    SET_VECTOR_ELT(out, 9, Rf_ScalarReal(report->gate_transition));
    SET_STRING_ELT(names, 9, Rf_mkChar("gate_transition"));
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(4);
    return out;
}

SEXP libmoe_fit(SEXP family, SEXP n_experts, SEXP X, SEXP y, SEXP weights, SEXP intercept,
                SEXP n_classes, SEXP estimator, SEXP option_names, SEXP option_values,
                SEXP inputs)
{
    size_t n, d;
    const double *rows = rows_of(X, &n, &d);
    if (!Rf_isReal(y) || (size_t)XLENGTH(y) != n)
        Rf_error("libmoe: y must be a numeric vector of one value per row");
    const double *w = optional_vector(weights, n, "weights");
    if (!Rf_isString(estimator) || Rf_length(estimator) != 1 ||
        STRING_ELT(estimator, 0) == NA_STRING || !Rf_isString(option_names) ||
        !Rf_isString(option_values) || Rf_length(option_names) != Rf_length(option_values))
        Rf_error("libmoe: estimator and options must be character vectors");
    int experts = whole_number(n_experts, 1), classes = whole_number(n_classes, 0);
    int has_intercept = XLENGTH(intercept) == 1 ? Rf_asLogical(intercept) : NA_LOGICAL;
    if (experts == NA_INTEGER)
        Rf_error("libmoe: the number of experts must be one whole number >= 1");
    if (classes == NA_INTEGER)
        Rf_error("libmoe: the number of classes must be one whole number >= 0");
    if (has_intercept == NA_LOGICAL)
        Rf_error("libmoe: intercept must be TRUE or FALSE");

    moe_model_t *model = new_model(family, experts, d, has_intercept, classes, inputs);
    moe_fitter_t *fitter = new_fitter(model, estimator, option_names, option_values);
    int interrupted = 0;
    moe_fitter_set_progress(fitter, progress, &interrupted);
    moe_status status = moe_fitter_fit(fitter, model, n, rows, d, REAL(y), w);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    if (status != MOE_OK) {
        char text[MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s", moe_fitter_last_error(fitter));
        moe_fitter_free(fitter);
        moe_model_free(model);
        /* R_ToplevelExec consumed the interrupt; the R side signals it again as a condition
         * of class "interrupt" when it gets this string instead of a fit. */
        if (interrupted)
            return Rf_mkString(text);
        fail("fit", status, text);
    }
    /* Read back from the fitter rather than from R's option list: it has the values it
     * parsed and fitted with, whatever form R passed them in, and vcov needs exactly those. */
    double gate_l2 = 0.0, expert_ridge = 0.0;
    status = moe_fitter_get_double(fitter, MOE_OPT_GATE_L2, &gate_l2);
    if (status == MOE_OK)
        status = moe_fitter_get_double(fitter, MOE_OPT_EXPERT_RIDGE, &expert_ridge);
    if (status != MOE_OK) {
        char text[MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s", moe_last_error());
        moe_fitter_free(fitter);
        moe_model_free(model);
        fail("fit", status, text);
    }
    moe_fitter_free(fitter);
    SEXP out = fit_result(model, &report, gate_l2, expert_ridge);
    moe_model_free(model);
    return out;
}

/* gate (K x p), experts (K * rows x p), variances (K or empty; t experts' squared scales),
   degrees (K for t experts' nu and Gamma experts' shapes, else empty), as a list; which
   the model has, moe_model_scale_kind says. */
SEXP libmoe_parameters(SEXP raw)
{
    moe_model_t *model = model_of(raw);
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    size_t rows = moe_model_expert_rows(model);
    moe_scale_kind kind = moe_model_scale_kind(model);
    int t = kind == MOE_SCALE_STUDENT || kind == MOE_SCALE_SHAPE; /* degrees */
    int gaussian = kind == MOE_SCALE_VARIANCE || kind == MOE_SCALE_STUDENT; /* variances */
    double *gate = (double *)R_alloc(K * p, sizeof(double));
    double *degrees = (double *)R_alloc(K, sizeof(double));
    double *experts = (double *)R_alloc(K * rows * p, sizeof(double));
    double *variances = (double *)R_alloc(K, sizeof(double));
    moe_status status = moe_model_get_gate(model, gate, K * p);
    if (status == MOE_OK)
        status = moe_model_get_experts(model, experts, K * rows * p);
    if (status == MOE_OK && gaussian)
        status = moe_model_get_variances(model, variances, K);
    if (status == MOE_OK && t)
        status = moe_model_get_degrees(model, degrees, K);
    if (status != MOE_OK) {
        char text[MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s", moe_model_last_error(model));
        moe_model_free(model);
        fail("parameters", status, text);
    }
    moe_model_free(model);

    SEXP out = PROTECT(Rf_allocVector(VECSXP, 4));
    SEXP gate_matrix = PROTECT(Rf_allocMatrix(REALSXP, (int)K, (int)p));
    SEXP expert_matrix = PROTECT(Rf_allocMatrix(REALSXP, (int)(K * rows), (int)p));
    SEXP variance_vector = PROTECT(Rf_allocVector(REALSXP, gaussian ? (R_xlen_t)K : 0));
    SEXP degree_vector = PROTECT(Rf_allocVector(REALSXP, t ? (R_xlen_t)K : 0));
    for (size_t r = 0; r < K; r++)
        for (size_t j = 0; j < p; j++)
            REAL(gate_matrix)[j * K + r] = gate[r * p + j];
    for (size_t r = 0; r < K * rows; r++)
        for (size_t j = 0; j < p; j++)
            REAL(expert_matrix)[j * K * rows + r] = experts[r * p + j];
    if (gaussian)
        memcpy(REAL(variance_vector), variances, K * sizeof(double));
    if (t)
        memcpy(REAL(degree_vector), degrees, K * sizeof(double));
    SET_VECTOR_ELT(out, 0, gate_matrix);
    SET_VECTOR_ELT(out, 1, expert_matrix);
    SET_VECTOR_ELT(out, 2, variance_vector);
    SET_VECTOR_ELT(out, 3, degree_vector);
    UNPROTECT(5);
    return out;
}

/* What each input (intercept first) is to the gate and to the experts: 0 held at zero, 1
   estimated, 2 the experts' offset (held at one); list(gate, experts) of p integers. */
SEXP libmoe_inputs(SEXP raw)
{
    moe_model_t *model = model_of(raw);
    size_t p = moe_model_n_inputs(model), d = moe_model_n_features(model);
    int intercept = moe_model_has_intercept(model) != 0;
    moe_model_spec spec;
    moe_status status = moe_model_spec_init(&spec, MOE_MODEL_SPEC_VERSION);
    if (status != MOE_OK) {
        /* A libmoe 1.0 knows spec version 1 only: its models see every input. */
        status = moe_model_spec_init(&spec, 1);
        spec.gate_features = spec.expert_features = NULL;
        spec.gate_intercept = spec.expert_intercept = 1;
        spec.offset_feature = -1;
    }
    if (status == MOE_OK)
        status = moe_model_get_spec(model, &spec);
    if (status != MOE_OK) {
        char text[MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s", moe_last_error());
        moe_model_free(model);
        fail("inputs", status, text);
    }
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
    for (int part = 0; part < 2; part++) {
        const unsigned char *features = part == 0 ? spec.gate_features : spec.expert_features;
        SEXP roles = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)p));
        if (intercept)
            INTEGER(roles)[0] = part == 0 ? spec.gate_intercept : spec.expert_intercept;
        for (size_t j = 0; j < d; j++)
            INTEGER(roles)[(size_t)intercept + j] = features == NULL ? 1 : features[j];
        if (part == 1 && spec.offset_feature >= 0)
            INTEGER(roles)[(size_t)intercept + (size_t)spec.offset_feature] = 2;
        if (part == 1 && spec.version >= 3 && spec.trials_feature >= 0)
            INTEGER(roles)[(size_t)intercept + (size_t)spec.trials_feature] = 3;
        SET_VECTOR_ELT(out, part, roles);
        UNPROTECT(1);
    }
    moe_model_free(model);
    UNPROTECT(1);
    return out;
}

/* What: 0 predict (n x 1, or n x C for multinomial), 1 gate (n x K), 2 posterior (n x K). */
SEXP libmoe_predict(SEXP raw, SEXP X, SEXP y, SEXP what)
{
    size_t n, d;
    const double *rows = rows_of(X, &n, &d);
    int kind = Rf_asInteger(what);
    const double *response = kind == 2 ? optional_vector(y, n, "y") : NULL;
    if (kind == 2 && response == NULL)
        Rf_error("libmoe: the posterior needs the response");
    moe_model_t *model = model_of(raw);
    check_columns(model, d);
    size_t columns = kind == 0 ? moe_model_prediction_width(model) : moe_model_n_experts(model);
    double *values = (double *)R_alloc(n * columns + 1, sizeof(double));
    moe_status status;
    if (kind == 0)
        status = moe_model_predict(model, n, rows, d, values, n * columns);
    else if (kind == 1)
        status = moe_model_gate_proba(model, n, rows, d, values, n * columns);
    else
        status = moe_model_posterior(model, n, rows, d, response, values, n * columns);
    if (status != MOE_OK) {
        char text[MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s", moe_last_error());
        moe_model_free(model);
        fail("predict", status, text);
    }
    moe_model_free(model);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int)n, (int)columns));
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < columns; c++)
            REAL(out)[c * n + i] = values[i * columns + c];
    UNPROTECT(1);
    return out;
}

/* Hard assignments by the library's rules, as R numbers them (from 1): what 0, each row's
 * class (moe_model_classify); what 1, each row's expert (moe_model_cluster), by the posterior
 * when y is given, else by the gate. */
SEXP libmoe_assign(SEXP raw, SEXP X, SEXP y, SEXP what)
{
    size_t n, d;
    const double *rows = rows_of(X, &n, &d);
    int kind = XLENGTH(what) == 1 ? Rf_asInteger(what) : NA_INTEGER;
    if (kind != 0 && kind != 1)
        Rf_error("libmoe: what must be 0 (classes) or 1 (experts)");
    const double *response = kind == 1 ? optional_vector(y, n, "y") : NULL;
    moe_model_t *model = model_of(raw);
    check_columns(model, d);
    size_t *assigned = (size_t *)R_alloc(n + 1, sizeof(size_t));
    moe_status status = kind == 0 ? moe_model_classify(model, n, rows, d, assigned, n)
                                  : moe_model_cluster(model, n, rows, d, response, assigned, n);
    if (status != MOE_OK) {
        char text[MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s", moe_last_error());
        moe_model_free(model);
        fail(kind == 0 ? "classify" : "cluster", status, text);
    }
    moe_model_free(model);
    SEXP out = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)n));
    for (size_t i = 0; i < n; i++)
        INTEGER(out)[i] = (int)assigned[i] + 1;
    UNPROTECT(1);
    return out;
}

SEXP libmoe_loglik(SEXP raw, SEXP X, SEXP y, SEXP weights)
{
    size_t n, d;
    const double *rows = rows_of(X, &n, &d);
    const double *response = optional_vector(y, n, "y");
    const double *w = optional_vector(weights, n, "weights");
    moe_model_t *model = model_of(raw);
    check_columns(model, d);
    double loglik = 0.0;
    moe_status status = moe_model_loglik(model, n, rows, d, response, w, &loglik);
    moe_model_free(model);
    if (status != MOE_OK)
        fail("loglik", status, moe_last_error());
    return Rf_ScalarReal(loglik);
}

/* The covariance of the free parameters, or a character message when the library has none
 * (a link other than the identity, an information that is not positive definite). penalty is
 * c(gate_l2, expert_ridge): the fit's, for the information of the objective it maximised, or
 * zeros for the likelihood's alone (the library gives exactly moe_model_vcov's result then). */
SEXP libmoe_vcov(SEXP raw, SEXP X, SEXP y, SEXP weights, SEXP penalty)
{
    size_t n, d;
    const double *rows = rows_of(X, &n, &d);
    const double *response = optional_vector(y, n, "y");
    const double *w = optional_vector(weights, n, "weights");
    if (!Rf_isReal(penalty) || XLENGTH(penalty) != 2)
        Rf_error("libmoe: the penalty must be c(gate_l2, expert_ridge)");
    double gate_l2 = REAL(penalty)[0], expert_ridge = REAL(penalty)[1];
    moe_model_t *model = model_of(raw);
    check_columns(model, d);
    size_t P = moe_model_n_free_params(model);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int)P, (int)P));
    moe_status status = moe_model_vcov_penalized(model, n, rows, d, response, w, gate_l2,
                                                 expert_ridge, REAL(out), P * P);
    if (status != MOE_OK) {
        SEXP message = PROTECT(Rf_mkString(moe_last_error()));
        moe_model_free(model);
        UNPROTECT(2);
        return message;
    }
    moe_model_free(model);
    UNPROTECT(1);
    return out;
}

SEXP libmoe_version(void)
{
    return Rf_mkString(moe_version_string());
}

/* The library's built-in estimators in its order: list(name = , description = ). */
SEXP libmoe_estimators(void)
{
    size_t count = moe_estimator_count();
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
    SEXP names = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)count));
    SEXP descriptions = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)count));
    for (size_t i = 0; i < count; i++) {
        const char *name = moe_estimator_name(i), *description = moe_estimator_description(i);
        SET_STRING_ELT(names, (R_xlen_t)i, name ? Rf_mkCharCE(name, CE_UTF8) : NA_STRING);
        SET_STRING_ELT(descriptions, (R_xlen_t)i,
                       description ? Rf_mkCharCE(description, CE_UTF8) : NA_STRING);
    }
    SET_VECTOR_ELT(out, 0, names);
    SET_VECTOR_ELT(out, 1, descriptions);
    SEXP labels = PROTECT(Rf_allocVector(STRSXP, 2));
    SET_STRING_ELT(labels, 0, Rf_mkChar("name"));
    SET_STRING_ELT(labels, 1, Rf_mkChar("description"));
    Rf_setAttrib(out, R_NamesSymbol, labels);
    UNPROTECT(4);
    return out;
}

SEXP libmoe_n_features(SEXP raw)
{
    moe_model_t *model = model_of(raw);
    size_t features = moe_model_n_features(model);
    moe_model_free(model);
    return Rf_ScalarReal((double)features);
}

/* c(lower, upper, is_integer, lower_open, upper_open) of an option as the library lists it
 * (moe_fitter_option_info) for the first built-in estimator that takes it; NULL for a name
 * none takes (the library then refuses it with its own message). Keyword options are
 * integers (their index), and their names pass as text. */
SEXP libmoe_option_bounds(SEXP name)
{
    if (!Rf_isString(name) || XLENGTH(name) != 1 || STRING_ELT(name, 0) == NA_STRING)
        Rf_error("libmoe: an option name is one string");
    const char *wanted = CHAR(STRING_ELT(name, 0));
    for (size_t e = 0; e < moe_estimator_count(); e++) {
        moe_fitter_t *fitter = NULL;
        if (moe_fitter_create(&fitter, moe_estimator_name(e)) != MOE_OK)
            Rf_error("libmoe: %s", moe_last_error());
        moe_option_info info;
        int found = 0;
        for (size_t i = 0; !found && i < moe_fitter_option_count(fitter); i++)
            found = moe_option_info_init(&info, MOE_OPTION_INFO_VERSION) == MOE_OK &&
                    moe_fitter_option_info(fitter, i, &info) == MOE_OK &&
                    strcmp(info.name, wanted) == 0;
        moe_fitter_free(fitter);
        if (!found)
            continue;
        SEXP out = PROTECT(Rf_allocVector(REALSXP, 5));
        REAL(out)[0] = info.lower;
        REAL(out)[1] = info.upper;
        REAL(out)[2] = info.type == MOE_OPTION_REAL ? 0.0 : 1.0;
        REAL(out)[3] = (info.flags & MOE_OPTION_LOWER_OPEN) ? 1.0 : 0.0;
        REAL(out)[4] = (info.flags & MOE_OPTION_UPPER_OPEN) ? 1.0 : 0.0;
        UNPROTECT(1);
        return out;
    }
    return R_NilValue;
}

/* Column `column` of the option listing: one estimator's options as the library lists them
   (moe_fitter_option_info). */
static void option_row(SEXP columns, R_xlen_t row, const moe_option_info *info)
{
    static const char *const types[] = {"integer", "real", "keyword"};
    SET_STRING_ELT(VECTOR_ELT(columns, 0), row, Rf_mkCharCE(info->name, CE_UTF8));
    SET_STRING_ELT(VECTOR_ELT(columns, 1), row, Rf_mkChar(types[info->type]));
    char text[64];
    if (info->type == MOE_OPTION_KEYWORD)
        snprintf(text, sizeof text, "%s", info->keywords[(size_t)info->default_value]);
    else
        snprintf(text, sizeof text, "%.17g", info->default_value);
    SET_STRING_ELT(VECTOR_ELT(columns, 2), row, Rf_mkChar(text));
    REAL(VECTOR_ELT(columns, 3))[row] = info->lower;
    REAL(VECTOR_ELT(columns, 4))[row] = info->upper;
    LOGICAL(VECTOR_ELT(columns, 5))[row] = (info->flags & MOE_OPTION_LOWER_OPEN) != 0;
    LOGICAL(VECTOR_ELT(columns, 6))[row] = (info->flags & MOE_OPTION_UPPER_OPEN) != 0;
    size_t length = 0;
    for (size_t k = 0; info->keywords != NULL && info->keywords[k] != NULL; k++)
        length += strlen(info->keywords[k]) + 1;
    char *joined = R_alloc(length + 1, 1);
    joined[0] = '\0';
    for (size_t k = 0; info->keywords != NULL && info->keywords[k] != NULL; k++) {
        if (k > 0)
            strcat(joined, "|");
        strcat(joined, info->keywords[k]);
    }
    SET_STRING_ELT(VECTOR_ELT(columns, 7), row,
                   info->keywords != NULL ? Rf_mkCharCE(joined, CE_UTF8) : NA_STRING);
    SET_STRING_ELT(VECTOR_ELT(columns, 8), row, Rf_mkCharCE(info->description, CE_UTF8));
    LOGICAL(VECTOR_ELT(columns, 9))[row] = info->number != 0;
}

/* Every option of an estimator's fitter: a list of columns for a data frame. */
SEXP libmoe_options(SEXP estimator)
{
    if (!Rf_isString(estimator) || XLENGTH(estimator) != 1 ||
        STRING_ELT(estimator, 0) == NA_STRING)
        Rf_error("libmoe: an estimator is one string");
    moe_fitter_t *fitter = NULL;
    if (moe_fitter_create(&fitter, CHAR(STRING_ELT(estimator, 0))) != MOE_OK)
        Rf_error("libmoe: %s", moe_last_error());
    R_xlen_t count = (R_xlen_t)moe_fitter_option_count(fitter);
    static const char *const labels[] = {"name", "type", "default", "lower", "upper",
                                         "lower_open", "upper_open", "keywords",
                                         "description", "pinned"};
    static const SEXPTYPE kinds[] = {STRSXP, STRSXP, STRSXP, REALSXP, REALSXP,
                                     LGLSXP, LGLSXP, STRSXP, STRSXP, LGLSXP};
    SEXP columns = PROTECT(Rf_allocVector(VECSXP, 10));
    SEXP names = PROTECT(Rf_allocVector(STRSXP, 10));
    for (int c = 0; c < 10; c++) {
        SET_VECTOR_ELT(columns, c, Rf_allocVector(kinds[c], count));
        SET_STRING_ELT(names, c, Rf_mkChar(labels[c]));
    }
    Rf_setAttrib(columns, R_NamesSymbol, names);
    for (R_xlen_t i = 0; i < count; i++) {
        moe_option_info info;
        if (moe_option_info_init(&info, MOE_OPTION_INFO_VERSION) != MOE_OK ||
            moe_fitter_option_info(fitter, (size_t)i, &info) != MOE_OK) {
            moe_fitter_free(fitter);
            Rf_error("libmoe: %s", moe_last_error());
        }
        option_row(columns, i, &info);
    }
    moe_fitter_free(fitter);
    UNPROTECT(2);
    return columns;
}

static const R_CallMethodDef call_methods[] = {
    {"libmoe_fit", (DL_FUNC)&libmoe_fit, 11},
    {"libmoe_inputs", (DL_FUNC)&libmoe_inputs, 1},
    {"libmoe_parameters", (DL_FUNC)&libmoe_parameters, 1},
    {"libmoe_predict", (DL_FUNC)&libmoe_predict, 4},
    {"libmoe_assign", (DL_FUNC)&libmoe_assign, 4},
    {"libmoe_loglik", (DL_FUNC)&libmoe_loglik, 4},
    {"libmoe_vcov", (DL_FUNC)&libmoe_vcov, 5},
    {"libmoe_version", (DL_FUNC)&libmoe_version, 0},
    {"libmoe_estimators", (DL_FUNC)&libmoe_estimators, 0},
    {"libmoe_n_features", (DL_FUNC)&libmoe_n_features, 1},
    {"libmoe_option_bounds", (DL_FUNC)&libmoe_option_bounds, 1},
    {"libmoe_options", (DL_FUNC)&libmoe_options, 1},
    {NULL, NULL, 0}
};

void R_init_libmoe(DllInfo *info)
{
    R_registerRoutines(info, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(info, FALSE);
}
