/*
 * Error handling of the public API: NULL pointers, empty and inconsistent
 * sizes, non-finite and negative inputs, invalid specs, rejected setters,
 * status strings, degenerate data, and the guarantees that a failed call
 * changes nothing and that no call modifies the caller's arrays.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "moe/estimator.h"
#include "support/synthetic.h"
#include "support/runner.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* Something that is not NULL, to preset out-handles with. */
static char not_a_handle;
#define BOGUS_MODEL ((moe_model_t *)(void *)&not_a_handle)
#define BOGUS_FITTER ((moe_fitter_t *)(void *)&not_a_handle)

/* Does `message` contain "<word> <value>" with no digit right after the number? */
static int names(const char *message, const char *word, size_t value)
{
    char needle[64];
    snprintf(needle, sizeof needle, "%s %zu", word, value);
    size_t length = strlen(needle);
    for (const char *at = strstr(message, needle); at != NULL; at = strstr(at + 1, needle)) {
        char next = at[length];
        if (next < '0' || next > '9')
            return 1;
    }
    return 0;
}

/* Every value finite? */
static int all_finite(const double *values, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!isfinite(values[i]))
            return 0;
    return 1;
}

/* The test problem: K = 2 experts, d = 4 features, stored with ldx = 5. The padding
   column holds NaN, which no function may look at. */
enum { K = 2, D = 4, LDX = 5, P = D + 1, N = 40 };

typedef struct problem {
    size_t n;
    double X[N * LDX];
    double y[N];
    double w[N];
} problem;

static problem data;
static moe_model_t *model;
static moe_fitter_t *fitter;

static void problem_make(problem *target, uint64_t seed)
{
    synthetic_truth truth;
    synthetic_data sample;
    synthetic_truth_make(&truth, K, D, 3.0, 1.0, seed);
    synthetic_data_make(&sample, &truth, N, seed + 1);
    test_rng rng = {seed + 2};
    target->n = N;
    for (size_t i = 0; i < N; ++i) {
        for (size_t j = 0; j < D; ++j)
            target->X[i * LDX + j] = sample.X[i * D + j];
        target->X[i * LDX + D] = NAN;
        target->y[i] = sample.y[i];
        target->w[i] = 0.5 + test_uniform(&rng);
    }
    synthetic_data_free(&sample);
    synthetic_truth_free(&truth);
}

/* A model with distinct, non-neutral parameters (so "unchanged" means something). */
static moe_model_t *make_model(void)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *result = NULL;
    ck_assert_int_eq(moe_model_create(&result, &spec), MOE_OK);
    double gate[K * P] = {0.3, -0.7, 0.2, 0.9, -0.4, 0, 0, 0, 0, 0};
    double experts[K * P] = {-2.0, 0.5, 1.5, -0.25, 0.75, 2.0, -1.0, 0.125, 0.6, -0.3};
    double variances[K] = {0.4, 0.9};
    ck_assert_int_eq(moe_model_set_gate(result, gate, K * P), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(result, experts, K * P), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(result, variances, K), MOE_OK);
    return result;
}

static moe_fitter_t *make_fitter(void)
{
    moe_fitter_t *result = NULL;
    ck_assert_int_eq(moe_fitter_create(&result, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(result, MOE_OPT_N_INIT, 2), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(result, MOE_OPT_MAX_ITER, 50), MOE_OK);
    return result;
}

static void setup(void)
{
    problem_make(&data, 11);
    model = make_model();
    fitter = make_fitter();
}

static void teardown(void)
{
    moe_model_free(model);
    moe_fitter_free(fitter);
    model = NULL;
    fitter = NULL;
}

/* All parameters of a model, zero-padded so whole snapshots compare with memcmp. */
typedef struct snapshot {
    double gate[64];
    double experts[64];
    double variances[16];
} snapshot;

static void snapshot_take(const moe_model_t *m, snapshot *s)
{
    memset(s, 0, sizeof *s);
    ck_assert_int_eq(moe_model_get_gate(m, s->gate, 64), MOE_OK);
    ck_assert_int_eq(moe_model_get_experts(m, s->experts, 64), MOE_OK);
    ck_assert_int_eq(moe_model_get_variances(m, s->variances, 16), MOE_OK);
}

static void assert_model_is(const moe_model_t *m, const snapshot *expected, const char *what)
{
    snapshot now;
    snapshot_take(m, &now);
    ck_assert_msg(memcmp(&now, expected, sizeof now) == 0, "model parameters changed by %s",
                  what);
}

static void assert_model_finite(const moe_model_t *m)
{
    snapshot s;
    snapshot_take(m, &s);
    size_t p = moe_model_n_inputs(m), k = moe_model_n_experts(m);
    ck_assert_msg(all_finite(s.gate, k * p), "non-finite gate");
    ck_assert_msg(all_finite(s.experts, k * p), "non-finite expert coefficients");
    ck_assert_msg(all_finite(s.variances, k), "non-finite variances");
    for (size_t j = 0; j < k; ++j)
        ck_assert_msg(s.variances[j] > 0.0, "variance %zu is %g", j, s.variances[j]);
}

/* The data-taking operations, run on `data` (possibly altered by a test). */
typedef enum operation {
    OP_PREDICT,
    OP_GATE_PROBA,
    OP_POSTERIOR,
    OP_LOGLIK,
    OP_CRITERIA,
    OP_FIT,
    OP_COUNT
} operation;

static const char *const operation_names[OP_COUNT] = {
    "predict", "gate_proba", "posterior", "loglik", "criteria", "fit"};

static moe_status run(operation op, size_t n, size_t ldx, const double *X, const double *y,
                      const double *w)
{
    static double out[N * K + 8];
    double loglik = 0.0;
    moe_criteria criteria = {MOE_CRITERIA_VERSION, 0, 0, 0, 0, 0, 0, 0};
    switch (op) {
    case OP_PREDICT: return moe_model_predict(model, n, X, ldx, out, n);
    case OP_GATE_PROBA: return moe_model_gate_proba(model, n, X, ldx, out, n * K);
    case OP_POSTERIOR: return moe_model_posterior(model, n, X, ldx, y, out, n * K);
    case OP_LOGLIK: return moe_model_loglik(model, n, X, ldx, y, w, &loglik);
    case OP_CRITERIA: return moe_model_criteria(model, n, X, ldx, y, w, &criteria);
    case OP_FIT: return moe_fitter_fit(fitter, model, n, X, ldx, y, w);
    case OP_COUNT: break;
    }
    return MOE_ERR_INTERNAL;
}

static int uses_y(operation op)
{
    return op == OP_POSTERIOR || op == OP_LOGLIK || op == OP_CRITERIA || op == OP_FIT;
}

static int uses_weights(operation op)
{
    return op == OP_LOGLIK || op == OP_CRITERIA || op == OP_FIT;
}

/* ------------------------------------------------------------------------ */
/* NULL pointers                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(null_model_lifecycle)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_model_t *out = BOGUS_MODEL;

    EXPECT_STATUS(moe_model_spec_init(NULL, MOE_MODEL_SPEC_VERSION), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_create(NULL, &spec), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_create(&out, NULL), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);
    ck_assert_str_ne(moe_last_error(), "");

    EXPECT_STATUS(moe_model_clone(NULL, model), MOE_ERR_NULL_POINTER);
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_clone(&out, NULL), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);

    EXPECT_STATUS(moe_model_get_spec(NULL, &spec), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_spec(model, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_canonicalize(NULL), MOE_ERR_NULL_POINTER);
}
END_TEST

START_TEST(null_model_parameters)
{
    double buffer[64];
    snapshot before;
    snapshot_take(model, &before);
    EXPECT_STATUS(moe_model_get_gate(NULL, buffer, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_gate(model, NULL, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_set_gate(NULL, buffer, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_set_gate(model, NULL, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_experts(NULL, buffer, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_experts(model, NULL, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_set_experts(NULL, buffer, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_set_experts(model, NULL, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_variances(NULL, buffer, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_variances(model, NULL, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_set_variances(NULL, buffer, 64), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_set_variances(model, NULL, 64), MOE_ERR_NULL_POINTER);
    assert_model_is(model, &before, "setters given NULL");
}
END_TEST

START_TEST(null_model_data_functions)
{
    double out[N * K];
    double loglik = 0.0;
    moe_criteria criteria = {MOE_CRITERIA_VERSION, 0, 0, 0, 0, 0, 0, 0};
    const double *X = data.X, *y = data.y, *w = data.w;

    EXPECT_STATUS(moe_model_predict(NULL, N, X, LDX, out, N), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_predict(model, N, NULL, LDX, out, N), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_predict(model, N, X, LDX, NULL, N), MOE_ERR_NULL_POINTER);

    EXPECT_STATUS(moe_model_gate_proba(NULL, N, X, LDX, out, N * K), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_gate_proba(model, N, NULL, LDX, out, N * K), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_gate_proba(model, N, X, LDX, NULL, N * K), MOE_ERR_NULL_POINTER);

    EXPECT_STATUS(moe_model_posterior(NULL, N, X, LDX, y, out, N * K), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_posterior(model, N, NULL, LDX, y, out, N * K), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_posterior(model, N, X, LDX, NULL, out, N * K), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_posterior(model, N, X, LDX, y, NULL, N * K), MOE_ERR_NULL_POINTER);

    EXPECT_STATUS(moe_model_loglik(NULL, N, X, LDX, y, w, &loglik), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_loglik(model, N, NULL, LDX, y, w, &loglik), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_loglik(model, N, X, LDX, NULL, w, &loglik), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_loglik(model, N, X, LDX, y, w, NULL), MOE_ERR_NULL_POINTER);

    EXPECT_STATUS(moe_model_criteria(NULL, N, X, LDX, y, w, &criteria), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_criteria(model, N, NULL, LDX, y, w, &criteria), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_criteria(model, N, X, LDX, NULL, w, &criteria), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_criteria(model, N, X, LDX, y, w, NULL), MOE_ERR_NULL_POINTER);

    /* weights == NULL is not an error: it means all ones. */
    EXPECT_STATUS(moe_model_loglik(model, N, X, LDX, y, NULL, &loglik), MOE_OK);
    ck_assert(isfinite(loglik));
}
END_TEST

