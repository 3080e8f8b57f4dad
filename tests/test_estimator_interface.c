/*
 * The estimator interface, version 2: declared option masks and flags, streaming sessions
 * over partial_fit (small batches, expert order kept, report and trace over the session,
 * reset), saved fitter states that continue a session bit for bit, aggregation of fitted
 * models, report counters, iterations recorded in order, and gate-only fits of the built-in
 * estimators (update_experts = 0).
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "moe/moe.h"
#include "moe/kernels.h"
#include "support/runner.h"
#include "support/synthetic.h"

/* ------------------------------------------------------------------------ */
/* A streaming estimator: running weighted means of y per expert slot       */
/* ------------------------------------------------------------------------ */

/*
 * Every row goes to expert (row index in the session) mod K; each expert's intercept is the
 * running mean of the y it received. Its running sums are per expert, so the experts must
 * keep their order between calls: the table says MOE_ESTIMATOR_KEEPS_ORDER. It takes any
 * batch size (MOE_ESTIMATOR_SMALL_BATCHES) and saves its sums as state.
 */
enum { STREAM_K = 3 };

typedef struct stream_state {
    double sum[STREAM_K], weight[STREAM_K];
    size_t resets;
} stream_state;

static moe_status stream_create(void **state)
{
    stream_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    *state = s;
    return MOE_OK;
}

static void stream_destroy(void *state)
{
    free(state);
}

static moe_status stream_reset(void *state)
{
    stream_state *s = state;
    size_t resets = s->resets + 1;
    memset(s, 0, sizeof *s);
    s->resets = resets;
    return MOE_OK;
}

static moe_status stream_partial_fit(void *state, moe_fit_context *context)
{
    stream_state *s = state;
    moe_rows rows;
    EXPECT_STATUS(moe_context_rows(context, &rows), MOE_OK);
    size_t seen = 0, batches = 0;
    EXPECT_STATUS(moe_context_session(context, &seen, &batches), MOE_OK);
    for (size_t i = 0; i < rows.n; ++i) {
        size_t k = (seen + i) % STREAM_K;
        double w = rows.weights == NULL ? 1.0 : rows.weights[i];
        s->sum[k] += w * rows.y[i];
        s->weight[k] += w;
    }
    moe_model_t *model = moe_context_model(context);
    size_t p = moe_model_n_inputs(model);
    double experts[STREAM_K * 8] = {0};
    EXPECT_STATUS(moe_model_get_experts(model, experts, STREAM_K * p), MOE_OK);
    for (size_t k = 0; k < STREAM_K; ++k)
        if (s->weight[k] > 0.0)
            experts[k * p] = s->sum[k] / s->weight[k];
    moe_status status = moe_model_set_experts(model, experts, STREAM_K * p);
    if (status != MOE_OK)
        return status;
    double loglik = 0.0;
    status = moe_model_loglik(model, rows.n, rows.X, rows.ldx, rows.y, rows.weights, &loglik);
    if (status != MOE_OK)
        return status;
    status = moe_context_iteration(context, 0, 0, loglik);
    if (status == MOE_OK)
        status = moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, rows.n);
    return status;
}

static moe_status stream_fit(void *state, moe_fit_context *context)
{
    return stream_partial_fit(state, context);
}

static moe_status stream_save(const void *state, void *buffer, size_t capacity, size_t *written)
{
    const stream_state *s = state;
    *written = 2 * STREAM_K * sizeof(double);
    if (buffer == NULL)
        return MOE_OK;
    if (capacity < *written)
        return MOE_ERR_BUFFER_TOO_SMALL;
    memcpy(buffer, s->sum, sizeof s->sum);
    memcpy((char *)buffer + sizeof s->sum, s->weight, sizeof s->weight);
    return MOE_OK;
}

static moe_status stream_load(void *state, const void *buffer, size_t size)
{
    stream_state *s = state;
    if (size != 2 * STREAM_K * sizeof(double))
        return MOE_ERR_FORMAT;
    memcpy(s->sum, buffer, sizeof s->sum);
    memcpy(s->weight, (const char *)buffer + sizeof s->sum, sizeof s->weight);
    return MOE_OK;
}

static const moe_estimator_ops stream_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "running-means",
    .create = stream_create,
    .destroy = stream_destroy,
    .set_option = NULL,
    .fit = stream_fit,
    .partial_fit = stream_partial_fit,
    .options = MOE_OPTION_BIT(MOE_OPT_SEED),
    .flags = MOE_ESTIMATOR_SMALL_BATCHES | MOE_ESTIMATOR_KEEPS_ORDER,
    .reset = stream_reset,
    .aggregate = NULL,
    .save_state = stream_save,
    .load_state = stream_load,
};

static moe_model_t *stream_model(void)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = STREAM_K;
    spec.n_features = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

/* Rows whose y are 30 - row so that the expert intercepts come out in decreasing order. */
enum { STREAM_ROWS = 60 };
static double stream_X[STREAM_ROWS], stream_y[STREAM_ROWS];

static void stream_data(void)
{
    for (size_t i = 0; i < STREAM_ROWS; ++i) {
        stream_X[i] = 0.1 * (double)i;
        stream_y[i] = 30.0 - (double)(i % STREAM_K) * 10.0 + 0.01 * (double)i;
    }
}

START_TEST(option_mask_is_enforced)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &stream_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, 3), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 3), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "tol", "1e-3"), MOE_ERR_UNSUPPORTED);
    ck_assert(strstr(moe_fitter_last_error(fitter), "running-means") != NULL);
    moe_fitter_free(fitter);

    moe_estimator_ops bad = stream_ops;
    bad.flags = 0x80u;
    moe_fitter_t *refused = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&refused, &bad), MOE_ERR_INVALID_ARGUMENT);
    bad = stream_ops;
    bad.load_state = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&refused, &bad), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(refused);
}
END_TEST

