/*
 * A caller-defined estimator through moe_fitter_create_custom: what the fit
 * context offers (data, options, working model, iterations, result), how the
 * fitter forwards unknown option names, what happens to the caller's model
 * when the estimator fails, validation of the ops table, and the state's
 * lifetime.
 *
 * The estimator used throughout, "pooled-ols", sets every expert to the
 * weighted least-squares fit of y on [1, x], the gate to zero and every
 * variance to the weighted residual variance.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "moe/estimator.h"
#include "support/synthetic.h"
#include "support/runner.h"

#define MAX_P 8
#define MAX_K 4
#define M_PI_VALUE 3.14159265358979323846

static int close_relative(double a, double b, double tolerance)
{
    return fabs(a - b) <= tolerance * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* ------------------------------------------------------------------------ */
/* The estimator                                                            */
/* ------------------------------------------------------------------------ */

/* What the estimator saw, for the test to inspect (one process per test). */
typedef struct observed {
    int create_calls;
    int destroy_calls;
    void *created_state;
    void *destroyed_state;
    int fit_calls;
    int partial_fit_calls;
    int set_option_calls;
    size_t last_option_index;
    double last_option_value;
    /* data */
    size_t n, ldx;
    const double *X, *y, *weights;
    /* options */
    long long max_iter, n_init, seed, init, threads;
    double tolerance, gate_l2, max_iter_as_double;
    moe_status unknown_option_status;
    /* the working model at the start of fit */
    double start_experts[MAX_K * MAX_P];
    double start_variances[MAX_K];
    /* log-likelihoods recorded */
    double loglik_start, loglik_end;
    moe_status iteration_status;
    double working_predictions[512];
} observed;

static observed seen;

typedef struct ols_state {
    unsigned magic;
    double alpha;
    double passes; /* an integer option, kept as the value the fitter passed */
    double weighting; /* a keyword option's index */
} ols_state;

#define OLS_MAGIC 0x01501501u

static moe_status ols_create(void **state)
{
    ols_state *s = malloc(sizeof *s);
    if (s == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    s->magic = OLS_MAGIC;
    s->alpha = -1.0; /* the fitter sets the table's defaults after create */
    s->passes = -1.0;
    s->weighting = -1.0;
    *state = s;
    seen.create_calls++;
    seen.created_state = s;
    return MOE_OK;
}

static void ols_destroy(void *state)
{
    ols_state *s = state;
    ck_assert_uint_eq(s->magic, OLS_MAGIC);
    s->magic = 0;
    seen.destroy_calls++;
    seen.destroyed_state = state;
    free(s);
}

static const char *const weighting_keywords[] = {"plain", "robust", NULL};

static const moe_option_info ols_option_table[] = {
    {MOE_OPTION_INFO_VERSION, "alpha", MOE_OPTION_REAL, MOE_OPTION_UPPER_OPEN, 0.0, 10.0, 0.25,
     NULL, "a real option in [0, 10)", 0},
    {MOE_OPTION_INFO_VERSION, "passes", MOE_OPTION_INTEGER, 0, 1, 100, 3, NULL,
     "an integer option in [1, 100]", 0},
    {MOE_OPTION_INFO_VERSION, "weighting", MOE_OPTION_KEYWORD, 0, 0, 0, 1, weighting_keywords,
     "a keyword option", 0},
};

/* Refuses alpha = 5 (a valid value by the table) to test a refusal the table cannot see. */
static moe_status ols_set_option(void *state, size_t index, double value)
{
    ols_state *s = state;
    ck_assert_uint_eq(s->magic, OLS_MAGIC);
    seen.set_option_calls++;
    seen.last_option_index = index;
    seen.last_option_value = value;
    if (index == 0 && value == 5.0)
        return MOE_ERR_INVALID_ARGUMENT;
    double *fields[] = {&s->alpha, &s->passes, &s->weighting};
    ck_assert_uint_lt(index, 3);
    *fields[index] = value;
    return MOE_OK;
}

static moe_status ols_get_option(const void *state, size_t index, double *value)
{
    const ols_state *s = state;
    const double fields[] = {s->alpha, s->passes, s->weighting};
    ck_assert_uint_lt(index, 3);
    *value = fields[index];
    return MOE_OK;
}

/* Solve A b = r (p x p, row-major) by Gaussian elimination with partial pivoting. */
static int solve(size_t p, double *A, double *r)
{
    for (size_t c = 0; c < p; ++c) {
        size_t pivot = c;
        for (size_t i = c + 1; i < p; ++i)
            if (fabs(A[i * p + c]) > fabs(A[pivot * p + c]))
                pivot = i;
        if (A[pivot * p + c] == 0.0)
            return -1;
        if (pivot != c) {
            for (size_t j = 0; j < p; ++j) {
                double t = A[c * p + j];
                A[c * p + j] = A[pivot * p + j];
                A[pivot * p + j] = t;
            }
            double t = r[c];
            r[c] = r[pivot];
            r[pivot] = t;
        }
        for (size_t i = c + 1; i < p; ++i) {
            double factor = A[i * p + c] / A[c * p + c];
            for (size_t j = c; j < p; ++j)
                A[i * p + j] -= factor * A[c * p + j];
            r[i] -= factor * r[c];
        }
    }
    for (size_t c = p; c-- > 0;) {
        double sum = r[c];
        for (size_t j = c + 1; j < p; ++j)
            sum -= A[c * p + j] * r[j];
        r[c] = sum / A[c * p + c];
    }
    return 0;
}

static double weight_of(const double *weights, size_t i)
{
    return weights == NULL ? 1.0 : weights[i];
}

/* Weighted least squares of y on [1, x] into beta (p = d + 1), and the residual variance. */
static int pooled_ols(size_t n, size_t d, const double *X, size_t ldx, const double *y,
                      const double *weights, double *beta, double *variance)
{
    size_t p = d + 1;
    double A[MAX_P * MAX_P] = {0}, r[MAX_P] = {0}, row[MAX_P];
    for (size_t i = 0; i < n; ++i) {
        double w = weight_of(weights, i);
        row[0] = 1.0;
        for (size_t j = 0; j < d; ++j)
            row[j + 1] = X[i * ldx + j];
        for (size_t a = 0; a < p; ++a) {
            r[a] += w * row[a] * y[i];
            for (size_t b = 0; b < p; ++b)
                A[a * p + b] += w * row[a] * row[b];
        }
    }
    if (solve(p, A, r) != 0)
        return -1;
    memcpy(beta, r, p * sizeof(double));
    double rss = 0.0, total = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double w = weight_of(weights, i), mean = beta[0];
        for (size_t j = 0; j < d; ++j)
            mean += beta[j + 1] * X[i * ldx + j];
        rss += w * (y[i] - mean) * (y[i] - mean);
        total += w;
    }
    *variance = rss / total;
    return 0;
}