START_TEST(null_fitter_functions)
{
    moe_fitter_t *out = BOGUS_FITTER;
    long long integer = 0;
    double real = 0.0, trace[4];
    size_t length = 0;
    moe_fit_report report = {.version = MOE_FIT_REPORT_VERSION};
    const double *X = data.X, *y = data.y;

    EXPECT_STATUS(moe_fitter_create(NULL, "em"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_create(&out, NULL), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);
    EXPECT_STATUS(moe_fitter_create_custom(NULL, NULL), MOE_ERR_NULL_POINTER);
    out = BOGUS_FITTER;
    EXPECT_STATUS(moe_fitter_create_custom(&out, NULL), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);

    EXPECT_STATUS(moe_fitter_set_int(NULL, MOE_OPT_MAX_ITER, 10), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_set_double(NULL, MOE_OPT_TOLERANCE, 1e-6), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_int(NULL, MOE_OPT_MAX_ITER, &integer), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_int(fitter, MOE_OPT_MAX_ITER, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_double(NULL, MOE_OPT_TOLERANCE, &real), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_double(fitter, MOE_OPT_TOLERANCE, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_set_option(NULL, "max_iter", "10"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_set_option(fitter, NULL, "10"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "max_iter", NULL), MOE_ERR_NULL_POINTER);
    ck_assert_int_eq(moe_fitter_get_int(fitter, MOE_OPT_MAX_ITER, &integer), MOE_OK);
    ck_assert_int_eq(integer, 50);
    EXPECT_STATUS(moe_fitter_set_progress(NULL, NULL, NULL), MOE_ERR_NULL_POINTER);
    /* A NULL callback on a real fitter just means "no callback". */
    EXPECT_STATUS(moe_fitter_set_progress(fitter, NULL, NULL), MOE_OK);

    snapshot before;
    snapshot_take(model, &before);
    EXPECT_STATUS(moe_fitter_fit(NULL, model, N, X, LDX, y, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_fit(fitter, NULL, N, X, LDX, y, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, NULL, LDX, y, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, LDX, NULL, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_partial_fit(NULL, model, N, X, LDX, y, NULL), MOE_ERR_NULL_POINTER);
    assert_model_is(model, &before, "fits given NULL");

    EXPECT_STATUS(moe_fitter_get_report(NULL, &report), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_report(fitter, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_trace(NULL, trace, 4, &length), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, 4, NULL), MOE_ERR_NULL_POINTER);
    /* trace == NULL asks for the length only. */
    EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
}
END_TEST

START_TEST(null_context_functions)
{
    long long integer = 0;
    double real = 0.0;
    size_t n = 0;
    ck_assert_ptr_null(moe_context_model(NULL));
    EXPECT_STATUS(moe_context_data(NULL, &n, NULL, NULL, NULL, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_get_int(NULL, MOE_OPT_MAX_ITER, &integer), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_get_double(NULL, MOE_OPT_TOLERANCE, &real), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_iteration(NULL, 0, 1, -1.0), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_set_result(NULL, 0, 1), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_fail(NULL, MOE_ERR_NUMERICAL, "x"), MOE_ERR_NULL_POINTER);
}
END_TEST

/* An estimator that probes the context functions with NULL out-pointers. */
static struct {
    int ran;
    moe_status get_int_null, get_double_null, data_all_null;
    int model_non_null;
} probe;

static moe_status probe_create(void **state)
{
    *state = NULL;
    return MOE_OK;
}

static void probe_destroy(void *state)
{
    (void)state;
}

static moe_status probe_fit(void *state, moe_fit_context *context)
{
    (void)state;
    probe.ran = 1;
    probe.get_int_null = moe_context_get_int(context, MOE_OPT_MAX_ITER, NULL);
    probe.get_double_null = moe_context_get_double(context, MOE_OPT_TOLERANCE, NULL);
    probe.data_all_null = moe_context_data(context, NULL, NULL, NULL, NULL, NULL);
    probe.model_non_null = moe_context_model(context) != NULL;
    return moe_context_fail(context, MOE_ERR_NUMERICAL, "probe done");
}

static const moe_estimator_ops probe_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "probe",
    .create = probe_create,
    .destroy = probe_destroy,
    .set_option = NULL,
    .fit = probe_fit,
    .partial_fit = NULL,
    .options = MOE_OPTIONS_ALL,
};

START_TEST(null_context_outputs)
{
    moe_fitter_t *custom = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&custom, &probe_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(custom, model, N, data.X, LDX, data.y, NULL),
                  MOE_ERR_NUMERICAL);
    ck_assert_int_eq(probe.ran, 1);
    ck_assert_int_eq(probe.get_int_null, MOE_ERR_NULL_POINTER);
    ck_assert_int_eq(probe.get_double_null, MOE_ERR_NULL_POINTER);
    /* "any out-pointer may be NULL" */
    ck_assert_int_eq(probe.data_all_null, MOE_OK);
    ck_assert_int_eq(probe.model_non_null, 1);
    moe_fitter_free(custom);
}
END_TEST

START_TEST(free_null_is_noop)
{
    /* Must neither crash nor touch the thread's error slot. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 0;
    moe_model_t *out = NULL;
    ck_assert_int_eq(moe_model_create(&out, &spec), MOE_ERR_INVALID_ARGUMENT);
    char before[512];
    snprintf(before, sizeof before, "%s", moe_last_error());
    moe_model_free(NULL);
    moe_fitter_free(NULL);
    ck_assert_str_eq(moe_last_error(), before);
}
END_TEST

START_TEST(getters_on_null)
{
    ck_assert_int_eq((int)moe_model_family(NULL), 0);
    ck_assert_int_eq((int)moe_model_link(NULL), 0);
    ck_assert_uint_eq(moe_model_n_experts(NULL), 0);
    ck_assert_uint_eq(moe_model_n_features(NULL), 0);
    ck_assert_uint_eq(moe_model_n_classes(NULL), 0);
    ck_assert_int_eq(moe_model_has_intercept(NULL), 0);
    ck_assert_uint_eq(moe_model_n_inputs(NULL), 0);
    ck_assert_uint_eq(moe_model_expert_rows(NULL), 0);
    ck_assert_uint_eq(moe_model_n_free_params(NULL), 0);
    ck_assert_ptr_nonnull(moe_model_last_error(NULL));
    ck_assert_str_eq(moe_model_last_error(NULL), "");
    ck_assert_ptr_nonnull(moe_fitter_last_error(NULL));
    ck_assert_str_eq(moe_fitter_last_error(NULL), "");
    /* Not documented beyond "the name"; it must at least not crash. */
    const char *name = moe_fitter_estimator_name(NULL);
    ck_assert(name == NULL || name[0] != '\0');
    /* Positive control: on a real model the same getters are not 0. */
    ck_assert_int_eq(moe_model_family(model), MOE_FAMILY_GAUSSIAN);
    ck_assert_uint_eq(moe_model_n_experts(model), K);
    ck_assert_uint_eq(moe_model_n_features(model), D);
    ck_assert_int_eq(moe_model_has_intercept(model), 1);
    ck_assert_uint_eq(moe_model_n_inputs(model), P);
    ck_assert_uint_eq(moe_model_expert_rows(model), 1);
    ck_assert_uint_eq(moe_model_n_free_params(model), (K - 1) * P + K * (P + 1));
}
END_TEST

START_TEST(option_listing_errors)
{
    moe_option_info info;
    EXPECT_STATUS(moe_option_info_init(NULL, MOE_OPTION_INFO_VERSION), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_option_info_init(&info, 0), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_option_info_init(&info, MOE_OPTION_INFO_VERSION + 1), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_option_info_init(&info, MOE_OPTION_INFO_VERSION), MOE_OK);
    ck_assert_uint_eq(moe_fitter_option_count(NULL), 0);
    EXPECT_STATUS(moe_fitter_option_info(NULL, 0, &info), MOE_ERR_NULL_POINTER);
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "ot"), MOE_OK);
    EXPECT_STATUS(moe_fitter_option_info(fitter, 0, NULL), MOE_ERR_NULL_POINTER);
    size_t count = moe_fitter_option_count(fitter);
    ck_assert_uint_gt(count, 0);
    EXPECT_STATUS(moe_fitter_option_info(fitter, count, &info), MOE_ERR_NOT_FOUND);
    EXPECT_STATUS(moe_fitter_option_info(fitter, (size_t)-1, &info), MOE_ERR_NOT_FOUND);
    /* A version the caller did not set is refused, not guessed. */
    info.version = 0;
    EXPECT_STATUS(moe_fitter_option_info(fitter, 0, &info), MOE_ERR_UNSUPPORTED);
    info.version = MOE_OPTION_INFO_VERSION + 1;
    EXPECT_STATUS(moe_fitter_option_info(fitter, 0, &info), MOE_ERR_UNSUPPORTED);
    double value = 0.0;
    EXPECT_STATUS(moe_fitter_get_option(NULL, "tol", &value), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_option(fitter, NULL, &value), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "tol", NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "no_such_option", &value), MOE_ERR_NOT_FOUND);
    /* A pinned option ot does not read is not one of its options. */
    EXPECT_STATUS(moe_fitter_get_option(fitter, "optimizer", &value), MOE_ERR_NOT_FOUND);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "shards", &value), MOE_OK);
    moe_fitter_free(fitter);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Sizes                                                                    */
/* ------------------------------------------------------------------------ */

START_TEST(zero_rows)
{
    snapshot before;
    snapshot_take(model, &before);
    for (int op = 0; op < OP_COUNT; ++op) {
        moe_status status = run((operation)op, 0, LDX, data.X, data.y, data.w);
        ck_assert_msg(status == MOE_ERR_EMPTY_INPUT, "%s with n = 0 returned %d (%s)",
                      operation_names[op], (int)status, moe_strerror(status));
        ck_assert_str_ne(moe_last_error(), "");
    }
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 0, data.X, LDX, data.y, NULL),
                  MOE_ERR_EMPTY_INPUT);
    ck_assert_str_ne(moe_fitter_last_error(fitter), "");
    assert_model_is(model, &before, "fits with n = 0");
}
END_TEST

