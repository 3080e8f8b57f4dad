/*
 * moe_bitwise_driver: one line per case (cases.c) with everything a fit leaves that must not
 * change when the library is reorganised: the status and message, a digest of the saved
 * model, the report's numbers (log-likelihood and step sizes in %a, the counters, stages
 * and warnings; not the seconds), a digest of the trace, and digests of the covariance,
 * the predictions and the posterior on the fit's rows. bench/bitwise/compare.sh runs it
 * against two builds of the library and diffs the lines.
 *
 * It uses the installed public headers only, so that one source builds against any
 * revision of the library.
 *
 * usage: moe_bitwise_driver [SUBSTRING]   (only the cases whose name contains it)
 */
#include <moe/moe.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "data.h"

/* FNV-1a, 64 bits, over bytes. */
static uint64_t digest(uint64_t hash, const void *bytes, size_t size)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < size; ++i) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}
#define DIGEST_START 0xcbf29ce484222325ULL

static unsigned long long model_digest(const moe_model_t *model)
{
    size_t size = 0;
    if (moe_model_save_buffer(model, NULL, 0, &size) != MOE_OK)
        return 0;
    unsigned char *buffer = malloc(size);
    uint64_t hash = 0;
    if (buffer != NULL && moe_model_save_buffer(model, buffer, size, &size) == MOE_OK)
        hash = digest(DIGEST_START, buffer, size);
    free(buffer);
    return (unsigned long long)hash;
}

/* "name=value" words of the case's options, set by name; the first refusal is returned. */
static moe_status set_options(moe_fitter_t *fitter, const char *options)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", options);
    for (char *word = strtok(copy, " "); word != NULL; word = strtok(NULL, " ")) {
        char *equals = strchr(word, '=');
        if (equals == NULL)
            return MOE_ERR_INVALID_ARGUMENT;
        *equals = '\0';
        moe_status status = moe_fitter_set_option(fitter, word, equals + 1);
        if (status != MOE_OK)
            return status;
    }
    return MOE_OK;
}

static unsigned char *mask(const char *text, size_t d, unsigned char *bytes)
{
    if (text == NULL)
        return NULL;
    for (size_t j = 0; j < d; ++j)
        bytes[j] = text[j] == '1';
    return bytes;
}

/* A start of fixed, distinct parameters (init = model). */
static void set_start(moe_model_t *model)
{
    size_t K = moe_model_n_experts(model), rows = moe_model_expert_rows(model);
    size_t p = moe_model_n_inputs(model);
    double experts[64] = {0}, gate[64] = {0};
    for (size_t i = 0; i < K * rows * p && i < 64; ++i)
        experts[i] = (i % 2 == 0 ? 1.0 : -1.0) * (0.5 + 0.25 * (double)(i % 5));
    for (size_t i = 0; i + p < K * p && i < 64; ++i)
        gate[i] = 0.3 * (double)(i % 3) - 0.2;
    moe_model_set_experts(model, experts, K * rows * p);
    moe_model_set_gate(model, gate, K * p);
}

static moe_model_t *create_model(const bitwise_shape *shape, size_t d)
{
    unsigned char gate_bytes[8], expert_bytes[8];
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = shape->family;
    spec.link = shape->link;
    spec.n_experts = shape->experts;
    spec.n_features = d;
    spec.intercept = shape->intercept;
    spec.n_classes = shape->classes;
    spec.gate_features = mask(shape->gate_mask, d, gate_bytes);
    spec.expert_features = mask(shape->expert_mask, d, expert_bytes);
    spec.offset_feature = shape->offset;
    moe_model_t *model = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK)
        return NULL;
    if (shape->start)
        set_start(model);
    return model;
}

/* Batches of STREAM_BATCH rows through partial_fit; the statuses fold into *calls. */
static moe_status stream(moe_fitter_t *fitter, moe_model_t *model, const bitwise_data *data,
                         unsigned long long *calls)
{
    uint64_t hash = DIGEST_START;
    moe_status status = MOE_OK;
    for (size_t first = 0; first < data->n; first += STREAM_BATCH) {
        size_t rows = data->n - first < STREAM_BATCH ? data->n - first : STREAM_BATCH;
        status = moe_fitter_partial_fit(fitter, model, rows, data->X + first * data->d, data->d,
                                        data->y + first, NULL);
        int code = (int)status;
        hash = digest(hash, &code, sizeof code);
    }
    *calls = (unsigned long long)hash;
    return status;
}