/* Read everything the context offers into `seen`. */
static void observe_context(moe_fit_context *context)
{
    ck_assert_int_eq(moe_context_data(context, &seen.n, &seen.X, &seen.ldx, &seen.y,
                                      &seen.weights),
                     MOE_OK);
    ck_assert_int_eq(moe_context_get_int(context, MOE_OPT_MAX_ITER, &seen.max_iter), MOE_OK);
    ck_assert_int_eq(moe_context_get_int(context, MOE_OPT_N_INIT, &seen.n_init), MOE_OK);
    ck_assert_int_eq(moe_context_get_int(context, MOE_OPT_SEED, &seen.seed), MOE_OK);
    ck_assert_int_eq(moe_context_get_int(context, MOE_OPT_INIT, &seen.init), MOE_OK);
    ck_assert_int_eq(moe_context_get_int(context, MOE_OPT_THREADS, &seen.threads), MOE_OK);
    ck_assert_int_eq(moe_context_get_double(context, MOE_OPT_TOLERANCE, &seen.tolerance),
                     MOE_OK);
    ck_assert_int_eq(moe_context_get_double(context, MOE_OPT_GATE_L2, &seen.gate_l2), MOE_OK);
    ck_assert_int_eq(
        moe_context_get_double(context, MOE_OPT_MAX_ITER, &seen.max_iter_as_double), MOE_OK);
    long long ignored;
    seen.unknown_option_status = moe_context_get_int(context, (moe_option)30, &ignored);
    moe_model_t *model = moe_context_model(context);
    ck_assert_ptr_nonnull(model);
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    ck_assert_uint_le(K, MAX_K);
    ck_assert_uint_le(p, MAX_P);
    ck_assert_int_eq(moe_model_get_experts(model, seen.start_experts, MAX_K * MAX_P), MOE_OK);
    ck_assert_int_eq(moe_model_get_variances(model, seen.start_variances, MAX_K), MOE_OK);
}