START_TEST(leading_dimension_too_small)
{
    snapshot before;
    snapshot_take(model, &before);
    for (int op = 0; op < OP_COUNT; ++op) {
        moe_status status = run((operation)op, N, D - 1, data.X, data.y, data.w);
        ck_assert_msg(status == MOE_ERR_DIMENSION, "%s with ldx = d - 1 returned %d (%s)",
                      operation_names[op], (int)status, moe_strerror(status));
        status = run((operation)op, N, 0, data.X, data.y, data.w);
        ck_assert_msg(status == MOE_ERR_DIMENSION, "%s with ldx = 0 returned %d (%s)",
                      operation_names[op], (int)status, moe_strerror(status));
    }
    assert_model_is(model, &before, "fits with a short ldx");
}
END_TEST

START_TEST(ldx_padding_is_ignored)
{
    /* The padding column is NaN; with ldx = 5 > d = 4 every call must succeed. */
    for (int op = 0; op < OP_COUNT; ++op) {
        moe_status status = run((operation)op, N, LDX, data.X, data.y, data.w);
        ck_assert_msg(status == MOE_OK, "%s with NaN padding returned %d (%s): %s",
                      operation_names[op], (int)status, moe_strerror(status), moe_last_error());
    }
}
END_TEST

/* Fill a buffer with a recognisable value, to see whether a failing call wrote to it. */
static void fill(double *buffer, size_t count, double value)
{
    for (size_t i = 0; i < count; ++i)
        buffer[i] = value;
}

static int filled_with(const double *buffer, size_t count, double value)
{
    for (size_t i = 0; i < count; ++i)
        if (buffer[i] != value)
            return 0;
    return 1;
}