START_TEST(session_accumulates_over_small_batches)
{
    stream_data();
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &stream_ops), MOE_OK);
    moe_model_t *model = stream_model();
    /* Batches of 2 rows: fewer than the model's 8 free parameters. */
    size_t batches = 0;
    for (size_t first = 0; first < 30; first += 2, ++batches)
        EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 2, stream_X + first, 1,
                                             stream_y + first, NULL),
                      MOE_OK);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.samples_seen, 30);
    ck_assert_uint_eq(report.batches, batches);
    ck_assert_uint_eq(report.inner_iterations, 30); /* counters add up over the session */
    size_t length = 0;
    EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
    ck_assert_uint_eq(length, batches); /* one recorded value per call, concatenated */
    /* The experts kept the session's order: intercepts decreasing, which canonical order
       (increasing first coefficient) would have reversed. */
    double experts[STREAM_K * 2];
    EXPECT_STATUS(moe_model_get_experts(model, experts, STREAM_K * 2), MOE_OK);
    ck_assert(experts[0] > experts[2] && experts[2] > experts[4]);
    ck_assert(fabs(experts[0] - (30.0 + 0.01 * 13.5)) < 1e-12);

    /* A failing call (NaN in y) leaves the session as it was. */
    double bad_y[2] = {1.0, NAN};
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 2, stream_X, 1, bad_y, NULL),
                  MOE_ERR_NON_FINITE);
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 2, stream_X + 30, 1, stream_y + 30,
                                         NULL),
                  MOE_OK);
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.samples_seen, 32);
    ck_assert_uint_eq(report.batches, batches + 1);

    /* moe_fitter_reset ends the session: the next call starts afresh. */
    EXPECT_STATUS(moe_fitter_reset(fitter), MOE_OK);
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 3, stream_X, 1, stream_y, NULL),
                  MOE_OK);
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.samples_seen, 3);
    ck_assert_uint_eq(report.batches, 1);
    EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
    ck_assert_uint_eq(length, 1);

    /* A batch fit needs as many rows as free parameters, and puts the experts in
       canonical order. */
    EXPECT_STATUS(moe_fitter_fit(fitter, model, 2, stream_X, 1, stream_y, NULL),
                  MOE_ERR_TOO_FEW_SAMPLES);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, STREAM_ROWS, stream_X, 1, stream_y, NULL),
                  MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, STREAM_K * 2), MOE_OK);
    ck_assert(experts[0] < experts[2] && experts[2] < experts[4]);
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.samples_seen, STREAM_ROWS);
    ck_assert_uint_eq(report.batches, 1);
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

/* Reset is called by moe_fitter_reset and before every batch fit. */
START_TEST(reset_reaches_the_estimator)
{
    stream_data();
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &stream_ops), MOE_OK);
    moe_model_t *model = stream_model();
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 4, stream_X, 1, stream_y, NULL),
                  MOE_OK);
    double before[STREAM_K * 2], after[STREAM_K * 2];
    EXPECT_STATUS(moe_model_get_experts(model, before, STREAM_K * 2), MOE_OK);
    EXPECT_STATUS(moe_fitter_reset(fitter), MOE_OK);
    /* The same batch again after a reset gives the same experts: nothing was carried. */
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 4, stream_X, 1, stream_y, NULL),
                  MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, after, STREAM_K * 2), MOE_OK);
    ck_assert(memcmp(before, after, sizeof before) == 0);
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