static moe_status ols_fit(void *state, moe_fit_context *context)
{
    ols_state *s = state;
    ck_assert_uint_eq(s->magic, OLS_MAGIC);
    seen.fit_calls++;
    observe_context(context);
    moe_model_t *model = moe_context_model(context);
    size_t K = moe_model_n_experts(model), d = moe_model_n_features(model);
    size_t p = moe_model_n_inputs(model);
    ck_assert_int_eq(moe_model_has_intercept(model), 1);

    ck_assert_int_eq(moe_model_loglik(model, seen.n, seen.X, seen.ldx, seen.y, seen.weights,
                                      &seen.loglik_start),
                     MOE_OK);
    moe_status status = moe_context_iteration(context, 0, 0, seen.loglik_start);
    if (status != MOE_OK)
        return status;

    double beta[MAX_P], variance;
    if (pooled_ols(seen.n, d, seen.X, seen.ldx, seen.y, seen.weights, beta, &variance) != 0)
        return moe_context_fail(context, MOE_ERR_NUMERICAL, "singular normal equations");
    double experts[MAX_K * MAX_P], gate[MAX_K * MAX_P] = {0}, variances[MAX_K];
    for (size_t k = 0; k < K; ++k) {
        memcpy(experts + k * p, beta, p * sizeof(double));
        variances[k] = variance;
    }
    ck_assert_int_eq(moe_model_set_experts(model, experts, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_gate(model, gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(model, variances, K), MOE_OK);

    ck_assert_int_eq(moe_model_loglik(model, seen.n, seen.X, seen.ldx, seen.y, seen.weights,
                                      &seen.loglik_end),
                     MOE_OK);
    seen.iteration_status = moe_context_iteration(context, 0, 1, seen.loglik_end);
    ck_assert_int_eq(moe_context_set_result(context, 0, 1), MOE_OK);
    return seen.iteration_status;
}

/*
 * partial_fit: experts in descending order of their intercepts, distinct variances and
 * a non-zero gate, so the fitter's canonical ordering has something to do. Records the
 * working model's predictions on the data.
 */
static moe_status ols_partial_fit(void *state, moe_fit_context *context)
{
    ols_state *s = state;
    ck_assert_uint_eq(s->magic, OLS_MAGIC);
    seen.partial_fit_calls++;
    observe_context(context);
    moe_model_t *model = moe_context_model(context);
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    double experts[MAX_K * MAX_P], gate[MAX_K * MAX_P], variances[MAX_K];
    for (size_t k = 0; k < K; ++k) {
        for (size_t j = 0; j < p; ++j) {
            experts[k * p + j] = j == 0 ? (double)(K - k) : 0.1 * (double)(j + k);
            gate[k * p + j] = 0.3 * (double)(k + 1) - 0.2 * (double)j;
        }
        variances[k] = 0.5 + 0.25 * (double)k;
    }
    ck_assert_int_eq(moe_model_set_experts(model, experts, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_gate(model, gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(model, variances, K), MOE_OK);
    ck_assert_uint_le(seen.n, 512);
    ck_assert_int_eq(moe_model_predict(model, seen.n, seen.X, seen.ldx, seen.working_predictions,
                                       seen.n),
                     MOE_OK);
    double loglik;
    ck_assert_int_eq(moe_model_loglik(model, seen.n, seen.X, seen.ldx, seen.y, seen.weights,
                                      &loglik),
                     MOE_OK);
    moe_status status = moe_context_iteration(context, 0, 0, loglik);
    if (status == MOE_OK)
        status = moe_context_iteration(context, 0, 1, loglik);
    /* The result is named even after a cancelled iteration, so that the fit keeps it. */
    moe_status named = moe_context_set_result(context, 0, 0);
    return status != MOE_OK ? status : named;
}

static const moe_estimator_ops ols_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "pooled-ols",
    .create = ols_create,
    .destroy = ols_destroy,
    .fit = ols_fit,
    .partial_fit = ols_partial_fit,
    .options = MOE_OPTIONS_ALL,
    .option_table = ols_option_table,
    .option_count = sizeof ols_option_table / sizeof ols_option_table[0],
    .set_option = ols_set_option,
    .get_option = ols_get_option,
};

/* The same without options of its own and partial_fit. */
static const moe_estimator_ops ols_minimal_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "pooled-ols-minimal",
    .create = ols_create,
    .destroy = ols_destroy,
    .set_option = NULL,
    .fit = ols_fit,
    .partial_fit = NULL,
    .options = MOE_OPTIONS_ALL,
};

/* Fails after scribbling over the working model (and even claiming a result). */
static moe_status failing_fit(void *state, moe_fit_context *context)
{
    (void)state;
    seen.fit_calls++;
    moe_model_t *model = moe_context_model(context);
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    double junk[MAX_K * MAX_P];
    for (size_t i = 0; i < K * p; ++i)
        junk[i] = 99.0 + (double)i;
    ck_assert_int_eq(moe_model_set_experts(model, junk, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_gate(model, junk, K * p), MOE_OK);
    ck_assert_int_eq(moe_context_iteration(context, 0, 0, -10.0), MOE_OK);
    ck_assert_int_eq(moe_context_iteration(context, 0, 1, -5.0), MOE_OK);
    ck_assert_int_eq(moe_context_set_result(context, 0, 1), MOE_OK);
    return moe_context_fail(context, MOE_ERR_NUMERICAL, "custom failure");
}

static const moe_estimator_ops failing_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "failing",
    .create = ols_create,
    .destroy = ols_destroy,
    .set_option = NULL,
    .fit = failing_fit,
    .partial_fit = NULL,
    .options = MOE_OPTIONS_ALL,
};

/* Fails without attaching a message. */
static moe_status silent_failing_fit(void *state, moe_fit_context *context)
{
    (void)state;
    (void)context;
    seen.fit_calls++;
    return MOE_ERR_NUMERICAL;
}

static const moe_estimator_ops silent_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "silent",
    .create = ols_create,
    .destroy = ols_destroy,
    .set_option = NULL,
    .fit = silent_failing_fit,
    .partial_fit = NULL,
    .options = MOE_OPTIONS_ALL,
};

/* Misbehaves with the context: a restart index beyond n_init (SIZE_MAX would once have
   sized the trace table from it), then a failure message taken from moe_last_error(),
   the very buffer the failure rewrites. */
static moe_status unruly_fit(void *state, moe_fit_context *context)
{
    (void)state;
    seen.fit_calls++;
    long long n_init = 0;
    ck_assert_int_eq(moe_context_get_int(context, MOE_OPT_N_INIT, &n_init), MOE_OK);
    ck_assert_int_eq(moe_context_iteration(context, (size_t)n_init, 0, -1.0),
                     MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_context_iteration(context, SIZE_MAX, 0, -1.0), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_context_iteration(context, (size_t)n_init - 1, 0, -1.0), MOE_OK);
    ck_assert_ptr_nonnull(strstr(moe_last_error(), "n_init"));
    return moe_context_fail(context, MOE_ERR_INVALID_ARGUMENT, moe_last_error());
}

static const moe_estimator_ops unruly_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "unruly",
    .create = ols_create,
    .destroy = ols_destroy,
    .set_option = NULL,
    .fit = unruly_fit,
    .partial_fit = NULL,
    .options = MOE_OPTIONS_ALL,
};

/* ------------------------------------------------------------------------ */
/* Test data and the independent reference                                  */
/* ------------------------------------------------------------------------ */

enum { MAX_N = 400 };

typedef struct problem {
    size_t n, d, ldx;
    double X[MAX_N * MAX_P];
    double y[MAX_N];
    double w[MAX_N];
} problem;

/* Rows padded to ldx = d + 2 with NaN, which nobody may read. */
static void problem_make(problem *target, size_t n, size_t d, uint64_t seed)
{
    ck_assert_uint_le(n, MAX_N);
    ck_assert_uint_le(d + 2, MAX_P);
    synthetic_truth truth;
    synthetic_data sample;
    synthetic_truth_make(&truth, 2, d, 3.0, 1.0, seed);
    synthetic_data_make(&sample, &truth, n, seed + 1);
    test_rng rng = {seed + 2};
    target->n = n;
    target->d = d;
    target->ldx = d + 2;
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < d; ++j)
            target->X[i * target->ldx + j] = sample.X[i * d + j];
        target->X[i * target->ldx + d] = NAN;
        target->X[i * target->ldx + d + 1] = NAN;
        target->y[i] = sample.y[i];
        target->w[i] = 0.2 + 2.0 * test_uniform(&rng);
    }
    synthetic_data_free(&sample);
    synthetic_truth_free(&truth);
}

/*
 * Reference weighted least squares by modified Gram-Schmidt QR of the sqrt(w)-scaled
 * design (a different algorithm from the estimator's normal equations).
 */