START_TEST(output_buffers_one_too_small)
{
    double out[N * K];
    fill(out, N * K, 12345.0);
    EXPECT_STATUS(moe_model_predict(model, N, data.X, LDX, out, N - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_gate_proba(model, N, data.X, LDX, out, N * K - 1),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_posterior(model, N, data.X, LDX, data.y, out, N * K - 1),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_predict(model, N, data.X, LDX, out, 0), MOE_ERR_DIMENSION);
    ck_assert_msg(filled_with(out, N * K, 12345.0), "a failing call wrote to the output");
    /* Exactly the documented length works. */
    EXPECT_STATUS(moe_model_predict(model, N, data.X, LDX, out, N), MOE_OK);
    EXPECT_STATUS(moe_model_gate_proba(model, N, data.X, LDX, out, N * K), MOE_OK);
    EXPECT_STATUS(moe_model_posterior(model, N, data.X, LDX, data.y, out, N * K), MOE_OK);
}
END_TEST

START_TEST(parameter_buffers_one_too_small)
{
    snapshot before;
    snapshot_take(model, &before);
    double buffer[K * P];
    fill(buffer, K * P, 777.0);
    EXPECT_STATUS(moe_model_get_gate(model, buffer, K * P - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_get_experts(model, buffer, K * P - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_get_variances(model, buffer, K - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_get_gate(model, buffer, 0), MOE_ERR_DIMENSION);
    ck_assert_msg(filled_with(buffer, K * P, 777.0), "a failing getter wrote to the buffer");

    double values[K * P] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    EXPECT_STATUS(moe_model_set_gate(model, values, K * P - 1), MOE_ERR_DIMENSION);
    ck_assert_str_ne(moe_model_last_error(model), "");
    EXPECT_STATUS(moe_model_set_experts(model, values, K * P - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_set_variances(model, values, K - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_set_variances(model, values, 0), MOE_ERR_DIMENSION);
    assert_model_is(model, &before, "setters with short buffers");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Non-finite and negative inputs                                           */
/* ------------------------------------------------------------------------ */

static const char *value_name(double value)
{
    return isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf";
}

/* Put `bad` at X[row, column] and check every operation reports that place. */
static void check_bad_x(size_t row, size_t column, double bad)
{
    snapshot before;
    snapshot_take(model, &before);
    double saved = data.X[row * LDX + column];
    data.X[row * LDX + column] = bad;
    for (int op = 0; op < OP_COUNT; ++op) {
        moe_status status = run((operation)op, N, LDX, data.X, data.y, data.w);
        const char *message = moe_last_error();
        ck_assert_msg(status == MOE_ERR_NON_FINITE, "%s with %s at X[%zu,%zu] returned %d (%s)",
                      operation_names[op], value_name(bad), row, column, (int)status,
                      moe_strerror(status));
        ck_assert_msg(names(message, "row", row) && names(message, "column", column),
                      "%s: moe_last_error() '%s' does not name row %zu column %zu",
                      operation_names[op], message, row, column);
        if (op == OP_FIT) {
            const char *own = moe_fitter_last_error(fitter);
            ck_assert_msg(names(own, "row", row) && names(own, "column", column),
                          "moe_fitter_last_error() '%s' does not name row %zu column %zu", own,
                          row, column);
        }
    }
    data.X[row * LDX + column] = saved;
    assert_model_is(model, &before, "a fit on non-finite X");
}

START_TEST(non_finite_x)
{
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; ++b) {
        check_bad_x(17, 3, bad[b]);
        check_bad_x(0, 0, bad[b]);
        check_bad_x(N - 1, D - 1, bad[b]);
        check_bad_x(23, 1, bad[b]);
    }
}
END_TEST

START_TEST(non_finite_y)
{
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    const size_t row = 23;
    for (int b = 0; b < 3; ++b) {
        double saved = data.y[row];
        data.y[row] = bad[b];
        for (int op = 0; op < OP_COUNT; ++op) {
            if (!uses_y((operation)op))
                continue;
            moe_status status = run((operation)op, N, LDX, data.X, data.y, data.w);
            ck_assert_msg(status == MOE_ERR_NON_FINITE, "%s with %s in y returned %d (%s)",
                          operation_names[op], value_name(bad[b]), (int)status,
                          moe_strerror(status));
            ck_assert_msg(names(moe_last_error(), "row", row), "'%s' does not name row %zu",
                          moe_last_error(), row);
        }
        ck_assert_msg(names(moe_fitter_last_error(fitter), "row", row),
                      "fitter message '%s' does not name row %zu",
                      moe_fitter_last_error(fitter), row);
        data.y[row] = saved;
    }
}
END_TEST

START_TEST(non_finite_weights)
{
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    const size_t row = 11;
    for (int b = 0; b < 3; ++b) {
        double saved = data.w[row];
        data.w[row] = bad[b];
        for (int op = 0; op < OP_COUNT; ++op) {
            if (!uses_weights((operation)op))
                continue;
            moe_status status = run((operation)op, N, LDX, data.X, data.y, data.w);
            ck_assert_msg(status == MOE_ERR_NON_FINITE, "%s with %s weight returned %d (%s)",
                          operation_names[op], value_name(bad[b]), (int)status,
                          moe_strerror(status));
            ck_assert_msg(names(moe_last_error(), "row", row), "'%s' does not name row %zu",
                          moe_last_error(), row);
        }
        data.w[row] = saved;
    }
}
END_TEST

START_TEST(negative_weights)
{
    const double bad[2] = {-1.0, -1e-300}; /* -Inf is a non-finite weight, covered above */
    const size_t row = 29;
    for (int b = 0; b < 2; ++b) {
        double saved = data.w[row];
        data.w[row] = bad[b];
        snapshot before;
        snapshot_take(model, &before);
        for (int op = 0; op < OP_COUNT; ++op) {
            if (!uses_weights((operation)op))
                continue;
            moe_status status = run((operation)op, N, LDX, data.X, data.y, data.w);
            ck_assert_msg(status == MOE_ERR_NEGATIVE_WEIGHT, "%s with weight %g returned %d (%s)",
                          operation_names[op], bad[b], (int)status, moe_strerror(status));
            ck_assert_msg(names(moe_last_error(), "row", row), "'%s' does not name row %zu",
                          moe_last_error(), row);
        }
        ck_assert_msg(names(moe_fitter_last_error(fitter), "row", row),
                      "fitter message '%s' does not name row %zu",
                      moe_fitter_last_error(fitter), row);
        assert_model_is(model, &before, "a fit with a negative weight");
        data.w[row] = saved;
    }
    /* A zero weight is allowed. */
    data.w[row] = 0.0;
    for (int op = 0; op < OP_COUNT; ++op)
        if (uses_weights((operation)op))
            ck_assert_int_eq(run((operation)op, N, LDX, data.X, data.y, data.w), MOE_OK);
}
END_TEST

START_TEST(all_zero_weights)
{
    /* The header does not pin the status; libmoe reports MOE_ERR_INVALID_ARGUMENT
       ("all weights are zero"). A fit must not treat it as a success either way. */
    double zero[N] = {0};
    snapshot before;
    snapshot_take(model, &before);
    for (int op = 0; op < OP_COUNT; ++op) {
        if (!uses_weights((operation)op))
            continue;
        moe_status status = run((operation)op, N, LDX, data.X, data.y, zero);
        ck_assert_msg(status == MOE_ERR_INVALID_ARGUMENT, "%s with zero weights returned %d (%s)",
                      operation_names[op], (int)status, moe_strerror(status));
        ck_assert_str_ne(moe_last_error(), "");
    }
    assert_model_is(model, &before, "a fit with all-zero weights");
}
END_TEST

START_TEST(too_few_samples)
{
    size_t needed = moe_model_n_free_params(model);
    ck_assert_uint_eq(needed, 17);
    snapshot before;
    snapshot_take(model, &before);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, needed - 1, data.X, LDX, data.y, NULL),
                  MOE_ERR_TOO_FEW_SAMPLES);
    ck_assert_str_ne(moe_fitter_last_error(fitter), "");
    EXPECT_STATUS(moe_fitter_fit(fitter, model, 1, data.X, LDX, data.y, NULL),
                  MOE_ERR_TOO_FEW_SAMPLES);
    /* Rows with zero weight do not count: N rows but only needed - 1 with weight. */
    double w[N];
    for (size_t i = 0; i < N; ++i)
        w[i] = i < needed - 1 ? 1.0 : 0.0;
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, w),
                  MOE_ERR_TOO_FEW_SAMPLES);
    assert_model_is(model, &before, "fits with too few samples");
    /* Prediction has no such minimum. */
    double out[1];
    EXPECT_STATUS(moe_model_predict(model, 1, data.X, LDX, out, 1), MOE_OK);
    /* One more usable row is enough to pass validation. */
    w[needed - 1] = 1.0;
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, w), MOE_OK);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Specs                                                                    */
/* ------------------------------------------------------------------------ */

static void expect_bad_spec(const moe_model_spec *spec, moe_status expected, const char *what)
{
    moe_model_t *out = BOGUS_MODEL;
    moe_status status = moe_model_create(&out, spec);
    ck_assert_msg(status == expected, "spec with %s: got %d (%s), expected %d (%s)", what,
                  (int)status, moe_strerror(status), (int)expected, moe_strerror(expected));
    ck_assert_msg(out == NULL, "spec with %s: *out not NULL after failure", what);
    ck_assert_msg(moe_last_error()[0] != '\0', "spec with %s: no message", what);
}

START_TEST(invalid_specs)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_model_spec base = MOE_MODEL_SPEC_INIT;

    spec = base, spec.n_experts = 0;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "n_experts 0");
    spec = base, spec.version = 0;
    expect_bad_spec(&spec, MOE_ERR_UNSUPPORTED, "version 0");
    spec = base, spec.version = MOE_MODEL_SPEC_VERSION + 1;
    expect_bad_spec(&spec, MOE_ERR_UNSUPPORTED, "version + 1");
    spec = base, spec.family = (moe_family)99;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "family 99");
    spec = base, spec.family = (moe_family)0;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "family 0");
    spec = base, spec.n_classes = 2;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "Gaussian with n_classes 2");
    spec = base, spec.n_classes = 1;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "Gaussian with n_classes 1");
    spec = base, spec.intercept = 2;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "intercept 2");
    spec = base, spec.intercept = -1;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "intercept -1");
    spec = base, spec.n_features = 0, spec.intercept = 0;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "no features and no intercept");
    spec = base, spec.family = MOE_FAMILY_LOGISTIC, spec.n_classes = 2;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "logistic with n_classes 2");
    spec = base, spec.family = MOE_FAMILY_MULTINOMIAL, spec.n_classes = 0;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "multinomial without n_classes");
    spec = base, spec.family = MOE_FAMILY_MULTINOMIAL, spec.n_classes = 1;
    expect_bad_spec(&spec, MOE_ERR_INVALID_ARGUMENT, "multinomial with one class");
    spec = base, spec.family = MOE_FAMILY_LOGISTIC, spec.link = MOE_LINK_SIGMOID;
    expect_bad_spec(&spec, MOE_ERR_UNSUPPORTED, "logistic with a sigmoid link");
    spec = base, spec.family = MOE_FAMILY_MULTINOMIAL, spec.n_classes = 3;
    spec.link = MOE_LINK_RELU;
    expect_bad_spec(&spec, MOE_ERR_UNSUPPORTED, "multinomial with a relu link");
    /* Sigmoid and ReLU are links of Gaussian experts only; a number beyond them is none. */
    spec = base, spec.link = (moe_link)3;
    expect_bad_spec(&spec, MOE_ERR_UNSUPPORTED, "link 3");

    /* Positive controls: the defaults, both non-identity Gaussian links and an
       intercept-only model are valid. */
    moe_model_t *out = NULL;
    EXPECT_STATUS(moe_model_create(&out, &base), MOE_OK);
    ck_assert_ptr_nonnull(out);
    moe_model_free(out);
    moe_link links[] = {MOE_LINK_SIGMOID, MOE_LINK_RELU};
    for (size_t l = 0; l < 2; ++l) {
        spec = base, spec.link = links[l];
        out = NULL;
        EXPECT_STATUS(moe_model_create(&out, &spec), MOE_OK);
        ck_assert_int_eq((int)moe_model_link(out), (int)links[l]);
        moe_model_free(out);
    }
    spec = base, spec.n_features = 0, spec.intercept = 1;
    out = NULL;
    EXPECT_STATUS(moe_model_create(&out, &spec), MOE_OK);
    ck_assert_uint_eq(moe_model_n_inputs(out), 1);
    moe_model_free(out);
}
END_TEST