/* A session saved after some batches and loaded into a new fitter goes on bit for bit. */
START_TEST(saved_state_continues_the_session)
{
    stream_data();
    moe_fitter_t *original = NULL, *restored = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&original, &stream_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_create_custom(&restored, &stream_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(original, MOE_OPT_SEED, 12345), MOE_OK);
    moe_model_t *model = stream_model(), *copy = NULL;
    for (size_t first = 0; first < 20; first += 5)
        EXPECT_STATUS(moe_fitter_partial_fit(original, model, 5, stream_X + first, 1,
                                             stream_y + first, NULL),
                      MOE_OK);
    size_t size = 0;
    EXPECT_STATUS(moe_fitter_save_state_buffer(original, NULL, 0, &size), MOE_OK);
    unsigned char *bytes = malloc(size);
    size_t written = 0;
    EXPECT_STATUS(moe_fitter_save_state_buffer(original, bytes, size - 1, &written),
                  MOE_ERR_BUFFER_TOO_SMALL);
    EXPECT_STATUS(moe_fitter_save_state_buffer(original, bytes, size, &written), MOE_OK);
    ck_assert_uint_eq(written, size);
    EXPECT_STATUS(moe_fitter_load_state_buffer(restored, bytes, size), MOE_OK);
    long long seed = 0;
    EXPECT_STATUS(moe_fitter_get_int(restored, MOE_OPT_SEED, &seed), MOE_OK);
    ck_assert_int_eq(seed, 12345);
    EXPECT_STATUS(moe_model_clone(&copy, model), MOE_OK);
    for (size_t first = 20; first < STREAM_ROWS; first += 5) {
        EXPECT_STATUS(moe_fitter_partial_fit(original, model, 5, stream_X + first, 1,
                                             stream_y + first, NULL),
                      MOE_OK);
        EXPECT_STATUS(moe_fitter_partial_fit(restored, copy, 5, stream_X + first, 1,
                                             stream_y + first, NULL),
                      MOE_OK);
    }
    unsigned char a[1024], b[1024];
    size_t size_a = 0, size_b = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, a, sizeof a, &size_a), MOE_OK);
    EXPECT_STATUS(moe_model_save_buffer(copy, b, sizeof b, &size_b), MOE_OK);
    ck_assert(size_a == size_b && memcmp(a, b, size_a) == 0);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(restored, &report), MOE_OK);
    ck_assert_uint_eq(report.samples_seen, STREAM_ROWS);

    /* Every damaged byte is refused, and the fitter stays as it was. */
    for (size_t i = 0; i < size; ++i) {
        bytes[i] ^= 0x20;
        moe_status status = moe_fitter_load_state_buffer(restored, bytes, size);
        ck_assert_msg(status == MOE_ERR_FORMAT || status == MOE_ERR_UNSUPPORTED,
                      "byte %zu: status %d", i, (int)status);
        bytes[i] ^= 0x20;
    }
    EXPECT_STATUS(moe_fitter_load_state_buffer(restored, bytes, size - 1), MOE_ERR_FORMAT);
    /* A state of another estimator. */
    moe_fitter_t *em = NULL;
    EXPECT_STATUS(moe_fitter_create(&em, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_load_state_buffer(em, bytes, size), MOE_ERR_INVALID_ARGUMENT);
    ck_assert(strstr(moe_fitter_last_error(em), "running-means") != NULL);

    /* Through a file. */
    char path[] = "/tmp/moe_state_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    EXPECT_STATUS(moe_fitter_save_state(original, path), MOE_OK);
    EXPECT_STATUS(moe_fitter_load_state(restored, path), MOE_OK);
    EXPECT_STATUS(moe_fitter_load_state(em, path), MOE_ERR_INVALID_ARGUMENT);
    unlink(path);
    EXPECT_STATUS(moe_fitter_load_state(restored, path), MOE_ERR_IO);

    /* em keeps no state between calls: its state is its options. */
    EXPECT_STATUS(moe_fitter_set_int(em, MOE_OPT_MAX_ITER, 77), MOE_OK);
    EXPECT_STATUS(moe_fitter_save_state_buffer(em, NULL, 0, &size), MOE_OK);
    unsigned char *em_bytes = malloc(size);
    EXPECT_STATUS(moe_fitter_save_state_buffer(em, em_bytes, size, &written), MOE_OK);
    moe_fitter_t *em2 = NULL;
    EXPECT_STATUS(moe_fitter_create(&em2, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_load_state_buffer(em2, em_bytes, size), MOE_OK);
    long long max_iter = 0;
    EXPECT_STATUS(moe_fitter_get_int(em2, MOE_OPT_MAX_ITER, &max_iter), MOE_OK);
    ck_assert_int_eq(max_iter, 77);
    free(em_bytes);
    moe_fitter_free(em2);
    moe_fitter_free(em);
    free(bytes);
    moe_model_free(model);
    moe_model_free(copy);
    moe_fitter_free(original);
    moe_fitter_free(restored);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Aggregation                                                              */
/* ------------------------------------------------------------------------ */

/* Averages the experts and variances of models with the working model's K, by weight. */
typedef struct seen_aggregation {
    size_t count, n;
    double weights[8];
    moe_fit_call call;
} seen_aggregation;
static seen_aggregation seen;

static moe_status average_aggregate(void *state, moe_fit_context *context)
{
    (void)state;
    size_t count = 0;
    const moe_model_t *const *models = NULL;
    const double *weights = NULL;
    moe_status status = moe_context_models(context, &count, &models, &weights);
    if (status != MOE_OK)
        return status;
    moe_rows rows;
    EXPECT_STATUS(moe_context_rows(context, &rows), MOE_OK);
    seen.count = count;
    seen.n = rows.n;
    seen.call = moe_context_call(context);
    for (size_t m = 0; m < count && m < 8; ++m)
        seen.weights[m] = weights[m];
    moe_model_t *target = moe_context_model(context);
    size_t K = moe_model_n_experts(target), p = moe_model_n_inputs(target);
    double experts[64] = {0}, variances[8] = {0}, part[64], part_variances[8];
    for (size_t m = 0; m < count; ++m) {
        EXPECT_STATUS(moe_model_get_experts(models[m], part, 64), MOE_OK);
        EXPECT_STATUS(moe_model_get_variances(models[m], part_variances, 8), MOE_OK);
        for (size_t a = 0; a < K * p; ++a)
            experts[a] += weights[m] * part[a];
        for (size_t k = 0; k < K; ++k)
            variances[k] += weights[m] * part_variances[k];
    }
    status = moe_model_set_experts(target, experts, K * p);
    if (status == MOE_OK)
        status = moe_model_set_variances(target, variances, K);
    return status;
}

static moe_status plain_create(void **state)
{
    *state = NULL;
    return MOE_OK;
}

static void plain_destroy(void *state)
{
    (void)state;
}

static moe_status refuse_fit(void *state, moe_fit_context *context)
{
    (void)state;
    (void)context;
    return MOE_ERR_UNSUPPORTED;
}

static const moe_estimator_ops average_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "average",
    .create = plain_create,
    .destroy = plain_destroy,
    .fit = refuse_fit,
    .aggregate = average_aggregate,
};

static moe_model_t *two_experts(double shift)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    double experts[4] = {-1.0 + shift, 2.0, 1.0 + shift, -2.0}, variances[2] = {0.5, 1.5};
    EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, 2), MOE_OK);
    return model;
}