static void reference_wls(const problem *pr, const double *weights, double *beta,
                          double *variance)
{
    size_t n = pr->n, p = pr->d + 1;
    double *Q = malloc(n * p * sizeof(double)), *z = malloc(n * sizeof(double));
    double R[MAX_P * MAX_P] = {0}, c[MAX_P];
    ck_assert(Q != NULL && z != NULL);
    for (size_t i = 0; i < n; ++i) {
        double root = sqrt(weight_of(weights, i));
        Q[i * p] = root;
        for (size_t j = 0; j < pr->d; ++j)
            Q[i * p + j + 1] = root * pr->X[i * pr->ldx + j];
        z[i] = root * pr->y[i];
    }
    for (size_t j = 0; j < p; ++j) {
        for (size_t k = 0; k < j; ++k) {
            double dot = 0.0;
            for (size_t i = 0; i < n; ++i)
                dot += Q[i * p + k] * Q[i * p + j];
            R[k * p + j] = dot;
            for (size_t i = 0; i < n; ++i)
                Q[i * p + j] -= dot * Q[i * p + k];
        }
        double norm = 0.0;
        for (size_t i = 0; i < n; ++i)
            norm += Q[i * p + j] * Q[i * p + j];
        norm = sqrt(norm);
        R[j * p + j] = norm;
        for (size_t i = 0; i < n; ++i)
            Q[i * p + j] /= norm;
    }
    for (size_t j = 0; j < p; ++j) {
        double dot = 0.0;
        for (size_t i = 0; i < n; ++i)
            dot += Q[i * p + j] * z[i];
        c[j] = dot;
    }
    for (size_t j = p; j-- > 0;) {
        double sum = c[j];
        for (size_t k = j + 1; k < p; ++k)
            sum -= R[j * p + k] * beta[k];
        beta[j] = sum / R[j * p + j];
    }
    double rss = 0.0, total = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double w = weight_of(weights, i), mean = beta[0];
        for (size_t j = 0; j < pr->d; ++j)
            mean += beta[j + 1] * pr->X[i * pr->ldx + j];
        rss += w * (pr->y[i] - mean) * (pr->y[i] - mean);
        total += w;
    }
    *variance = rss / total;
    free(Q);
    free(z);
}

static moe_model_t *new_model(size_t K, size_t d)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

typedef struct snapshot {
    double gate[MAX_K * MAX_P];
    double experts[MAX_K * MAX_P];
    double variances[MAX_K];
} snapshot;

static void snapshot_take(const moe_model_t *model, snapshot *s)
{
    memset(s, 0, sizeof *s);
    ck_assert_int_eq(moe_model_get_gate(model, s->gate, MAX_K * MAX_P), MOE_OK);
    ck_assert_int_eq(moe_model_get_experts(model, s->experts, MAX_K * MAX_P), MOE_OK);
    ck_assert_int_eq(moe_model_get_variances(model, s->variances, MAX_K), MOE_OK);
}

/* Give a model distinct, non-neutral parameters. */
static void perturb(moe_model_t *model)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    double values[MAX_K * MAX_P], variances[MAX_K];
    for (size_t i = 0; i < K * p; ++i)
        values[i] = 0.37 * (double)(i + 1) - 1.1;
    for (size_t k = 0; k < K; ++k)
        variances[k] = 0.6 + 0.3 * (double)k;
    ck_assert_int_eq(moe_model_set_experts(model, values, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_gate(model, values, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(model, variances, K), MOE_OK);
}

/* ------------------------------------------------------------------------ */
/* Fitting through the custom estimator                                     */
/* ------------------------------------------------------------------------ */

static void check_pooled_fit(size_t K, size_t d, int use_weights, uint64_t seed)
{
    static problem pr;
    problem_make(&pr, 300, d, seed);
    const double *weights = use_weights ? pr.w : NULL;
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    ck_assert_str_eq(moe_fitter_estimator_name(fitter), "pooled-ols");
    moe_model_t *model = new_model(K, d);
    perturb(model);
    snapshot start;
    snapshot_take(model, &start);

    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, weights), MOE_OK);
    ck_assert_int_eq(seen.fit_calls, 1);

    /* The context showed this call's data and the caller's starting parameters. */
    ck_assert_uint_eq(seen.n, pr.n);
    ck_assert_uint_eq(seen.ldx, pr.ldx);
    ck_assert_ptr_nonnull(seen.X);
    ck_assert(memcmp(seen.X, pr.X, pr.n * pr.ldx * sizeof(double)) == 0);
    ck_assert(memcmp(seen.y, pr.y, pr.n * sizeof(double)) == 0);
    if (use_weights)
        ck_assert(seen.weights != NULL &&
                  memcmp(seen.weights, pr.w, pr.n * sizeof(double)) == 0);
    else
        ck_assert_ptr_null(seen.weights);
    ck_assert(memcmp(seen.start_experts, start.experts,
                     K * (d + 1) * sizeof(double)) == 0);
    ck_assert(memcmp(seen.start_variances, start.variances, K * sizeof(double)) == 0);

    /* The coefficients are the weighted least-squares solution. */
    double beta[MAX_P], variance;
    reference_wls(&pr, weights, beta, &variance);
    snapshot fitted;
    snapshot_take(model, &fitted);
    size_t p = d + 1;
    for (size_t k = 0; k < K; ++k) {
        for (size_t j = 0; j < p; ++j)
            ck_assert_msg(close_relative(fitted.experts[k * p + j], beta[j], 1e-9),
                          "expert %zu coefficient %zu: %.17g, reference %.17g", k, j,
                          fitted.experts[k * p + j], beta[j]);
        ck_assert_msg(close_relative(fitted.variances[k], variance, 1e-9),
                      "variance %zu: %.17g, reference %.17g", k, fitted.variances[k], variance);
        for (size_t j = 0; j < p; ++j)
            ck_assert_double_eq(fitted.gate[k * p + j], 0.0);
    }

    /* The report comes from the recorded iterations and set_result. */
    moe_fit_report report = {.version = MOE_FIT_REPORT_VERSION};
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_int_eq(report.status, MOE_OK);
    ck_assert_uint_eq(report.iterations, 1);
    ck_assert_uint_eq(report.total_iterations, 1);
    ck_assert_uint_eq(report.n_restarts, 1);
    ck_assert_uint_eq(report.best_restart, 0);
    ck_assert_int_eq(report.converged, 1);
    ck_assert_double_eq(report.loglik, seen.loglik_end);
    double trace[3] = {0, 0, 0};
    size_t length = 0;
    ck_assert_int_eq(moe_fitter_get_trace(fitter, trace, 3, &length), MOE_OK);
    ck_assert_uint_eq(length, 2);
    ck_assert_double_eq(trace[0], seen.loglik_start);
    ck_assert_double_eq(trace[1], seen.loglik_end);

    /* With identical experts and a flat gate the mixture is one Gaussian:
       L = -W/2 (log(2 pi sigma^2) + 1), W the total weight. */
    double total = 0.0, loglik = NAN;
    for (size_t i = 0; i < pr.n; ++i)
        total += weight_of(weights, i);
    double expected = -0.5 * total * (log(2.0 * M_PI_VALUE * variance) + 1.0);
    ck_assert_int_eq(moe_model_loglik(model, pr.n, pr.X, pr.ldx, pr.y, weights, &loglik),
                     MOE_OK);
    ck_assert_msg(close_relative(loglik, expected, 1e-9), "loglik %.17g, expected %.17g", loglik,
                  expected);
    ck_assert_msg(close_relative(report.loglik, expected, 1e-9), "report %.17g, expected %.17g",
                  report.loglik, expected);

    ck_assert_int_eq(seen.destroy_calls, 0);
    moe_fitter_free(fitter);
    ck_assert_int_eq(seen.destroy_calls, 1);
    moe_model_free(model);
}