/* Three em fits of a third of the rows each, reduced on every row (with or without y). */
static moe_status aggregate(moe_fitter_t *fitter, moe_model_t *model, const bitwise_data *data,
                            int with_y)
{
    moe_model_t *locals[3] = {NULL, NULL, NULL};
    moe_status status = MOE_OK;
    for (size_t m = 0; m < 3 && status == MOE_OK; ++m) {
        moe_fitter_t *local = NULL;
        size_t first = m * data->n / 3, rows = (m + 1) * data->n / 3 - first;
        status = moe_fitter_create(&local, "em");
        if (status == MOE_OK)
            status = moe_model_clone(&locals[m], model);
        if (status == MOE_OK)
            status = set_options(local, m == 1 ? "init=kmeans n_init=2 seed=3" : "n_init=1");
        if (status == MOE_OK)
            status = moe_fitter_fit(local, locals[m], rows, data->X + first * data->d, data->d,
                                    data->y + first, NULL);
        moe_fitter_free(local);
    }
    static const double weights[3] = {1.0, 2.0, 1.0};
    if (status == MOE_OK)
        status = moe_fitter_aggregate(fitter, model, 3, (const moe_model_t *const *)locals,
                                      weights, data->n, data->X, data->d,
                                      with_y ? data->y : NULL, NULL);
    for (size_t m = 0; m < 3; ++m)
        moe_model_free(locals[m]);
    return status;
}

/* status:digest of a matrix a model computes on the data's rows (vcov, predict, ...). */
typedef moe_status (*evaluation)(const moe_model_t *model, const bitwise_data *data,
                                 const double *weights, double *out, size_t length);

static moe_status vcov(const moe_model_t *model, const bitwise_data *data,
                       const double *weights, double *out, size_t length)
{
    return moe_model_vcov(model, data->n, data->X, data->d, data->y, weights, out, length);
}

static moe_status predict(const moe_model_t *model, const bitwise_data *data,
                          const double *weights, double *out, size_t length)
{
    (void)weights;
    return moe_model_predict(model, data->n, data->X, data->d, out, length);
}

static moe_status posterior(const moe_model_t *model, const bitwise_data *data,
                            const double *weights, double *out, size_t length)
{
    (void)weights;
    return moe_model_posterior(model, data->n, data->X, data->d, data->y, out, length);
}

static void print_evaluation(const char *name, evaluation run, size_t length,
                             const moe_model_t *model, const bitwise_data *data,
                             const double *weights)
{
    double *out = malloc(length * sizeof(double));
    moe_status status = out == NULL ? MOE_ERR_OUT_OF_MEMORY
                                    : run(model, data, weights, out, length);
    unsigned long long hash = status == MOE_OK
                                  ? (unsigned long long)digest(DIGEST_START, out,
                                                               length * sizeof(double))
                                  : 0;
    printf(" %s=%d:%016llx", name, (int)status, hash);
    free(out);
}

static void print_report(moe_fitter_t *fitter)
{
    moe_fit_report r = MOE_FIT_REPORT_INIT;
    moe_status status = moe_fitter_get_report(fitter, &r);
    printf(" report=%d loglik=%a iter=%zu total=%zu restarts=%zu best=%zu conv=%d", (int)status,
           r.loglik, r.iterations, r.total_iterations, r.n_restarts, r.best_restart,
           r.converged);
    printf(" mono=%zu worst=%a degen=%zu inner=%zu grad=%zu ridge=%zu lsf=%zu floor=%zu sep=%zu",
           r.monotonicity_violations, r.worst_relative_decrease, r.degenerate_events,
           r.inner_iterations, r.gradient_evaluations, r.ridge_fallbacks,
           r.line_search_failures, r.floored_variances, r.separation_events);
    printf(" step=%a gate_step=%a seen=%zu batches=%zu stages=%x search=%zu/%zu", r.step,
           r.gate_step, r.samples_seen, r.batches, r.stages, r.search_runs,
           r.search_iterations);
    printf(" stream=%zu/%zu/%a warnings=%x transition=%a", r.stream_steps, r.stream_rows,
           r.stream_loglik, r.warnings, r.gate_transition);
    size_t length = 0;
    moe_fitter_get_trace(fitter, NULL, 0, &length);
    double *trace = malloc((length > 0 ? length : 1) * sizeof(double));
    uint64_t hash = 0;
    if (trace != NULL && moe_fitter_get_trace(fitter, trace, length, &length) == MOE_OK)
        hash = digest(DIGEST_START, trace, length * sizeof(double));
    printf(" trace=%zu:%016llx", length, (unsigned long long)hash);
    free(trace);
}