START_TEST(aggregation_sees_models_and_normalised_weights)
{
    moe_model_t *parts[3] = {two_experts(0.0), two_experts(0.3), two_experts(0.6)};
    moe_model_t *target = two_experts(5.0);
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &average_ops), MOE_OK);
    const double weights[3] = {1.0, 2.0, 1.0};
    /* No support rows at all. */
    memset(&seen, 0, sizeof seen);
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 3, (const moe_model_t *const *)parts,
                                       weights, 0, NULL, 0, NULL, NULL),
                  MOE_OK);
    ck_assert_uint_eq(seen.count, 3);
    ck_assert_uint_eq(seen.n, 0);
    ck_assert_int_eq(seen.call, MOE_CALL_AGGREGATE);
    ck_assert(seen.weights[0] == 0.25 && seen.weights[1] == 0.5 && seen.weights[2] == 0.25);
    double experts[4];
    EXPECT_STATUS(moe_model_get_experts(target, experts, 4), MOE_OK);
    ck_assert(fabs(experts[0] - (-1.0 + 0.3)) < 1e-12 && fabs(experts[2] - 1.3) < 1e-12);
    /* Equal weights when none are given; support rows without responses. */
    double X[4] = {0.1, 0.2, 0.3, 0.4};
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 2, (const moe_model_t *const *)parts,
                                       NULL, 4, X, 1, NULL, NULL),
                  MOE_OK);
    ck_assert(seen.weights[0] == 0.5 && seen.weights[1] == 0.5);
    ck_assert_uint_eq(seen.n, 4);
    /* Refusals: nothing to aggregate, a mismatched model, bad weights, bad rows. */
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 0, (const moe_model_t *const *)parts,
                                       NULL, 0, NULL, 0, NULL, NULL),
                  MOE_ERR_EMPTY_INPUT);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_features = 2;
    moe_model_t *wide = NULL;
    EXPECT_STATUS(moe_model_create(&wide, &spec), MOE_OK);
    const moe_model_t *mixed[2] = {parts[0], wide};
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 2, mixed, NULL, 0, NULL, 0, NULL, NULL),
                  MOE_ERR_DIMENSION);
    const double negative[3] = {1.0, -1.0, 1.0}, zero[3] = {0, 0, 0};
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 3, (const moe_model_t *const *)parts,
                                       negative, 0, NULL, 0, NULL, NULL),
                  MOE_ERR_NEGATIVE_WEIGHT);
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 3, (const moe_model_t *const *)parts,
                                       zero, 0, NULL, 0, NULL, NULL),
                  MOE_ERR_INVALID_ARGUMENT);
    double bad_X[2] = {0.0, NAN};
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 2, (const moe_model_t *const *)parts,
                                       NULL, 2, bad_X, 1, NULL, NULL),
                  MOE_ERR_NON_FINITE);
    /* Estimators without aggregate, and aggregation's context outside aggregation. */
    moe_fitter_t *em = NULL;
    EXPECT_STATUS(moe_fitter_create(&em, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_aggregate(em, target, 2, (const moe_model_t *const *)parts, NULL,
                                       0, NULL, 0, NULL, NULL),
                  MOE_ERR_UNSUPPORTED);
    moe_fitter_free(em);
    moe_model_free(wide);
    for (int m = 0; m < 3; ++m)
        moe_model_free(parts[m]);
    moe_model_free(target);
    moe_fitter_free(fitter);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Counters and the order of recorded iterations                            */
/* ------------------------------------------------------------------------ */

static moe_status counting_fit(void *state, moe_fit_context *context)
{
    (void)state;
    EXPECT_STATUS(moe_context_iteration(context, 0, 0, -10.0), MOE_OK);
    EXPECT_STATUS(moe_context_iteration(context, 0, 2, -9.0), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_iteration(context, 0, 1, -9.0), MOE_OK);
    EXPECT_STATUS(moe_context_count(context, MOE_COUNTER_GRADIENT_EVALUATIONS, 4), MOE_OK);
    EXPECT_STATUS(moe_context_count(context, MOE_COUNTER_SEPARATION_EVENTS, 2), MOE_OK);
    EXPECT_STATUS(moe_context_count(context, (moe_counter)99, 1), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_note_decrease(context, 1e-6), MOE_OK);
    EXPECT_STATUS(moe_context_note_decrease(context, 1e-7), MOE_OK);
    EXPECT_STATUS(moe_context_note_decrease(context, NAN), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_set_steps(context, 0.5, NAN), MOE_OK);
    EXPECT_STATUS(moe_context_set_steps(context, -1.0, 0.0), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_models(context, NULL, NULL, NULL), MOE_ERR_UNSUPPORTED);
    ck_assert_int_eq(moe_context_call(context), MOE_CALL_FIT);

    EXPECT_STATUS(moe_context_add_stages(context, MOE_STAGE_GATE), MOE_OK);
    EXPECT_STATUS(moe_context_add_stages(context, MOE_STAGE_JOINT), MOE_OK);
    EXPECT_STATUS(moe_context_add_stages(context, 0x80u), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_add_stage_seconds(context, MOE_STAGE_GATE, 0.25), MOE_OK);
    EXPECT_STATUS(moe_context_add_stage_seconds(context, MOE_STAGE_GATE, 0.5), MOE_OK);
    EXPECT_STATUS(moe_context_add_stage_seconds(context, MOE_STAGE_GATE | MOE_STAGE_JOINT, 1.0),
                  MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_add_stage_seconds(context, MOE_STAGE_JOINT, -1.0),
                  MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_add_stage_seconds(context, MOE_STAGE_JOINT, NAN),
                  MOE_ERR_INVALID_ARGUMENT);

    /* A start from the first half of the rows: the same partition rule on other rows. */
    moe_rows all, half, empty;
    EXPECT_STATUS(moe_context_rows(context, &all), MOE_OK);
    half = all;
    half.n = all.n / 2;
    empty = all;
    empty.n = 0;
    moe_model_t *model = moe_context_model(context);
    double neutral[STREAM_K * 2], started[STREAM_K * 2];
    EXPECT_STATUS(moe_model_get_experts(model, neutral, STREAM_K * 2), MOE_OK);
    EXPECT_STATUS(moe_context_start_rows(context, model, 0, &half), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, started, STREAM_K * 2), MOE_OK);
    ck_assert(memcmp(neutral, started, sizeof neutral) != 0);
    EXPECT_STATUS(moe_context_start_rows(context, model, 0, &empty), MOE_ERR_EMPTY_INPUT);
    EXPECT_STATUS(moe_context_start_rows(NULL, model, 0, &half), MOE_ERR_NULL_POINTER);
    return moe_context_set_result(context, 0, 1);
}

static const moe_estimator_ops counting_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "counting",
    .create = plain_create,
    .destroy = plain_destroy,
    .fit = counting_fit,
};

/* The text form of a value moe_fitter_set_option reads back to the same value. */
static void option_text(const moe_option_info *info, double value, char *text, size_t size)
{
    if (info->type == MOE_OPTION_KEYWORD)
        snprintf(text, size, "%s", info->keywords[(size_t)value]);
    else if (info->type == MOE_OPTION_INTEGER)
        snprintf(text, size, "%.0f", value);
    else
        snprintf(text, size, "%.17g", value);
}

/* Every built-in estimator's every option: listed once, its default read back, and every
   value written as text (default, bounds, keywords) read back exactly. */