START_TEST(spec_versions)
{
    moe_model_spec spec;
    memset(&spec, 0xAB, sizeof spec);
    EXPECT_STATUS(moe_model_spec_init(&spec, 0), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_model_spec_init(&spec, MOE_MODEL_SPEC_VERSION + 1), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_model_spec_init(&spec, MOE_MODEL_SPEC_VERSION), MOE_OK);
    moe_model_spec defaults = MOE_MODEL_SPEC_INIT;
    ck_assert_uint_eq(spec.version, MOE_MODEL_SPEC_VERSION);
    ck_assert_int_eq(spec.family, defaults.family);
    ck_assert_uint_eq(spec.n_experts, defaults.n_experts);
    ck_assert_uint_eq(spec.n_features, defaults.n_features);
    ck_assert_int_eq(spec.intercept, defaults.intercept);
    ck_assert_uint_eq(spec.n_classes, defaults.n_classes);
    ck_assert_int_eq(spec.link, defaults.link);

    moe_model_spec read = MOE_MODEL_SPEC_INIT;
    read.version = 0;
    EXPECT_STATUS(moe_model_get_spec(model, &read), MOE_ERR_UNSUPPORTED);
    read.version = MOE_MODEL_SPEC_VERSION + 1;
    EXPECT_STATUS(moe_model_get_spec(model, &read), MOE_ERR_UNSUPPORTED);
    read.version = MOE_MODEL_SPEC_VERSION;
    EXPECT_STATUS(moe_model_get_spec(model, &read), MOE_OK);
    ck_assert_uint_eq(read.n_features, D);
    ck_assert_uint_eq(read.n_experts, K);

    moe_criteria criteria = {0, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_STATUS(moe_model_criteria(model, N, data.X, LDX, data.y, NULL, &criteria),
                  MOE_ERR_UNSUPPORTED);
    criteria.version = MOE_CRITERIA_VERSION + 1;
    EXPECT_STATUS(moe_model_criteria(model, N, data.X, LDX, data.y, NULL, &criteria),
                  MOE_ERR_UNSUPPORTED);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Setters                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(setters_reject_non_finite)
{
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    snapshot before;
    snapshot_take(model, &before);
    for (int b = 0; b < 3; ++b) {
        /* The bad value comes last, so a setter that copies before checking is caught. */
        double values[K * P];
        for (size_t i = 0; i < K * P; ++i)
            values[i] = 0.01 * (double)(i + 1);
        values[K * P - 1] = bad[b];
        EXPECT_STATUS(moe_model_set_experts(model, values, K * P), MOE_ERR_NON_FINITE);
        ck_assert_str_ne(moe_model_last_error(model), "");
        /* The reference row of the gate is overwritten anyway; a bad value there must
           still be rejected, and so must one in a free row. */
        EXPECT_STATUS(moe_model_set_gate(model, values, K * P), MOE_ERR_NON_FINITE);
        values[K * P - 1] = 0.0;
        values[P - 1] = bad[b];
        EXPECT_STATUS(moe_model_set_gate(model, values, K * P), MOE_ERR_NON_FINITE);
        double variances[K] = {0.5, bad[b]};
        EXPECT_STATUS(moe_model_set_variances(model, variances, K), MOE_ERR_NON_FINITE);
        assert_model_is(model, &before, "rejected setters");
    }
}
END_TEST

START_TEST(setters_reject_non_positive_variances)
{
    const double bad[4] = {0.0, -0.0, -1.0, -1e-300};
    snapshot before;
    snapshot_take(model, &before);
    for (int b = 0; b < 4; ++b) {
        double variances[K] = {2.0, bad[b]};
        EXPECT_STATUS(moe_model_set_variances(model, variances, K), MOE_ERR_INVALID_ARGUMENT);
        ck_assert_str_ne(moe_model_last_error(model), "");
        variances[0] = bad[b];
        variances[1] = 2.0;
        EXPECT_STATUS(moe_model_set_variances(model, variances, K), MOE_ERR_INVALID_ARGUMENT);
        assert_model_is(model, &before, "rejected variances");
    }
    /* Positive control: a tiny positive variance is accepted and read back. */
    double tiny[K] = {1e-300, 3.0}, back[K];
    EXPECT_STATUS(moe_model_set_variances(model, tiny, K), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, back, K), MOE_OK);
    ck_assert_double_eq(back[0], 1e-300);
    ck_assert_double_eq(back[1], 3.0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Status strings                                                           */
/* ------------------------------------------------------------------------ */

START_TEST(strerror_every_status)
{
    const moe_status all[] = {
        MOE_OK, MOE_ERR_INVALID_ARGUMENT, MOE_ERR_NULL_POINTER, MOE_ERR_EMPTY_INPUT,
        MOE_ERR_DIMENSION, MOE_ERR_NON_FINITE, MOE_ERR_NEGATIVE_WEIGHT,
        MOE_ERR_TOO_FEW_SAMPLES, MOE_ERR_OUT_OF_MEMORY, MOE_ERR_NUMERICAL, MOE_ERR_UNSUPPORTED,
        MOE_ERR_IO, MOE_ERR_FORMAT, MOE_ERR_CANCELLED, MOE_ERR_NOT_FOUND,
        MOE_ERR_BUFFER_TOO_SMALL, MOE_ERR_INVALID_LABEL, MOE_ERR_INTERNAL};
    const size_t count = sizeof all / sizeof all[0];
    /* The pinned values themselves (ABI). */
    ck_assert_int_eq(MOE_ERR_INVALID_LABEL, 16);
    ck_assert_int_eq(MOE_ERR_INTERNAL, 99);
    const char *unknown = moe_strerror((moe_status)42);
    ck_assert_ptr_nonnull(unknown);
    for (size_t i = 0; i < count; ++i) {
        const char *text = moe_strerror(all[i]);
        ck_assert_msg(text != NULL && text[0] != '\0', "status %d has no text", (int)all[i]);
        ck_assert_msg(strcmp(text, unknown) != 0, "status %d reads as unknown", (int)all[i]);
        for (size_t j = 0; j < i; ++j)
            ck_assert_msg(strcmp(text, moe_strerror(all[j])) != 0,
                          "statuses %d and %d share the text '%s'", (int)all[i], (int)all[j],
                          text);
    }
    const int others[] = {-1, 17, 18, 50, 98, 100, 1000000};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i)
        ck_assert_ptr_nonnull(moe_strerror((moe_status)others[i]));
}
END_TEST

START_TEST(version_and_last_error)
{
    ck_assert_str_eq(moe_version_string(), MOE_VERSION_STRING);
    ck_assert_int_eq(moe_version_number(), MOE_VERSION_NUMBER);
    ck_assert_ptr_nonnull(moe_last_error());
    /* A failing call leaves a message in the thread slot. */
    moe_model_t *out = NULL;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 0;
    ck_assert_int_eq(moe_model_create(&out, &spec), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(moe_last_error(), "n_experts") != NULL, "message '%s'",
                  moe_last_error());
}
END_TEST

/* A message built from the thread's own last message (a wrapper adding context to a nested
   failure) keeps that message instead of formatting the buffer into itself. */
START_TEST(messages_survive_being_wrapped)
{
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "ismm"), MOE_OK);
    const char *path = "/nonexistent-moe-directory/state.moes";
    ck_assert_int_eq(moe_fitter_load_state(fitter, path), MOE_ERR_IO);
    ck_assert_msg(strstr(moe_fitter_last_error(fitter), "nonexistent-moe-directory") != NULL,
                  "fitter message '%s'", moe_fitter_last_error(fitter));
    ck_assert_msg(strstr(moe_last_error(), "nonexistent-moe-directory") != NULL,
                  "thread message '%s'", moe_last_error());
    moe_fitter_free(fitter);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Degenerate data                                                          */
/* ------------------------------------------------------------------------ */

/* Fit a fresh K = 2 model with d features; expect MOE_OK and finite everything. */
static moe_model_t *fit_expect_ok(size_t d, size_t n, const double *X, size_t ldx,
                                  const double *y, const char *what)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_features = d;
    moe_model_t *m = NULL;
    ck_assert_int_eq(moe_model_create(&m, &spec), MOE_OK);
    moe_status status = moe_fitter_fit(fitter, m, n, X, ldx, y, NULL);
    ck_assert_msg(status == MOE_OK, "%s: fit returned %d (%s): %s", what, (int)status,
                  moe_strerror(status), moe_fitter_last_error(fitter));
    assert_model_finite(m);
    double loglik = NAN;
    ck_assert_int_eq(moe_model_loglik(m, n, X, ldx, y, NULL, &loglik), MOE_OK);
    ck_assert_msg(isfinite(loglik), "%s: log-likelihood %g", what, loglik);
    moe_fit_report report = {.version = MOE_FIT_REPORT_VERSION};
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_msg(isfinite(report.loglik), "%s: report log-likelihood %g", what, report.loglik);
    ck_assert_int_eq(report.status, MOE_OK);
    return m;
}