START_TEST(pooled_ols_one_feature_weighted)
{
    check_pooled_fit(2, 1, 1, 101);
}
END_TEST

START_TEST(pooled_ols_three_features_unweighted)
{
    check_pooled_fit(3, 3, 0, 202);
}
END_TEST

START_TEST(pooled_ols_matches_closed_form)
{
    /* d = 1: slope = Sxy / Sxx around the weighted means, computed right here. */
    static problem pr;
    problem_make(&pr, 250, 1, 303);
    memset(&seen, 0, sizeof seen);
    double W = 0, mx = 0, my = 0, sxy = 0, sxx = 0;
    for (size_t i = 0; i < pr.n; ++i) {
        W += pr.w[i];
        mx += pr.w[i] * pr.X[i * pr.ldx];
        my += pr.w[i] * pr.y[i];
    }
    mx /= W;
    my /= W;
    for (size_t i = 0; i < pr.n; ++i) {
        double dx = pr.X[i * pr.ldx] - mx;
        sxy += pr.w[i] * dx * (pr.y[i] - my);
        sxx += pr.w[i] * dx * dx;
    }
    double slope = sxy / sxx, intercept = my - slope * mx;

    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    moe_model_t *model = new_model(2, 1);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, pr.w), MOE_OK);
    double experts[4];
    ck_assert_int_eq(moe_model_get_experts(model, experts, 4), MOE_OK);
    for (size_t k = 0; k < 2; ++k) {
        ck_assert_msg(close_relative(experts[2 * k], intercept, 1e-9), "intercept %.17g vs %.17g",
                      experts[2 * k], intercept);
        ck_assert_msg(close_relative(experts[2 * k + 1], slope, 1e-9), "slope %.17g vs %.17g",
                      experts[2 * k + 1], slope);
    }
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(options_reach_the_context)
{
    static problem pr;
    problem_make(&pr, 100, 1, 404);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 77), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-5), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, 12345), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_THREADS, 3), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_GATE_L2, 0.25), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "init", "random"), MOE_OK);
    /* Range checks apply to custom estimators as well. */
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 0), MOE_ERR_INVALID_ARGUMENT);
    moe_model_t *model = new_model(2, 1);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL), MOE_OK);
    ck_assert_int_eq(seen.max_iter, 77);
    ck_assert_double_eq(seen.max_iter_as_double, 77.0);
    ck_assert_double_eq(seen.tolerance, 1e-5);
    ck_assert_int_eq(seen.seed, 12345);
    ck_assert_int_eq(seen.threads, 3);
    ck_assert_double_eq(seen.gate_l2, 0.25);
    ck_assert_int_eq(seen.init, MOE_INIT_RANDOM);
    ck_assert_int_eq(seen.n_init, 5); /* untouched: the documented default */
    ck_assert_int_eq(seen.unknown_option_status, MOE_ERR_NOT_FOUND);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(unpinned_option_names_go_to_the_estimator)
{
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    ols_state *state = seen.created_state;
    /* Creation set every default of the table through set_option. */
    ck_assert_int_eq(seen.set_option_calls, 3);
    ck_assert_double_eq(state->alpha, 0.25);
    ck_assert_double_eq(state->passes, 3.0);
    ck_assert_double_eq(state->weighting, 1.0);

    EXPECT_STATUS(moe_fitter_set_option(fitter, "alpha", "0.5"), MOE_OK);
    ck_assert_int_eq(seen.set_option_calls, 4);
    ck_assert_uint_eq(seen.last_option_index, 0);
    ck_assert_double_eq(seen.last_option_value, 0.5);
    ck_assert_double_eq(state->alpha, 0.5);
    double value = 0.0;
    EXPECT_STATUS(moe_fitter_get_option(fitter, "alpha", &value), MOE_OK);
    ck_assert_double_eq(value, 0.5);

    /* The table's checks run before the estimator sees anything. */
    const char *const refused[][2] = {
        {"alpha", "abc"}, {"alpha", "10"},  {"alpha", "-0.1"}, {"alpha", "nan"},
        {"passes", "0"},  {"passes", "101"}, {"passes", "2.5"}, {"passes", "1e1"},
        {"weighting", "fancy"}, {"weighting", "2"}, {"weighting", "-1"}, {"weighting", ""},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        EXPECT_STATUS(moe_fitter_set_option(fitter, refused[i][0], refused[i][1]),
                      MOE_ERR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(moe_fitter_last_error(fitter), refused[i][0]) != NULL,
                      "%s = '%s': message '%s'", refused[i][0], refused[i][1],
                      moe_fitter_last_error(fitter));
    }
    ck_assert_int_eq(seen.set_option_calls, 4);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "passes", "100"), MOE_OK);
    ck_assert_double_eq(state->passes, 100.0);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "weighting", "plain"), MOE_OK);
    ck_assert_double_eq(state->weighting, 0.0);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "weighting", "1"), MOE_OK);
    ck_assert_double_eq(state->weighting, 1.0);
    /* The estimator may still refuse a value the table allows; its old value stays. */
    EXPECT_STATUS(moe_fitter_set_option(fitter, "alpha", "5"), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_double_eq(state->alpha, 0.5);
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "alpha"));

    EXPECT_STATUS(moe_fitter_set_option(fitter, "beta", "1"), MOE_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "beta"));
    int calls = seen.set_option_calls;

    /* Pinned names stay with the library. */
    EXPECT_STATUS(moe_fitter_set_option(fitter, "max_iter", "10"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "tol", "1e-4"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "max_iter", "abc"), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(seen.set_option_calls, calls);
    long long max_iter = 0;
    ck_assert_int_eq(moe_fitter_get_int(fitter, MOE_OPT_MAX_ITER, &max_iter), MOE_OK);
    ck_assert_int_eq(max_iter, 10);

    /* The listing: the pinned options (all of them: MOE_OPTIONS_ALL), then the table's. */
    size_t count = moe_fitter_option_count(fitter);
    ck_assert_uint_gt(count, 3);
    moe_option_info info;
    ck_assert_int_eq(moe_option_info_init(&info, MOE_OPTION_INFO_VERSION), MOE_OK);
    ck_assert_int_eq(moe_fitter_option_info(fitter, count - 3, &info), MOE_OK);
    ck_assert_str_eq(info.name, "alpha");
    ck_assert_uint_eq(info.flags, MOE_OPTION_UPPER_OPEN);
    ck_assert_int_eq(info.number, 0);
    ck_assert_int_eq(moe_fitter_option_info(fitter, count - 1, &info), MOE_OK);
    ck_assert_str_eq(info.name, "weighting");
    ck_assert_int_eq(info.type, MOE_OPTION_KEYWORD);
    ck_assert_double_eq(info.lower, 0.0);
    ck_assert_double_eq(info.upper, 1.0);
    ck_assert_int_eq(moe_fitter_option_info(fitter, count - 4, &info), MOE_OK);
    ck_assert_int_ne(info.number, 0);
    moe_fitter_free(fitter);

    /* Without a table, unknown names are simply not found. */
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_minimal_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "alpha", "0.5"), MOE_ERR_NOT_FOUND);
    ck_assert_uint_eq(moe_fitter_option_count(fitter), count - 3);
    moe_fitter_free(fitter);
}
END_TEST