START_TEST(builtin_options_list_and_round_trip)
{
    for (size_t e = 0; e < moe_estimator_count(); ++e) {
        moe_fitter_t *fitter = NULL;
        EXPECT_STATUS(moe_fitter_create(&fitter, moe_estimator_name(e)), MOE_OK);
        size_t count = moe_fitter_option_count(fitter), own = 0;
        ck_assert_uint_gt(count, 0);
        for (size_t i = 0; i < count; ++i) {
            moe_option_info info;
            EXPECT_STATUS(moe_option_info_init(&info, MOE_OPTION_INFO_VERSION), MOE_OK);
            EXPECT_STATUS(moe_fitter_option_info(fitter, i, &info), MOE_OK);
            own += info.number == 0;
            ck_assert_msg(info.name != NULL && info.description != NULL &&
                              info.description[0] != '\0',
                          "%s: option %zu", moe_estimator_name(e), i);
            ck_assert_msg((info.type == MOE_OPTION_KEYWORD) == (info.keywords != NULL), "%s",
                          info.name);
            double value = NAN;
            EXPECT_STATUS(moe_fitter_get_option(fitter, info.name, &value), MOE_OK);
            ck_assert_msg(value == info.default_value, "%s.%s: default %.17g, reads %.17g",
                          moe_estimator_name(e), info.name, info.default_value, value);
            double tries[] = {info.lower, info.upper, info.default_value};
            for (size_t t = 0; t < 3; ++t) {
                int open = (t == 0 && (info.flags & MOE_OPTION_LOWER_OPEN)) ||
                           (t == 1 && (info.flags & MOE_OPTION_UPPER_OPEN));
                if (open || fabs(tries[t]) > 1e200)
                    continue;
                char text[64];
                option_text(&info, tries[t], text, sizeof text);
                EXPECT_STATUS(moe_fitter_set_option(fitter, info.name, text), MOE_OK);
                EXPECT_STATUS(moe_fitter_get_option(fitter, info.name, &value), MOE_OK);
                ck_assert_msg(value == tries[t], "%s.%s = '%s' reads %.17g",
                              moe_estimator_name(e), info.name, text, value);
            }
            /* Outside the bounds: refused, the value kept. */
            char text[64];
            option_text(&info, info.default_value, text, sizeof text);
            EXPECT_STATUS(moe_fitter_set_option(fitter, info.name, text), MOE_OK);
            if (info.type != MOE_OPTION_KEYWORD) {
                snprintf(text, sizeof text, "%.17g", info.lower - 1.0);
                EXPECT_STATUS(moe_fitter_set_option(fitter, info.name, text),
                              MOE_ERR_INVALID_ARGUMENT);
            } else {
                EXPECT_STATUS(moe_fitter_set_option(fitter, info.name, "no_such_keyword"),
                              MOE_ERR_INVALID_ARGUMENT);
            }
            EXPECT_STATUS(moe_fitter_get_option(fitter, info.name, &value), MOE_OK);
            ck_assert(value == info.default_value);
        }
        /* em, gem and gd have no options of their own; cqt, ismm and ot do. */
        ck_assert_msg((own > 0) == (e >= 3), "%s has %zu options of its own",
                      moe_estimator_name(e), own);
        moe_fitter_free(fitter);
    }
}
END_TEST

/* An estimator's own options go through the library's one decimal parser. */
START_TEST(estimator_options_read_decimal_text)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "ot"), MOE_OK);
    const char *const bad_reals[] = {"", " 1", "1 ", "abc", "inf", "nan", "0x10", "1e999", "1,5"};
    for (size_t i = 0; i < sizeof bad_reals / sizeof *bad_reals; ++i)
        EXPECT_STATUS(moe_fitter_set_option(fitter, "screen", bad_reals[i]),
                      MOE_ERR_INVALID_ARGUMENT);
    const char *const bad_integers[] = {"1.5", "1e3", "", "12a", "99999999999999999999", "0"};
    for (size_t i = 0; i < sizeof bad_integers / sizeof *bad_integers; ++i)
        EXPECT_STATUS(moe_fitter_set_option(fitter, "shards", bad_integers[i]),
                      MOE_ERR_INVALID_ARGUMENT);
    double value = 0.0;
    EXPECT_STATUS(moe_fitter_set_option(fitter, "screen", "2.5e-2"), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "screen", &value), MOE_OK);
    ck_assert(value == 0.025);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "shards", &value), MOE_OK);
    ck_assert(value == 4.0);
    moe_fitter_free(fitter);
}
END_TEST

START_TEST(counters_reach_the_report)
{
    stream_data();
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &counting_ops), MOE_OK);
    moe_model_t *model = stream_model();
    EXPECT_STATUS(moe_fitter_fit(fitter, model, STREAM_ROWS, stream_X, 1, stream_y, NULL),
                  MOE_OK);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.gradient_evaluations, 4);
    ck_assert_uint_eq(report.separation_events, 2);
    ck_assert_uint_eq(report.monotonicity_violations, 2);
    ck_assert(report.worst_relative_decrease == 1e-6);
    ck_assert(report.step == 0.5 && report.gate_step == 0.0);
    ck_assert_uint_eq(report.iterations, 1);
    ck_assert(report.loglik == -9.0 && report.converged == 1);
    ck_assert_uint_eq(report.samples_seen, STREAM_ROWS);
    ck_assert_uint_eq(report.stages, MOE_STAGE_GATE | MOE_STAGE_JOINT);
    ck_assert(report.stage_seconds[0] == 0.0 && report.stage_seconds[1] == 0.75 &&
              report.stage_seconds[2] == 0.0);
    EXPECT_STATUS(moe_context_add_stages(NULL, MOE_STAGE_GATE), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_add_stage_seconds(NULL, MOE_STAGE_GATE, 1.0), MOE_ERR_NULL_POINTER);
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Gate-only fits of the built-in estimators                                */
/* ------------------------------------------------------------------------ */

START_TEST(update_experts_zero_fits_the_gate_alone)
{
    enum { K = 3, D = 2, P = D + 1, N = 4000 };
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, K, D, 4.0, 1.5, 71);
    synthetic_data_make(&data, &truth, N, 72);
    const char *estimators[] = {"em", "gem", "gd"};
    for (size_t e = 0; e < 3; ++e) {
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.n_experts = K;
        spec.n_features = D;
        moe_model_t *model = NULL;
        EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
        EXPECT_STATUS(moe_model_set_experts(model, truth.experts, K * P), MOE_OK);
        EXPECT_STATUS(moe_model_set_variances(model, truth.variances, K), MOE_OK);
        moe_fitter_t *fitter = NULL;
        EXPECT_STATUS(moe_fitter_create(&fitter, estimators[e]), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_option(fitter, "update_experts", "0"), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 2), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, e == 0 ? 200 : 3000),
                      MOE_OK);
        double loglik_before = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, N, data.X, D, data.y, NULL, &loglik_before),
                      MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, D, data.y, NULL), MOE_OK);
        /* The experts are bit for bit the truth (canonical order: intercepts increase, as
           the truth's do). */
        double experts[K * P], variances[K], gate[K * P];
        EXPECT_STATUS(moe_model_get_experts(model, experts, K * P), MOE_OK);
        EXPECT_STATUS(moe_model_get_variances(model, variances, K), MOE_OK);
        ck_assert_msg(memcmp(experts, truth.experts, sizeof experts) == 0,
                      "%s changed the experts", estimators[e]);
        ck_assert(memcmp(variances, truth.variances, sizeof variances) == 0);
        /* The gate is recovered. */
        EXPECT_STATUS(moe_model_get_gate(model, gate, K * P), MOE_OK);
        double worst = 0.0;
        for (size_t a = 0; a < K * P; ++a)
            worst = fmax(worst, fabs(gate[a] - truth.gate[a]));
        ck_assert_msg(worst < 0.25, "%s: gate error %g", estimators[e], worst);
        double loglik_after = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, N, data.X, D, data.y, NULL, &loglik_after),
                      MOE_OK);
        ck_assert(loglik_after > loglik_before);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* A caller's starting points                                               */