/* A constant response is refused (every front end passes the message on): Gaussian
   experts' variances would shrink to zero, and the fit "converged" at the variance floor
   with a positive log-likelihood. Rows of zero weight do not count; the model is left as
   it was; counts that never vary still fit (a Poisson rate has no scale to lose). */
static void expect_constant_refused(size_t d, size_t n, const double *X, const double *y,
                                    const double *weights, const char *what)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_features = d;
    moe_model_t *m = NULL;
    ck_assert_int_eq(moe_model_create(&m, &spec), MOE_OK);
    double experts[6] = {0.5, -0.5, 1.0, 2.0, 0.25, -0.25}, after[6];
    ck_assert_int_eq(moe_model_set_experts(m, experts, 2 * (d + 1)), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, m, n, X, d, y, weights), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(moe_fitter_last_error(fitter), "the response is constant") != NULL,
                  "%s: %s", what, moe_fitter_last_error(fitter));
    ck_assert_int_eq(moe_model_get_experts(m, after, 2 * (d + 1)), MOE_OK);
    ck_assert(memcmp(experts, after, 2 * (d + 1) * sizeof(double)) == 0);
    moe_model_free(m);
}

START_TEST(degenerate_constant_y)
{
    double X[60], y[60], weights[60];
    test_rng rng = {5};
    for (size_t i = 0; i < 60; ++i) {
        X[i] = test_normal(&rng);
        y[i] = 2.5;
        weights[i] = 1.0;
    }
    expect_constant_refused(1, 60, X, y, NULL, "constant y");
    y[7] = 3.0; /* varies only on a row without weight */
    weights[7] = 0.0;
    expect_constant_refused(1, 60, X, y, weights, "constant y where the weight is positive");
    weights[7] = 1e-3;
    moe_model_t *m = fit_expect_ok(1, 60, X, 1, y, "one other value");
    moe_model_free(m);
    /* constant y that no expert's mean can equal on every row: an ordinary fit */
    for (size_t i = 0; i < 60; ++i)
        y[i] = 2.5;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.offset_feature = 0; /* y - x varies */
    ck_assert_int_eq(moe_model_create(&m, &spec), MOE_OK);
    ck_assert_msg(moe_fitter_fit(fitter, m, 60, X, 1, y, NULL) == MOE_OK, "with an offset: %s",
                  moe_fitter_last_error(fitter));
    moe_model_free(m);
    spec = (moe_model_spec)MOE_MODEL_SPEC_INIT;
    spec.link = MOE_LINK_SIGMOID; /* 2.5 is outside the sigmoid's range */
    ck_assert_int_eq(moe_model_create(&m, &spec), MOE_OK);
    ck_assert_msg(moe_fitter_fit(fitter, m, 60, X, 1, y, NULL) == MOE_OK, "sigmoid link: %s",
                  moe_fitter_last_error(fitter));
    moe_model_free(m);
    /* ot's shards are fitted alike: a constant response is refused once, by ot itself */
    moe_fitter_t *ot = NULL;
    ck_assert_int_eq(moe_fitter_create(&ot, "ot"), MOE_OK);
    spec = (moe_model_spec)MOE_MODEL_SPEC_INIT;
    ck_assert_int_eq(moe_model_create(&m, &spec), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(ot, m, 60, X, 1, y, NULL), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strncmp(moe_fitter_last_error(ot), "the response is constant", 24) == 0, "%s",
                  moe_fitter_last_error(ot));
    /* one row differs: most of the four shards are constant, and their local fits are not
       refused (the response of the fit varies) */
    y[7] = 3.0;
    ck_assert_msg(moe_fitter_fit(ot, m, 60, X, 1, y, NULL) == MOE_OK, "ot, one row differs: %s",
                  moe_fitter_last_error(ot));
    moe_fitter_free(ot);
    moe_model_free(m);
    /* constant counts: a rate, nothing degenerate */
    spec = (moe_model_spec)MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_POISSON;
    ck_assert_int_eq(moe_model_create(&m, &spec), MOE_OK);
    for (size_t i = 0; i < 60; ++i)
        y[i] = 3.0;
    ck_assert_msg(moe_fitter_fit(fitter, m, 60, X, 1, y, NULL) == MOE_OK, "constant counts: %s",
                  moe_fitter_last_error(fitter));
    moe_model_free(m);
}
END_TEST

START_TEST(degenerate_constant_x)
{
    double X[60 * 2], y[60];
    test_rng rng = {6};
    for (size_t i = 0; i < 60; ++i) {
        X[2 * i] = 1.5;
        X[2 * i + 1] = -4.0;
        y[i] = (i % 2 ? 2.0 : -2.0) + 0.3 * test_normal(&rng);
    }
    moe_model_t *m = fit_expect_ok(2, 60, X, 2, y, "constant X");
    moe_model_free(m);
    /* Constant X and constant y at once. */
    for (size_t i = 0; i < 60; ++i)
        y[i] = -1.0;
    expect_constant_refused(2, 60, X, y, NULL, "constant X and y");
}
END_TEST

START_TEST(degenerate_n_equals_free_params)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_model_t *probe_model = NULL;
    ck_assert_int_eq(moe_model_create(&probe_model, &spec), MOE_OK);
    size_t n = moe_model_n_free_params(probe_model);
    moe_model_free(probe_model);
    ck_assert_uint_eq(n, 8); /* K = 2, d = 1, intercept: 2 gate + 2 x (2 + 1) expert */
    double X[8], y[8];
    test_rng rng = {7};
    for (size_t i = 0; i < n; ++i) {
        X[i] = test_normal(&rng);
        y[i] = test_normal(&rng);
    }
    moe_model_t *m = fit_expect_ok(1, n, X, 1, y, "n == free parameters");
    moe_model_free(m);
}
END_TEST