/* The session state a streaming estimator saves (ismm), as a digest. */
static void print_state(const moe_fitter_t *fitter)
{
    size_t size = 0;
    moe_status status = moe_fitter_save_state_buffer(fitter, NULL, 0, &size);
    unsigned char *buffer = status == MOE_OK ? malloc(size) : NULL;
    uint64_t hash = 0;
    if (buffer != NULL &&
        (status = moe_fitter_save_state_buffer(fitter, buffer, size, &size)) == MOE_OK)
        hash = digest(DIGEST_START, buffer, size);
    printf(" state=%d:%016llx", (int)status, (unsigned long long)hash);
    free(buffer);
}

static moe_status run_fit(const bitwise_case *c, moe_fitter_t *fitter, moe_model_t *model,
                          const bitwise_data *data, unsigned long long *calls)
{
    switch (c->mode) {
    case MODE_FIT:
        return moe_fitter_fit(fitter, model, data->n, data->X, data->d, data->y, NULL);
    case MODE_WEIGHTED:
        return moe_fitter_fit(fitter, model, data->n, data->X, data->d, data->y,
                              data->weights);
    case MODE_STREAM:
        return stream(fitter, model, data, calls);
    case MODE_AGGREGATE:
    case MODE_AGGREGATE_NOY:
        return aggregate(fitter, model, data, c->mode == MODE_AGGREGATE);
    }
    return MOE_ERR_INVALID_ARGUMENT;
}

static void run_case(const bitwise_case *c, const bitwise_data *sets)
{
    const bitwise_data *data = &sets[c->set];
    moe_fitter_t *fitter = NULL;
    moe_model_t *model = create_model(&c->shape, data->d);
    moe_status status = model == NULL ? MOE_ERR_INVALID_ARGUMENT
                                      : moe_fitter_create(&fitter, c->estimator);
    if (status == MOE_OK && (status = set_options(fitter, c->options)) != MOE_OK) {
        printf("%s options-refused=%d %s\n", c->name, (int)status, moe_fitter_last_error(fitter));
        moe_fitter_free(fitter);
        moe_model_free(model);
        return;
    }
    unsigned long long calls = 0;
    if (status == MOE_OK)
        status = run_fit(c, fitter, model, data, &calls);
    printf("%s status=%d calls=%016llx message=\"%s\" model=%016llx", c->name, (int)status,
           calls, fitter != NULL ? moe_fitter_last_error(fitter) : moe_last_error(),
           model != NULL ? model_digest(model) : 0ULL);
    if (fitter != NULL)
        print_report(fitter);
    if (c->mode == MODE_STREAM)
        print_state(fitter);
    if (status == MOE_OK) {
        const double *weights = c->mode == MODE_WEIGHTED ? data->weights : NULL;
        size_t P = moe_model_n_free_params(model);
        print_evaluation("vcov", vcov, P * P, model, data, weights);
        print_evaluation("predict", predict, data->n * moe_model_prediction_width(model), model,
                         data, weights);
        print_evaluation("posterior", posterior, data->n * moe_model_n_experts(model), model,
                         data, weights);
    }
    printf("\n");
    moe_fitter_free(fitter);
    moe_model_free(model);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    bitwise_data sets[SET_COUNT];
    if (bitwise_data_make(sets) != 0) {
        fprintf(stderr, "moe_bitwise_driver: out of memory\n");
        bitwise_data_free(sets);
        return 1;
    }
    printf("# moe_bitwise_driver: %zu cases, estimators:", bitwise_case_count);
    for (size_t e = 0; e < moe_estimator_count(); ++e)
        printf(" %s", moe_estimator_name(e));
    printf("\n");
    for (size_t i = 0; i < bitwise_case_count; ++i)
        if (only == NULL || strstr(bitwise_cases[i].name, only) != NULL) {
            run_case(&bitwise_cases[i], sets);
            fflush(stdout);
        }
    bitwise_data_free(sets);
    return 0;
}