/* ------------------------------------------------------------------------ */

typedef struct start_log {
    const synthetic_truth *truth;
    size_t calls, restarts_seen[8];
    size_t rows;
    int fail_restart; /* restart whose start fails, or -1 */
} start_log;

static moe_status truth_start(void *user_data, moe_model_t *model, size_t restart,
                              const moe_rows *rows)
{
    start_log *log = user_data;
    if (log->calls < 8)
        log->restarts_seen[log->calls] = restart;
    log->calls++;
    log->rows = rows->n;
    if ((int)restart == log->fail_restart)
        return MOE_ERR_NUMERICAL;
    size_t K = log->truth->n_experts, p = log->truth->n_features + 1;
    moe_status status = moe_model_set_experts(model, log->truth->experts, K * p);
    if (status == MOE_OK)
        status = moe_model_set_variances(model, log->truth->variances, K);
    if (status == MOE_OK)
        status = moe_model_set_gate(model, log->truth->gate, K * p);
    return status;
}

START_TEST(start_function_gives_the_restarts)
{
    enum { K = 3, D = 2, N = 3000 };
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, K, D, 4.0, 1.5, 81);
    synthetic_data_make(&data, &truth, N, 82);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "em"), MOE_OK);
    /* init = custom without a function is refused when the fit starts. */
    EXPECT_STATUS(moe_fitter_set_option(fitter, "init", "custom"), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, D, data.y, NULL),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert(strstr(moe_fitter_last_error(fitter), "moe_fitter_set_start") != NULL);

    start_log log = {&truth, 0, {0}, 0, 1};
    EXPECT_STATUS(moe_fitter_set_start(fitter, truth_start, &log), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 3), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, D, data.y, NULL), MOE_OK);
    ck_assert_uint_eq(log.calls, 3);
    ck_assert(log.restarts_seen[0] == 0 && log.restarts_seen[1] == 1 &&
              log.restarts_seen[2] == 2);
    ck_assert_uint_eq(log.rows, N);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    /* Restart 1 failed in its start; restarts 0 and 2 started at the truth and agree. */
    ck_assert(report.best_restart == 0 || report.best_restart == 2);
    ck_assert(report.converged);
    double experts[K * (D + 1)];
    EXPECT_STATUS(moe_model_get_experts(model, experts, K * (D + 1)), MOE_OK);
    for (size_t a = 0; a < K * (D + 1); ++a)
        ck_assert_msg(fabs(experts[a] - truth.experts[a]) < 0.1, "expert value %zu: %g vs %g",
                      a, experts[a], truth.experts[a]);
    /* Removing the function takes init back to the default. */
    EXPECT_STATUS(moe_fitter_set_start(fitter, NULL, NULL), MOE_OK);
    long long init = -1;
    EXPECT_STATUS(moe_fitter_get_int(fitter, MOE_OPT_INIT, &init), MOE_OK);
    ck_assert_int_eq(init, MOE_INIT_MIXED);
    EXPECT_STATUS(moe_fitter_set_start(NULL, truth_start, NULL), MOE_ERR_NULL_POINTER);
    moe_fitter_t *custom = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&custom, &stream_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_start(custom, truth_start, &log), MOE_ERR_UNSUPPORTED);
    moe_fitter_free(custom);
    moe_fitter_free(fitter);
    moe_model_free(model);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The kernels' contracts and error paths, exercised from inside a fit      */
/* ------------------------------------------------------------------------ */

static size_t sum_rows(void *user, size_t first, size_t count, double *sums, double *scratch)
{
    (void)scratch;
    const double *values = user;
    for (size_t i = first; i < first + count; ++i) {
        if (values[i] < 0.0)
            return 1 + i;
        sums[0] += values[i];
        sums[1] += values[i] * values[i];
    }
    return 0;
}