START_TEST(degenerate_duplicated_rows)
{
    /* 20 distinct rows, each three times. */
    double X[60], y[60], Xu[20], yu[20], three[20];
    test_rng rng = {8};
    for (size_t i = 0; i < 20; ++i) {
        Xu[i] = test_normal(&rng);
        yu[i] = (Xu[i] > 0 ? 3.0 : -1.0) * Xu[i] + 0.2 * test_normal(&rng);
        three[i] = 3.0;
        for (size_t c = 0; c < 3; ++c) {
            X[3 * i + c] = Xu[i];
            y[3 * i + c] = yu[i];
        }
    }
    moe_model_t *m = fit_expect_ok(1, 60, X, 1, y, "duplicated rows");
    /* Frequency weights: three copies weigh as much as weight 3. */
    double tripled = 0.0, weighted = 0.0;
    ck_assert_int_eq(moe_model_loglik(m, 60, X, 1, y, NULL, &tripled), MOE_OK);
    ck_assert_int_eq(moe_model_loglik(m, 20, Xu, 1, yu, three, &weighted), MOE_OK);
    ck_assert_msg(fabs(tripled - weighted) <= 1e-9 * (1.0 + fabs(tripled)), "%.17g vs %.17g",
                  tripled, weighted);
    moe_model_free(m);
}
END_TEST

START_TEST(degenerate_collinear_columns)
{
    double X[60 * 3], y[60];
    test_rng rng = {9};
    for (size_t i = 0; i < 60; ++i) {
        X[3 * i] = test_normal(&rng);
        X[3 * i + 1] = X[3 * i];              /* exact copy */
        X[3 * i + 2] = -2.0 * X[3 * i] + 1.0; /* affine copy: collinear with the intercept */
        y[i] = (i % 2 ? 2.0 : -2.0) * X[3 * i] + 0.1 * test_normal(&rng);
    }
    moe_model_t *m = fit_expect_ok(3, 60, X, 3, y, "collinear columns");
    double out[60];
    ck_assert_int_eq(moe_model_predict(m, 60, X, 3, out, 60), MOE_OK);
    ck_assert(all_finite(out, 60));
    moe_model_free(m);
}
END_TEST

START_TEST(degenerate_intercept_only_without_x)
{
    /* d = 0 with an intercept: X is never read, so NULL is accepted. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_features = 0;
    moe_model_t *m = NULL;
    ck_assert_int_eq(moe_model_create(&m, &spec), MOE_OK);
    double y[40], out[40];
    test_rng rng = {10};
    for (size_t i = 0; i < 40; ++i)
        y[i] = (i % 2 ? 3.0 : -3.0) + 0.3 * test_normal(&rng);
    EXPECT_STATUS(moe_fitter_fit(fitter, m, 40, NULL, 0, y, NULL), MOE_OK);
    assert_model_finite(m);
    EXPECT_STATUS(moe_model_predict(m, 40, NULL, 0, out, 40), MOE_OK);
    ck_assert(all_finite(out, 40));
    moe_model_free(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Nothing changes on failure; nothing of the caller's is modified          */
/* ------------------------------------------------------------------------ */

START_TEST(failed_fit_leaves_model_unchanged)
{
    snapshot before;
    snapshot_take(model, &before);

    /* Validation failure. */
    data.X[3 * LDX + 2] = NAN;
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, NULL),
                  MOE_ERR_NON_FINITE);
    assert_model_is(model, &before, "a fit rejected by validation");
    data.X[3 * LDX + 2] = 0.5;

    /* Estimator failure: y so large that its square overflows, so no restart has a
       finite log-likelihood. */
    double y[N];
    test_rng rng = {12};
    for (size_t i = 0; i < N; ++i)
        y[i] = 1e160 * test_normal(&rng);
    moe_status status = moe_fitter_fit(fitter, model, N, data.X, LDX, y, NULL);
    ck_assert_msg(status == MOE_ERR_NUMERICAL, "fit on overflowing y returned %d (%s)",
                  (int)status, moe_strerror(status));
    ck_assert_str_ne(moe_fitter_last_error(fitter), "");
    assert_model_is(model, &before, "a fit that failed in the estimator");

    /* Estimator failure from init = model as well. */
    ck_assert_int_eq(moe_fitter_set_option(fitter, "init", "model"), MOE_OK);
    status = moe_fitter_fit(fitter, model, N, data.X, LDX, y, NULL);
    ck_assert_int_eq(status, MOE_ERR_NUMERICAL);
    assert_model_is(model, &before, "a fit from the model that failed");

    /* Unsupported partial fit. */
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, N, data.X, LDX, data.y, NULL),
                  MOE_ERR_UNSUPPORTED);
    assert_model_is(model, &before, "an unsupported partial fit");

    /* Positive control: a successful fit does change the parameters. */
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, NULL), MOE_OK);
    snapshot after;
    snapshot_take(model, &after);
    ck_assert(memcmp(&after, &before, sizeof after) != 0);
}
END_TEST

START_TEST(inputs_not_modified)
{
    problem copy;
    memcpy(&copy, &data, sizeof copy);
    double out[N * K], loglik;
    moe_criteria criteria = {MOE_CRITERIA_VERSION, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, data.w), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, NULL), MOE_OK);
    EXPECT_STATUS(moe_model_predict(model, N, data.X, LDX, out, N), MOE_OK);
    EXPECT_STATUS(moe_model_gate_proba(model, N, data.X, LDX, out, N * K), MOE_OK);
    EXPECT_STATUS(moe_model_posterior(model, N, data.X, LDX, data.y, out, N * K), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(model, N, data.X, LDX, data.y, data.w, &loglik), MOE_OK);
    EXPECT_STATUS(moe_model_criteria(model, N, data.X, LDX, data.y, data.w, &criteria), MOE_OK);
    ck_assert_msg(memcmp(copy.X, data.X, sizeof data.X) == 0, "X was modified");
    ck_assert_msg(memcmp(copy.y, data.y, sizeof data.y) == 0, "y was modified");
    ck_assert_msg(memcmp(copy.w, data.w, sizeof data.w) == 0, "weights were modified");

    /* Also on failing calls (validation stops part-way through the data). */
    data.w[N - 1] = -1.0;
    copy.w[N - 1] = -1.0;
    ck_assert_int_eq(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, data.w),
                     MOE_ERR_NEGATIVE_WEIGHT);
    ck_assert_int_eq(moe_model_loglik(model, N, data.X, LDX, data.y, data.w, &loglik),
                     MOE_ERR_NEGATIVE_WEIGHT);
    ck_assert_msg(memcmp(copy.X, data.X, sizeof data.X) == 0, "X was modified");
    ck_assert_msg(memcmp(copy.y, data.y, sizeof data.y) == 0, "y was modified");
    ck_assert_msg(memcmp(copy.w, data.w, sizeof data.w) == 0, "weights were modified");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Persistence (lib/model/io.c)                                             */
/* ------------------------------------------------------------------------ */