static void expect_rejected_ops(const moe_estimator_ops *ops, moe_status expected,
                                const char *what);

/* Tables the fitter refuses at creation, before the estimator's create runs. */
START_TEST(create_custom_rejects_bad_option_tables)
{
    memset(&seen, 0, sizeof seen);
    moe_option_info table[2];
    moe_estimator_ops ops = ols_ops;
    ops.option_table = table;
    ops.option_count = 2;
    const char *const no_keywords[] = {NULL};
    /* names and keywords a command line could never set, or that read as something else */
    static const char *const bad_names[] = {"a=b", "two words", "line\nbreak", "\xff", "12",
                                            "_leading", "tab\t"};
    const char *const twice[] = {"plain", "weighted", "plain", NULL};
    const char *const empty_keyword[] = {"plain", "", NULL};
    const char *const digit_keyword[] = {"plain", "2", NULL};
    const char *const spaced_keyword[] = {"plain", "very weighted", NULL};
    const char *const *const bad_keywords[] = {twice, empty_keyword, digit_keyword,
                                               spaced_keyword};
    enum { NAMES = sizeof bad_names / sizeof bad_names[0] };
    for (int bad = 0; bad < 11 + NAMES + 4; ++bad) {
        table[0] = ols_option_table[0];
        table[1] = ols_option_table[1];
        switch (bad) {
        case 0: table[1].version = 0; break;
        case 1: table[1].name = ""; break;
        case 2: table[1].name = "tol"; break; /* a pinned name */
        case 3: table[1].name = "alpha"; break; /* twice */
        case 4: table[1].number = MOE_OPT_TOLERANCE; break;
        case 5: table[1].type = (moe_option_type)7; break;
        case 6: table[1].default_value = 0.0; break; /* below its lower bound 1 */
        case 7: table[1].lower = 0.5; break; /* integer bounds not integral */
        case 8: table[1] = ols_option_table[2], table[1].keywords = no_keywords; break;
        case 9: table[0].default_value = 10.0; break; /* on the open upper bound */
        case 10: table[1].description = NULL; break;
        default:
            if (bad < 11 + NAMES)
                table[1].name = bad_names[bad - 11];
            else
                table[1] = ols_option_table[2], table[1].keywords = bad_keywords[bad - 11 - NAMES];
            break;
        }
        char what[32];
        snprintf(what, sizeof what, "bad table %d", bad);
        expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, what);
    }
    ops = ols_ops, ops.get_option = NULL;
    expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, "a table without get_option");
    ops = ols_ops, ops.option_table = NULL;
    expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, "a count without a table");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Failures                                                                 */
/* ------------------------------------------------------------------------ */