static moe_status probing_fit(void *state, moe_fit_context *context)
{
    (void)state;
    moe_model_t *model = moe_context_model(context);
    moe_rows rows;
    EXPECT_STATUS(moe_context_rows(context, &rows), MOE_OK);
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model), m = (K - 1) * p;
    double *resp = malloc(rows.n * K * sizeof(double));
    double gradient[64], hessian[4096], density[8 * 8];

    /* E-step workspaces */
    moe_estep_t *estep = NULL;
    EXPECT_STATUS(moe_estep_create(NULL, 0, &estep), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_estep_create(context, 0x80, &estep), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_estep_create(context, 0, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_estep_create(context, MOE_ESTEP_GATE_DERIVATIVES, &estep), MOE_OK);
    moe_estep_result result = MOE_ESTEP_RESULT_INIT;
    EXPECT_STATUS(moe_estep_get_result(estep, &result), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_estep_run(NULL, model, NULL, 0, resp), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_estep_run(estep, model, NULL, MOE_ESTEP_PREVIOUS_TARGETS, resp),
                  MOE_ERR_INVALID_ARGUMENT);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K + 1;
    moe_model_t *other = NULL;
    EXPECT_STATUS(moe_model_create(&other, &spec), MOE_OK);
    EXPECT_STATUS(moe_estep_run(estep, other, NULL, 0, resp), MOE_ERR_DIMENSION);
    double bad_y[2] = {0.0, NAN}, two_X[4] = {0.0, 1.0, 2.0, 3.0};
    moe_rows bad = {2, two_X, 2, bad_y, NULL};
    EXPECT_STATUS(moe_estep_run(estep, model, &bad, 0, resp), MOE_ERR_NON_FINITE);
    moe_rows no_X = {2, NULL, 2, bad_y, NULL};
    EXPECT_STATUS(moe_estep_run(estep, model, &no_X, 0, resp), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_estep_run(estep, model, NULL, 0, resp), MOE_OK);
    EXPECT_STATUS(moe_estep_gate_gradient(estep, 0, gradient, m), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_estep_run(estep, model, NULL, MOE_ESTEP_GATE_DERIVATIVES, resp), MOE_OK);
    EXPECT_STATUS(moe_estep_get_result(estep, &result), MOE_OK);
    double loglik = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, rows.n, rows.X, rows.ldx, rows.y, rows.weights,
                                   &loglik),
                  MOE_OK);
    ck_assert(fabs(result.loglik - loglik) <= 1e-9 * fabs(loglik));
    EXPECT_STATUS(moe_estep_gate_gradient(estep, 0, gradient, m - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_estep_gate_gradient(estep, 1, gradient, m), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_estep_gate_gradient(estep, 0, gradient, m), MOE_OK);
    EXPECT_STATUS(moe_estep_gate_hessian(estep, hessian, m * m), MOE_OK);
    /* The E-step's gate gradient is the kernel's. */
    double direct[64];
    EXPECT_STATUS(moe_context_gate_gradient(context, model, NULL, resp, direct, m), MOE_OK);
    for (size_t a = 0; a < m; ++a)
        ck_assert(fabs(direct[a] - gradient[a]) <= 1e-12 * (1.0 + fabs(direct[a])));
    result.version = 0;
    EXPECT_STATUS(moe_estep_get_result(estep, &result), MOE_ERR_UNSUPPORTED);
    moe_estep_free(estep);
    moe_estep_free(NULL);

    /* M-step kernels */
    EXPECT_STATUS(moe_context_update_experts(NULL, model, NULL, resp, NULL, 0, 0.0),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_update_experts(context, model, NULL, NULL, NULL, 0, 0.0),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_update_experts(context, model, NULL, resp, NULL, 2, -1.0),
                  MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_update_experts(context, other, NULL, resp, NULL, 0, 0.0),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_context_gate_gradient_steps(context, model, NULL, resp, 1, NAN),
                  MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_context_gate_gradient(context, model, NULL, resp, gradient, m - 1),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_context_gate_bound_step(context, model, NULL, m), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_gate_bound_step(context, model, gradient, m - 1),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_context_gate_newton(context, model, NULL, NULL, 0), MOE_ERR_NULL_POINTER);

    /* Gradients and steps */
    double expert_step = 0.0, gate_step = 0.0;
    EXPECT_STATUS(moe_context_safe_steps(NULL, model, &expert_step, &gate_step),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_safe_steps(context, model, &expert_step, &gate_step), MOE_OK);
    ck_assert(expert_step > 0.0 && gate_step > 0.0 && isfinite(gate_step));
    moe_gradient_t *full = NULL;
    EXPECT_STATUS(moe_gradient_create(NULL, &full), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_gradient_create(context, &full), MOE_OK);
    EXPECT_STATUS(moe_gradient_compute(context, full, other, NULL, resp), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_gradient_compute(context, full, model, NULL, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_gradient_compute(context, full, model, NULL, resp), MOE_OK);
    {
        /* values: the length first, then a copy; set_values replaces them as given. */
        size_t length = 0, again = 0;
        EXPECT_STATUS(moe_gradient_values(full, NULL, 0, &length), MOE_OK);
        ck_assert_uint_eq(length, moe_model_n_free_params(model));
        double *values = malloc(length * sizeof(double)), *back = malloc(length * sizeof(double));
        EXPECT_STATUS(moe_gradient_values(full, values, length - 1, &again),
                      MOE_ERR_BUFFER_TOO_SMALL);
        EXPECT_STATUS(moe_gradient_values(full, values, length, &again), MOE_OK);
        ck_assert_uint_eq(again, length);
        for (size_t i = 0; i < length; ++i)
            values[i] = 0.5 * values[i] + (double)i;
        EXPECT_STATUS(moe_gradient_set_values(full, values, length), MOE_OK);
        EXPECT_STATUS(moe_gradient_values(full, back, length, &again), MOE_OK);
        ck_assert(memcmp(values, back, length * sizeof(double)) == 0);
        EXPECT_STATUS(moe_gradient_set_values(full, values, length - 1), MOE_ERR_DIMENSION);
        values[0] = NAN;
        EXPECT_STATUS(moe_gradient_set_values(full, values, length), MOE_ERR_NON_FINITE);
        EXPECT_STATUS(moe_gradient_values(full, back, length, &again), MOE_OK);
        ck_assert(isfinite(back[0])); /* the refused values left the gradient as it was */
        EXPECT_STATUS(moe_gradient_set_values(NULL, values, length), MOE_ERR_NULL_POINTER);
        EXPECT_STATUS(moe_gradient_values(NULL, back, length, &again), MOE_ERR_NULL_POINTER);
        EXPECT_STATUS(moe_gradient_values(full, back, length, NULL), MOE_ERR_NULL_POINTER);
        free(values);
        free(back);
        EXPECT_STATUS(moe_gradient_compute(context, full, model, NULL, resp), MOE_OK);
    }
    EXPECT_STATUS(moe_gradient_step(context, full, model, model, -1.0, 0.1, 1.0, NULL, NULL),
                  MOE_ERR_INVALID_ARGUMENT);
    moe_gradient_free(full);
    moe_gradient_free(NULL);

    /* Shared rules and solvers */
    ck_assert(moe_step_accepted(1.0, 0.5, 1.0, 1.0));
    ck_assert(!moe_step_accepted(1.0, 1.0, 1.0, 1.0));
    ck_assert(!moe_step_accepted(1.0, 0.99999, 1.0, 1.0));
    ck_assert(moe_step_accepted(1.0, 1.0, 1e-12, 1.0));  /* near the optimum, within rounding */
    ck_assert(!moe_step_accepted(1.0, 1.0 + 1e-9, 1e-12, 1.0));
    double matrix[4] = {4.0, 2.0, 2.0, 3.0}, rhs[2] = {2.0, 1.0};
    EXPECT_STATUS(moe_solve_symmetric(2, matrix, rhs, NULL), MOE_OK);
    ck_assert(fabs(4.0 * rhs[0] + 2.0 * rhs[1] - 2.0) < 1e-14 &&
              fabs(2.0 * rhs[0] + 3.0 * rhs[1] - 1.0) < 1e-14);
    EXPECT_STATUS(moe_solve_symmetric(2, NULL, rhs, NULL), MOE_ERR_NULL_POINTER);
    double broken[4] = {NAN, 0.0, 0.0, 1.0};
    EXPECT_STATUS(moe_solve_symmetric(2, broken, rhs, NULL), MOE_ERR_NUMERICAL);

    /* The parallel runner: sums in chunk order, the failing row named. */
    double *values = malloc(10000 * sizeof(double)), sums[2] = {-1.0, -1.0};
    for (size_t i = 0; i < 10000; ++i)
        values[i] = 0.001 * (double)(i % 97);
    EXPECT_STATUS(moe_context_parallel(context, 10000, 2, 0, sum_rows, values, sums), MOE_OK);
    double plain = 0.0;
    for (size_t i = 0; i < 10000; ++i)
        plain += values[i];
    ck_assert(fabs(sums[0] - plain) < 1e-9);
    values[7321] = -1.0;
    EXPECT_STATUS(moe_context_parallel(context, 10000, 2, 0, sum_rows, values, sums),
                  MOE_ERR_NUMERICAL);
    ck_assert(strstr(moe_last_error(), "7321") != NULL);
    EXPECT_STATUS(moe_context_parallel(context, 10, 2, 0, NULL, values, sums),
                  MOE_ERR_NULL_POINTER);
    free(values);

    /* Rows, weights, penalty, log-densities */
    double total = 0.0, penalty = -1.0;
    EXPECT_STATUS(moe_context_total_weight(context, NULL, &total), MOE_OK);
    ck_assert(total == (double)rows.n);
    EXPECT_STATUS(moe_context_penalty(context, model, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_context_penalty(context, model, &penalty), MOE_OK);
    ck_assert(penalty == 0.0);
    EXPECT_STATUS(moe_context_expert_log_density(context, model, NULL, rows.n - 1, 2, density),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_context_expert_log_density(context, model, NULL, 0, 8, density), MOE_OK);
    for (size_t a = 0; a < 8 * K; ++a)
        ck_assert(isfinite(density[a]) && density[a] <= 10.0);

    /* Starts and the loop */
    EXPECT_STATUS(moe_context_start(context, other, 0), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_context_start(context, model, 0), MOE_OK);
    EXPECT_STATUS(moe_context_iterate(context, NULL, NULL), MOE_ERR_NULL_POINTER);
    moe_iteration_ops old_ops = {0, NULL, NULL};
    EXPECT_STATUS(moe_context_iterate(context, &old_ops, NULL), MOE_ERR_NULL_POINTER);

    moe_model_free(other);
    free(resp);
    EXPECT_STATUS(moe_context_iteration(context, 0, 0, -1.0), MOE_OK);
    return MOE_OK;
}

static const moe_estimator_ops probing_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "probing",
    .create = plain_create,
    .destroy = plain_destroy,
    .fit = probing_fit,
    .options = MOE_ITERATION_OPTIONS,
};

START_TEST(kernels_keep_their_contracts)
{
    enum { K = 3, D = 2, N = 500 };
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, K, D, 4.0, 1.5, 91);
    synthetic_data_make(&data, &truth, N, 92);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, truth.experts, K * (D + 1)), MOE_OK);
    EXPECT_STATUS(moe_model_set_gate(model, truth.gate, K * (D + 1)), MOE_OK);
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &probing_ops), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_THREADS, 2), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, data.X, D, data.y, NULL), MOE_OK);
    moe_fitter_free(fitter);
    moe_model_free(model);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