START_TEST(io_null_and_sizes)
{
    moe_model_t *out = BOGUS_MODEL;
    size_t written = 0;
    unsigned char bytes[16] = {0};

    EXPECT_STATUS(moe_model_save(NULL, "unused.moe"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_save(model, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_load(NULL, "unused.moe"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_load(&out, NULL), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);
    EXPECT_STATUS(moe_model_save_buffer(NULL, bytes, sizeof bytes, &written),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_save_buffer(model, bytes, sizeof bytes, NULL),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_load_buffer(NULL, bytes, sizeof bytes), MOE_ERR_NULL_POINTER);
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load_buffer(&out, NULL, sizeof bytes), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);

    /* Size query, then one byte too small, then exactly right. */
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &written), MOE_OK);
    ck_assert_uint_gt(written, 0);
    size_t size = written;
    unsigned char *buffer = malloc(size);
    ck_assert_ptr_nonnull(buffer);
    written = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, buffer, size - 1, &written),
                  MOE_ERR_BUFFER_TOO_SMALL);
    ck_assert_uint_eq(written, size);
    EXPECT_STATUS(moe_model_save_buffer(model, buffer, size, &written), MOE_OK);
    ck_assert_uint_eq(written, size);

    /* A truncated or empty buffer is not a model. */
    out = BOGUS_MODEL;
    moe_status status = moe_model_load_buffer(&out, buffer, size - 1);
    ck_assert_msg(status == MOE_ERR_FORMAT, "truncated buffer: %d (%s)", (int)status,
                  moe_strerror(status));
    ck_assert_ptr_null(out);
    out = BOGUS_MODEL;
    status = moe_model_load_buffer(&out, buffer, 0);
    ck_assert_msg(status == MOE_ERR_FORMAT || status == MOE_ERR_EMPTY_INPUT,
                  "empty buffer: %d (%s)", (int)status, moe_strerror(status));
    ck_assert_ptr_null(out);

    /* Any single flipped bit makes the bytes invalid (the format is CRC-protected). */
    for (size_t i = 0; i < size; ++i) {
        buffer[i] ^= 0x10;
        out = BOGUS_MODEL;
        status = moe_model_load_buffer(&out, buffer, size);
        ck_assert_msg(status == MOE_ERR_FORMAT, "byte %zu of %zu flipped: %d (%s)", i, size,
                      (int)status, moe_strerror(status));
        ck_assert_ptr_null(out);
        buffer[i] ^= 0x10;
    }

    /* The complete buffer loads back into the same parameters. */
    EXPECT_STATUS(moe_model_load_buffer(&out, buffer, size), MOE_OK);
    snapshot original, loaded;
    snapshot_take(model, &original);
    snapshot_take(out, &loaded);
    ck_assert(memcmp(&original, &loaded, sizeof original) == 0);
    moe_model_free(out);
    free(buffer);

    /* A file that cannot be opened. */
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load(&out, "/nonexistent-directory/model.moe"), MOE_ERR_IO);
    ck_assert_ptr_null(out);
    EXPECT_STATUS(moe_model_save(model, "/nonexistent-directory/model.moe"), MOE_ERR_IO);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Messages about a row: one prefix (moe/common.h) that front ends rewrite  */
/* ------------------------------------------------------------------------ */

static void expect_prefix(const char *message, const char *prefix, const char *what)
{
    ck_assert_msg(strncmp(message, prefix, strlen(prefix)) == 0,
                  "%s: '%s' does not start with '%s'", what, message, prefix);
}

START_TEST(row_messages_share_one_prefix)
{
    double value = 0.0;
    double saved = data.X[17 * LDX + 3];
    data.X[17 * LDX + 3] = NAN;
    EXPECT_STATUS(moe_model_loglik(model, N, data.X, LDX, data.y, data.w, &value),
                  MOE_ERR_NON_FINITE);
    expect_prefix(moe_last_error(), "row 17, column 3: ", "NaN in X");
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, LDX, data.y, data.w),
                  MOE_ERR_NON_FINITE);
    expect_prefix(moe_fitter_last_error(fitter), "row 17, column 3: ", "a fit with NaN in X");
    data.X[17 * LDX + 3] = saved;

    saved = data.y[23];
    data.y[23] = INFINITY;
    EXPECT_STATUS(moe_model_loglik(model, N, data.X, LDX, data.y, data.w, &value),
                  MOE_ERR_NON_FINITE);
    expect_prefix(moe_last_error(), "row 23, response: ", "an infinite response");
    data.y[23] = saved;

    saved = data.w[11];
    data.w[11] = NAN;
    EXPECT_STATUS(moe_model_loglik(model, N, data.X, LDX, data.y, data.w, &value),
                  MOE_ERR_NON_FINITE);
    expect_prefix(moe_last_error(), "row 11, weight: ", "a NaN weight");
    data.w[11] = -1.0;
    EXPECT_STATUS(moe_model_loglik(model, N, data.X, LDX, data.y, data.w, &value),
                  MOE_ERR_NEGATIVE_WEIGHT);
    expect_prefix(moe_last_error(), "row 11, weight: ", "a negative weight");
    data.w[11] = saved;
}
END_TEST

START_TEST(row_messages_of_families)
{
    /* The case: a negative count for Poisson experts. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_POISSON;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *counts = NULL;
    ck_assert_int_eq(moe_model_create(&counts, &spec), MOE_OK);
    double y[N], value = 0.0;
    for (size_t i = 0; i < N; ++i)
        y[i] = (double)(i % 4);
    y[1] = -1.0;
    EXPECT_STATUS(moe_model_loglik(counts, N, data.X, LDX, y, NULL, &value),
                  MOE_ERR_INVALID_LABEL);
    expect_prefix(moe_last_error(), "row 1, response: ", "a negative count");
    y[1] = 0.5;
    EXPECT_STATUS(moe_fitter_fit(fitter, counts, N, data.X, LDX, y, NULL),
                  MOE_ERR_INVALID_LABEL);
    expect_prefix(moe_fitter_last_error(fitter), "row 1, response: ", "a fractional count");
    moe_model_free(counts);

    spec.family = MOE_FAMILY_LOGISTIC;
    moe_model_t *labels = NULL;
    ck_assert_int_eq(moe_model_create(&labels, &spec), MOE_OK);
    for (size_t i = 0; i < N; ++i)
        y[i] = (double)(i % 2);
    y[7] = 2.0;
    EXPECT_STATUS(moe_model_loglik(labels, N, data.X, LDX, y, NULL, &value),
                  MOE_ERR_INVALID_LABEL);
    expect_prefix(moe_last_error(), "row 7, response: ", "a label beyond the classes");
    moe_model_free(labels);
}
END_TEST

/* moe_model_cluster works in blocks of rows: a row past the first block is still named by
   its place in X. */
START_TEST(row_messages_count_from_the_first_row)
{
    enum { ROWS = 300, BAD = 260 };
    static double X[ROWS * D];
    for (size_t i = 0; i < ROWS * D; ++i)
        X[i] = 0.25;
    /* The gate's logit of expert 0 is 0.3 - 0.7 x1 + 0.2 x2 + 0.9 x3 - 0.4 x4: these two
       values are finite, their terms' sum is not. */
    X[BAD * D + 0] = -DBL_MAX;
    X[BAD * D + 2] = DBL_MAX;
    size_t experts[ROWS];
    moe_status status = moe_model_cluster(model, ROWS, X, D, NULL, experts, ROWS);
    ck_assert_int_eq(status, MOE_ERR_NUMERICAL);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "row %d: ", (int)BAD);
    expect_prefix(moe_last_error(), prefix, "an overflowing gate in the second block");
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *errors_suite(void)
{
    Suite *suite = suite_create("errors");
    struct {
        const char *name;
        const TTest *tests[16];
    } groups[] = {
        {"null",
         {null_model_lifecycle, null_model_parameters, null_model_data_functions,
          null_fitter_functions, null_context_functions, null_context_outputs,
          free_null_is_noop, getters_on_null, option_listing_errors, NULL}},
        {"sizes",
         {zero_rows, leading_dimension_too_small, ldx_padding_is_ignored,
          output_buffers_one_too_small, parameter_buffers_one_too_small, NULL}},
        {"values",
         {non_finite_x, non_finite_y, non_finite_weights, negative_weights, all_zero_weights,
          too_few_samples, NULL}},
        {"rows",
         {row_messages_share_one_prefix, row_messages_of_families,
          row_messages_count_from_the_first_row, NULL}},
        {"specs", {invalid_specs, spec_versions, NULL}},
        {"setters", {setters_reject_non_finite, setters_reject_non_positive_variances, NULL}},
        {"strings", {strerror_every_status, version_and_last_error, messages_survive_being_wrapped, NULL}},
        {"degenerate",
         {degenerate_constant_y, degenerate_constant_x, degenerate_n_equals_free_params,
          degenerate_duplicated_rows, degenerate_collinear_columns,
          degenerate_intercept_only_without_x, NULL}},
        {"unchanged", {failed_fit_leaves_model_unchanged, inputs_not_modified, NULL}},
        {"io", {io_null_and_sizes, NULL}},
    };
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; ++g) {
        TCase *tcase = tcase_create(groups[g].name);
        tcase_add_checked_fixture(tcase, setup, teardown);
        tcase_set_timeout(tcase, 60);
        for (size_t t = 0; groups[g].tests[t] != NULL; ++t)
            tcase_add_test(tcase, groups[g].tests[t]);
        suite_add_tcase(suite, tcase);
    }
    return suite;
}

int main(void)
{
    return run_suite(errors_suite());
}