START_TEST(failing_estimator_leaves_model_unchanged)
{
    static problem pr;
    problem_make(&pr, 100, 2, 505);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &failing_ops), MOE_OK);
    moe_model_t *model = new_model(2, 2);
    perturb(model);
    snapshot before, after;
    snapshot_take(model, &before);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, pr.w),
                  MOE_ERR_NUMERICAL);
    ck_assert_int_eq(seen.fit_calls, 1);
    snapshot_take(model, &after);
    ck_assert_msg(memcmp(&before, &after, sizeof before) == 0,
                  "a failed custom fit changed the caller's model");
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "custom failure"));
    ck_assert_ptr_nonnull(strstr(moe_last_error(), "custom failure"));
    moe_fit_report report = {.version = MOE_FIT_REPORT_VERSION};
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_int_eq(report.status, MOE_ERR_NUMERICAL);
    moe_fitter_free(fitter);

    /* Failing without a message still leaves one, naming the estimator. */
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &silent_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL),
                  MOE_ERR_NUMERICAL);
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "silent"));
    snapshot_take(model, &after);
    ck_assert(memcmp(&before, &after, sizeof before) == 0);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(restart_index_is_bounded_and_messages_may_alias)
{
    static problem pr;
    problem_make(&pr, 100, 2, 507);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &unruly_ops), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 3), MOE_OK);
    moe_model_t *model = new_model(2, 2);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(seen.fit_calls, 1);
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "is not below n_init = 3"));
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(validation_happens_before_the_estimator)
{
    static problem pr;
    problem_make(&pr, 100, 1, 606);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    moe_model_t *model = new_model(2, 1);
    pr.X[17 * pr.ldx] = NAN;
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL),
                  MOE_ERR_NON_FINITE);
    pr.X[17 * pr.ldx] = 0.0;
    pr.w[3] = -1.0;
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, pr.w),
                  MOE_ERR_NEGATIVE_WEIGHT);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, 5, pr.X, pr.ldx, pr.y, NULL),
                  MOE_ERR_TOO_FEW_SAMPLES);
    ck_assert_int_eq(seen.fit_calls, 0);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

static int cancel_always(const moe_progress *progress, void *user_data)
{
    (void)progress;
    ++*(int *)user_data;
    return 1;
}

START_TEST(cancel_through_the_context)
{
    static problem pr;
    problem_make(&pr, 100, 1, 707);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    int calls = 0;
    ck_assert_int_eq(moe_fitter_set_progress(fitter, cancel_always, &calls), MOE_OK);
    moe_model_t *model = new_model(2, 1);
    snapshot before, after;
    snapshot_take(model, &before);
    /* The estimator records iteration 1, is told to stop, and returns CANCELLED with a
       result set: the caller gets the parameters it reached. */
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL),
                  MOE_ERR_CANCELLED);
    ck_assert_int_eq(calls, 1); /* iteration 0 (the start) is not reported */
    ck_assert_int_eq(seen.iteration_status, MOE_ERR_CANCELLED);
    snapshot_take(model, &after);
    ck_assert(memcmp(&before, &after, sizeof before) != 0);
    double beta[MAX_P], variance;
    reference_wls(&pr, NULL, beta, &variance);
    ck_assert(close_relative(after.experts[0], beta[0], 1e-9));
    ck_assert(close_relative(after.variances[0], variance, 1e-9));
    moe_fit_report report = {.version = MOE_FIT_REPORT_VERSION};
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_int_eq(report.status, MOE_ERR_CANCELLED);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* partial_fit                                                              */
/* ------------------------------------------------------------------------ */

START_TEST(partial_fit_null_is_unsupported)
{
    static problem pr;
    problem_make(&pr, 100, 1, 808);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_minimal_ops), MOE_OK);
    moe_model_t *model = new_model(2, 1);
    perturb(model);
    snapshot before, after;
    snapshot_take(model, &before);
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL),
                  MOE_ERR_UNSUPPORTED);
    ck_assert_int_eq(seen.fit_calls, 0);
    ck_assert_int_eq(seen.partial_fit_calls, 0);
    snapshot_take(model, &after);
    ck_assert(memcmp(&before, &after, sizeof before) == 0);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(partial_fit_is_called_and_result_canonicalised)
{
    static problem pr;
    problem_make(&pr, 120, 2, 909);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    const size_t K = 3, p = 3;
    moe_model_t *model = new_model(K, 2);
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, pr.w), MOE_OK);
    ck_assert_int_eq(seen.partial_fit_calls, 1);
    ck_assert_int_eq(seen.fit_calls, 0);
    ck_assert_uint_eq(seen.n, pr.n);
    /* The estimator wrote intercepts K, K-1, ..., 1; the caller's model is in canonical
       (ascending) order with the reference gate row zero, and predicts the same. */
    snapshot after;
    snapshot_take(model, &after);
    for (size_t k = 0; k < K; ++k)
        ck_assert_double_eq(after.experts[k * p], (double)(k + 1));
    for (size_t j = 0; j < p; ++j)
        ck_assert_double_eq(after.gate[(K - 1) * p + j], 0.0);
    double predictions[MAX_N];
    ck_assert_int_eq(moe_model_predict(model, pr.n, pr.X, pr.ldx, predictions, pr.n), MOE_OK);
    for (size_t i = 0; i < pr.n; ++i)
        ck_assert_msg(close_relative(predictions[i], seen.working_predictions[i], 1e-12),
                      "row %zu: %.17g, working model %.17g", i, predictions[i],
                      seen.working_predictions[i]);
    moe_fit_report report = {.version = MOE_FIT_REPORT_VERSION};
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_int_eq(report.status, MOE_OK);
    ck_assert_uint_eq(report.iterations, 1);
    ck_assert_int_eq(report.converged, 0);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The ops table and the state's lifetime                                   */
/* ------------------------------------------------------------------------ */