START_TEST(rng_streams_are_reproducible)
{
    moe_rng a, b, c;
    moe_rng_seed(&a, 42, 0);
    moe_rng_seed(&b, 42, 0);
    moe_rng_seed(&c, 42, 1);
    int differs = 0;
    for (int i = 0; i < 100; ++i) {
        uint64_t x = moe_rng_next(&a), y = moe_rng_next(&b), z = moe_rng_next(&c);
        ck_assert(x == y);
        differs |= x != z;
        double u = moe_rng_uniform(&a);
        ck_assert(u >= 0.0 && u < 1.0);
        moe_rng_uniform(&b);
        moe_rng_uniform(&c);
    }
    ck_assert(differs);
    ck_assert_uint_eq(moe_rng_below(&a, 0), 0);
    for (int i = 0; i < 1000; ++i)
        ck_assert_uint_lt(moe_rng_below(&a, 7), 7);
    double sum = 0.0, squares = 0.0;
    for (int i = 0; i < 20000; ++i) {
        double z = moe_rng_normal(&a);
        sum += z;
        squares += z * z;
    }
    ck_assert(fabs(sum / 20000.0) < 0.05 && fabs(squares / 20000.0 - 1.0) < 0.05);
}
END_TEST

static Suite *interface_suite(void)
{
    Suite *suite = suite_create("estimator_interface");
    TCase *tables = tcase_create("tables");
    tcase_add_test(tables, option_mask_is_enforced);
    tcase_add_test(tables, counters_reach_the_report);
    tcase_add_test(tables, builtin_options_list_and_round_trip);
    tcase_add_test(tables, estimator_options_read_decimal_text);
    tcase_add_test(tables, kernels_keep_their_contracts);
    tcase_add_test(tables, rng_streams_are_reproducible);
    suite_add_tcase(suite, tables);
    TCase *sessions = tcase_create("sessions");
    tcase_add_test(sessions, session_accumulates_over_small_batches);
    tcase_add_test(sessions, reset_reaches_the_estimator);
    tcase_add_test(sessions, saved_state_continues_the_session);
    suite_add_tcase(suite, sessions);
    TCase *aggregation = tcase_create("aggregation");
    tcase_add_test(aggregation, aggregation_sees_models_and_normalised_weights);
    suite_add_tcase(suite, aggregation);
    TCase *gate_only = tcase_create("gate_only");
    tcase_set_timeout(gate_only, 60);
    tcase_add_test(gate_only, update_experts_zero_fits_the_gate_alone);
    tcase_add_test(gate_only, start_function_gives_the_restarts);
    suite_add_tcase(suite, gate_only);
    return suite;
}

int main(void)
{
    return run_suite(interface_suite());
}