static void expect_rejected_ops(const moe_estimator_ops *ops, moe_status expected,
                                const char *what)
{
    static char not_a_fitter;
    moe_fitter_t *fitter = (moe_fitter_t *)(void *)&not_a_fitter;
    int creates = seen.create_calls;
    moe_status status = moe_fitter_create_custom(&fitter, ops);
    ck_assert_msg(status == expected, "%s: status %d (%s), expected %d (%s)", what, (int)status,
                  moe_strerror(status), (int)expected, moe_strerror(expected));
    ck_assert_msg(fitter == NULL, "%s: *out not NULL after failure", what);
    ck_assert_msg(seen.create_calls == creates, "%s: create was called", what);
    ck_assert_msg(moe_last_error()[0] != '\0', "%s: no message", what);
}

START_TEST(create_custom_rejects_bad_ops)
{
    memset(&seen, 0, sizeof seen);
    moe_estimator_ops ops;

    ops = ols_ops, ops.abi_version = 0;
    expect_rejected_ops(&ops, MOE_ERR_UNSUPPORTED, "abi_version 0");
    ops = ols_ops, ops.abi_version = MOE_ESTIMATOR_ABI_VERSION + 1;
    expect_rejected_ops(&ops, MOE_ERR_UNSUPPORTED, "abi_version + 1");
    ops = ols_ops, ops.name = NULL;
    expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, "NULL name");
    ops = ols_ops, ops.name = "";
    expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, "empty name");
    ops = ols_ops, ops.create = NULL;
    expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, "no create");
    ops = ols_ops, ops.destroy = NULL;
    expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, "no destroy");
    ops = ols_ops, ops.fit = NULL;
    expect_rejected_ops(&ops, MOE_ERR_INVALID_ARGUMENT, "no fit");
    expect_rejected_ops(NULL, MOE_ERR_NULL_POINTER, "NULL ops");
    EXPECT_STATUS(moe_fitter_create_custom(NULL, &ols_ops), MOE_ERR_NULL_POINTER);
    ck_assert_int_eq(seen.create_calls, 0);

    /* Optional members may be NULL. */
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &ols_minimal_ops), MOE_OK);
    ck_assert_ptr_nonnull(fitter);
    ck_assert_str_eq(moe_fitter_estimator_name(fitter), "pooled-ols-minimal");
    moe_fitter_free(fitter);
}
END_TEST

static moe_status refusing_create(void **state)
{
    *state = NULL;
    seen.create_calls++;
    return MOE_ERR_OUT_OF_MEMORY;
}

START_TEST(create_failure_is_reported)
{
    memset(&seen, 0, sizeof seen);
    moe_estimator_ops ops = ols_ops;
    ops.create = refusing_create;
    static char not_a_fitter;
    moe_fitter_t *fitter = (moe_fitter_t *)(void *)&not_a_fitter;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &ops), MOE_ERR_OUT_OF_MEMORY);
    ck_assert_ptr_null(fitter);
    ck_assert_int_eq(seen.create_calls, 1);
}
END_TEST

START_TEST(destroy_called_exactly_once)
{
    static problem pr;
    problem_make(&pr, 100, 1, 1001);
    memset(&seen, 0, sizeof seen);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &ols_ops), MOE_OK);
    ck_assert_int_eq(seen.create_calls, 1);
    void *state = seen.created_state;
    moe_model_t *model = new_model(2, 1);
    /* Fits, options and a partial fit do not destroy or recreate the state. */
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "alpha", "2"), MOE_OK);
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr.n, pr.X, pr.ldx, pr.y, NULL), MOE_OK);
    ck_assert_int_eq(seen.create_calls, 1);
    ck_assert_int_eq(seen.destroy_calls, 0);
    moe_fitter_free(fitter);
    ck_assert_int_eq(seen.destroy_calls, 1);
    ck_assert_ptr_eq(seen.destroyed_state, state);
    moe_model_free(model);

    /* Two fitters from one table have separate states. */
    moe_fitter_t *a = NULL, *b = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&a, &ols_ops), MOE_OK);
    void *state_a = seen.created_state;
    ck_assert_int_eq(moe_fitter_create_custom(&b, &ols_ops), MOE_OK);
    ck_assert_ptr_ne(seen.created_state, state_a);
    moe_fitter_free(a);
    ck_assert_ptr_eq(seen.destroyed_state, state_a);
    moe_fitter_free(b);
    ck_assert_int_eq(seen.destroy_calls, 3);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *custom_suite(void)
{
    Suite *suite = suite_create("custom_estimator");
    TCase *fit = tcase_create("fit");
    tcase_set_timeout(fit, 60);
    tcase_add_test(fit, pooled_ols_one_feature_weighted);
    tcase_add_test(fit, pooled_ols_three_features_unweighted);
    tcase_add_test(fit, pooled_ols_matches_closed_form);
    suite_add_tcase(suite, fit);

    TCase *options = tcase_create("options");
    tcase_add_test(options, options_reach_the_context);
    tcase_add_test(options, unpinned_option_names_go_to_the_estimator);
    tcase_add_test(options, create_custom_rejects_bad_option_tables);
    suite_add_tcase(suite, options);

    TCase *failures = tcase_create("failures");
    tcase_add_test(failures, failing_estimator_leaves_model_unchanged);
    tcase_add_test(failures, validation_happens_before_the_estimator);
    tcase_add_test(failures, restart_index_is_bounded_and_messages_may_alias);
    tcase_add_test(failures, cancel_through_the_context);
    suite_add_tcase(suite, failures);

    TCase *partial = tcase_create("partial_fit");
    tcase_add_test(partial, partial_fit_null_is_unsupported);
    tcase_add_test(partial, partial_fit_is_called_and_result_canonicalised);
    suite_add_tcase(suite, partial);

    TCase *ops = tcase_create("ops");
    tcase_add_test(ops, create_custom_rejects_bad_ops);
    tcase_add_test(ops, create_failure_is_reported);
    tcase_add_test(ops, destroy_called_exactly_once);
    suite_add_tcase(suite, ops);
    return suite;
}

int main(void)
{
    return run_suite(custom_suite());
}
