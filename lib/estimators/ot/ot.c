/*
 * ot: distributed learning by optimal-transport aggregation (docs/ARCHITECTURE.md,
 * "Distributed learning"), written against the public headers.
 *
 * fit: the rows are split into `shards` parts by a permutation from the seed; each part is
 * fitted by a local em (its own fitter, with this fitter's options, its start search's budget
 * in proportion to its rows and its tol at least local_tol), the parts at once on the
 * threads; the local models are then reduced into the working model (ot_reduce.c) on a
 * support sample of N / shards rows (at most 25 per free parameter, at least 2000, and that
 * cap shrinking as 1 / shards beyond 16 shards) drawn
 * from all the rows with the same seed, leaving out a local model far below the best on the
 * support rows (option screen: a shard whose em ended in a poorer optimum). One shard
 * returns its local fit as it is.
 *
 * aggregate (moe_fitter_aggregate): the reduction of the caller's models on the caller's
 * support rows: what a coordinator does with models fitted elsewhere (libmoe_mpi gathers
 * them from the ranks).
 */
#include "estimators/ot/ot.h"
#include "common/option_fields.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct ot_settings {
    size_t shards;
    size_t support; /* 0: N / shards */
    int method;       /* ot_method */
    int gate_targets; /* ot_gate_targets */
    size_t restarts;
    double local_tolerance; /* the local fits' and the reduction's tol is at least this (0: the
                               fitter's tol) */
    double screen; /* local models more than this many nats per support row below the best are
                      left out of the reduction (0: none; needs the support's responses) */
} ot_settings;

static const char *const reduction_keywords[] = {"transport", "middle", "average", NULL};
static const char *const gate_target_keywords[] = {"plan", "posterior", NULL};

/* The local fits and the reduction's MM stop at 1e-5 unless tol is looser: a shard's em can
   creep for hundreds of iterations at 1e-7 to 1e-6 nats per row per iteration (a shard of
   K = 5, d = 20 took 4 s at the paper's 1e-6, against 0.9 s at 1e-5 with the same reduced
   model), far below what its rows can tell apart, while the global em's default tol of 1e-8
   is kept for single fits (bench/RESULTS.md). The screen: good shards' fits differ by
   hundredths of a nat per support row, one in a poorer optimum by tenths (bench/RESULTS.md). */
#define OT_OPTIONS(X, S)                                                                     \
    X(S, shards, "shards", MOE_OPTION_INTEGER, 0, 1, 1048576, 4, NULL,                        \
      "parts the rows are split into, each fitted by a local em")                             \
    X(S, support, "support", MOE_OPTION_INTEGER, 0, 0, 1099511627776.0, 0, NULL,              \
      "rows of the reduction's support sample; 0: N / shards within a cap")                   \
    X(S, method, "reduction", MOE_OPTION_KEYWORD, 0, 0, 0, OT_TRANSPORT, reduction_keywords,  \
      "how the local models are combined: transport (the paper's), middle or "                \
      "average")                                                                              \
    X(S, gate_targets, "gate_targets", MOE_OPTION_KEYWORD, 0, 0, 0, OT_GATE_PLAN,             \
      gate_target_keywords,                                                                   \
      "the reduced gate's targets: the transport plan, or the local posteriors")              \
    X(S, restarts, "reduction_restarts", MOE_OPTION_INTEGER, 0, 1, 10000, 1, NULL,            \
      "starts of the reduction's majorise-minimise iterations")                               \
    X(S, local_tolerance, "local_tol", MOE_OPTION_REAL, 0, 0, 1, 1e-5, NULL,                  \
      "the local fits' and the reduction's tol is at least this; 0: the fitter's tol")        \
    X(S, screen, "screen", MOE_OPTION_REAL, 0, 0, 1e300, 0.05, NULL,                          \
      "leave out local models this many nats per support row below the best; 0: keep "        \
      "all")
MOE_OPTION_LIST(static, ot, ot_settings, OT_OPTIONS);
MOE_OPTION_ACCESSORS(ot)

static moe_status ot_create(void **out)
{
    ot_settings *settings = malloc(sizeof *settings);
    if (settings == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    memset(settings, 0, sizeof *settings);
    *out = settings; /* the fitter sets every default from ot_option_table */
    return MOE_OK;
}

static void ot_destroy(void *state)
{
    free(state);
}

static moe_status reduction_options(moe_fit_context *context, const ot_settings *settings,
                                    ot_options *options)
{
    long long max_iter = 0, seed = 0;
    double tolerance = 0.0;
    moe_status status = moe_context_get_int(context, MOE_OPT_MAX_ITER, &max_iter);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_SEED, &seed);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_TOLERANCE, &tolerance);
    options->method = settings->method;
    options->gate_targets = settings->gate_targets;
    options->max_iter = (size_t)max_iter;
    options->restarts = settings->restarts;
    options->tolerance = tolerance > settings->local_tolerance ? tolerance
                                                                : settings->local_tolerance;
    options->screen = settings->screen;
    options->seed = (uint64_t)seed;
    return status;
}

static moe_status ot_aggregate(void *state, moe_fit_context *context)
{
    size_t count = 0;
    const moe_model_t *const *models = NULL;
    const double *weights = NULL;
    moe_rows support;
    ot_options options;
    moe_status status = moe_context_models(context, &count, &models, &weights);
    if (status == MOE_OK)
        status = moe_context_rows(context, &support);
    if (status == MOE_OK)
        status = reduction_options(context, state, &options);
    if (status != MOE_OK)
        return status;
    return ot_reduce(context, moe_context_model(context), count, models, weights, &support,
                     &options);
}

/*
 * The default support: N / M rows (the paper's), but no more than SUPPORT_ROWS_PER_PARAMETER
 * per free parameter of the model (at least SUPPORT_ROWS). A reduction MM iteration visits
 * L S = K M S (component, row) pairs, K N at S = N / M: an E-step's worth over all rows
 * whatever M, which made the reduction as slow as the global fit. The reduction fits
 * model-made targets (the local experts' means and gates at the support rows), not noisy
 * responses, so a support of a few thousand rows pins it as well (bench/RESULTS.md); the
 * start search's sample has the same size for the same reason.
 */
#define SUPPORT_ROWS 2000
#define SUPPORT_ROWS_PER_PARAMETER 25
/* Beyond SUPPORT_SHARDS shards the cap shrinks as 1 / M (at least SUPPORT_ROWS_LEAST rows),
   so that the reduction's M S (local models at the support rows) and K M S (MM pairs) stop
   growing with M: at 64 shards of K = 4, d = 10 it took 0.04 to 0.06 s on 2025 rows, as
   long as the slowest shard's fit; on 506 rows 0.007 s with the same gap (bench/RESULTS.md). */
#define SUPPORT_SHARDS 16
#define SUPPORT_ROWS_LEAST 500

static size_t default_support(const moe_model_t *model, size_t n, size_t M)
{
    size_t cap = SUPPORT_ROWS_PER_PARAMETER * moe_model_n_free_params(model);
    if (cap < SUPPORT_ROWS)
        cap = SUPPORT_ROWS;
    if (M > SUPPORT_SHARDS) {
        cap = cap * SUPPORT_SHARDS / M;
        if (cap < SUPPORT_ROWS_LEAST)
            cap = SUPPORT_ROWS_LEAST;
    }
    return n / M < cap ? n / M : cap;
}

/* The pinned options a local em takes from this fitter. */
static const moe_option passed_on[] = {
    MOE_OPT_MAX_ITER,      MOE_OPT_TOLERANCE,       MOE_OPT_N_INIT,          MOE_OPT_SEED,
    MOE_OPT_INIT,          MOE_OPT_GATE_L2,         MOE_OPT_EXPERT_RIDGE,    MOE_OPT_VARIANCE_FLOOR,
    MOE_OPT_GATE_MAX_NEWTON, MOE_OPT_GATE_TOLERANCE, MOE_OPT_MIN_EXPERT_WEIGHT};

typedef struct shard {
    moe_fitter_t *fitter;
    moe_model_t *model;
    double *X, *y, *w;
    size_t n;
    moe_status status;
    char message[512];
} shard;

/* Shard `part`: the rows order[first .. last) of the data's, d features each, and a local
   em with this fitter's options. */
static moe_status shard_create(moe_fit_context *context, const ot_settings *settings,
                               const moe_model_t *model, const moe_rows *data,
                               const size_t *order, size_t first, size_t last, shard *part)
{
    size_t d = moe_model_n_features(model);
    part->n = last - first;
    part->X = malloc(part->n * (d > 0 ? d : 1) * sizeof(double));
    part->y = malloc(part->n * sizeof(double));
    part->w = malloc(part->n * sizeof(double));
    if (!part->X || !part->y || !part->w)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < part->n; ++i) {
        size_t row = order[first + i];
        if (d > 0)
            memcpy(part->X + i * d, data->X + row * data->ldx, d * sizeof(double));
        part->y[i] = data->y[row];
        part->w[i] = data->weights != NULL ? data->weights[row] : 1.0;
    }
    moe_status status = moe_fitter_create(&part->fitter, "em");
    /* A local fit's start search takes a budget in proportion to its rows, so that a
       shard's whole fit shrinks with them (the search is a fixed cost otherwise, and it
       was most of a small shard's time: bench/RESULTS.md): this fitter's search_shards,
       which the local em honours, or else -1, a share by the shard's rows. */
    double search_shards = 0.0;
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_SEARCH_SHARDS, &search_shards);
    if (status == MOE_OK)
        status = moe_fitter_set_double(part->fitter, MOE_OPT_SEARCH_SHARDS,
                                       search_shards > 0.0 ? search_shards : -1.0);
    for (size_t o = 0; status == MOE_OK && o < sizeof passed_on / sizeof passed_on[0]; ++o) {
        double value = 0.0;
        status = moe_context_get_double(context, passed_on[o], &value);
        if (passed_on[o] == MOE_OPT_TOLERANCE && value < settings->local_tolerance)
            value = settings->local_tolerance;
        if (status == MOE_OK)
            status = moe_fitter_set_double(part->fitter, passed_on[o], value);
    }
    if (status == MOE_OK)
        status = moe_model_clone(&part->model, model);
    return status;
}

/* The shards as contiguous rows of a permutation from the seed. */
static moe_status shards_create(moe_fit_context *context, const ot_settings *settings,
                                const moe_model_t *model, const moe_rows *data, uint64_t seed,
                                shard *parts)
{
    size_t n = data->n, M = settings->shards;
    size_t *order = malloc(n * sizeof(size_t));
    if (order == NULL)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the shards");
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0x73686172ULL); /* "shar" */
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    for (size_t i = n; i > 1; --i) {
        size_t j = moe_rng_below(&rng, i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    moe_status status = MOE_OK;
    for (size_t m = 0; m < M && status == MOE_OK; ++m)
        status = shard_create(context, settings, model, data, order, m * n / M,
                              (m + 1) * n / M, &parts[m]);
    free(order);
    return status;
}

/* The local fits, each on one thread, and their counters into this fit's. */
static moe_status shards_fit(moe_fit_context *context, shard *parts, size_t M, size_t d,
                             long long threads)
{
    moe_status status = MOE_OK;
    long long m_count = (long long)M;
#ifdef _OPENMP
    int workers = threads > 0 ? (int)threads : 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(workers > 0 ? workers : omp_get_max_threads())
#else
    (void)threads;
#endif
    for (long long m = 0; m < m_count; ++m) {
        shard *part = &parts[m];
        part->status = moe_fitter_fit(part->fitter, part->model, part->n, part->X, d, part->y,
                                      part->w);
        if (part->status != MOE_OK)
            snprintf(part->message, sizeof part->message, "%s",
                     moe_fitter_last_error(part->fitter));
    }
    for (size_t m = 0; m < M && status == MOE_OK; ++m)
        if (parts[m].status != MOE_OK) {
            char message[700];
            snprintf(message, sizeof message, "the local fit of shard %zu failed: %s", m,
                     parts[m].message);
            status = moe_context_fail(context, parts[m].status, message);
        }
    for (size_t m = 0; status == MOE_OK && m < M; ++m) {
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        if (moe_fitter_get_report(parts[m].fitter, &report) == MOE_OK) {
            moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, report.inner_iterations);
            moe_context_count(context, MOE_COUNTER_SEPARATION_EVENTS, report.separation_events);
            moe_context_count(context, MOE_COUNTER_SEARCH_RUNS, report.search_runs);
            moe_context_count(context, MOE_COUNTER_SEARCH_ITERATIONS, report.search_iterations);
        }
    }
    return status;
}

/* One shard is the local fit itself: its parameters into the working model (a clone of
   it, so of its structure). */
static moe_status copy_local_fit(moe_fit_context *context, const moe_model_t *only,
                                 moe_model_t *model)
{
    moe_status status = moe_model_copy_parameters(model, only);
    if (status != MOE_OK)
        return moe_context_fail(context, status, "cannot copy the local fit");
    return MOE_OK;
}

/* S of the data's rows drawn without replacement by selection sampling (each row in turn,
   kept with probability needed / left): their x into support_X, their y into support_y. */
static void draw_support(const moe_rows *data, size_t d, size_t S, uint64_t seed,
                         double *support_X, double *support_y)
{
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0x737570ULL); /* "sup" */
    size_t n = data->n, taken = 0;
    for (size_t i = 0; i < n && taken < S; ++i)
        if (moe_rng_below(&rng, n - i) < S - taken) {
            if (d > 0)
                memcpy(support_X + taken * d, data->X + i * data->ldx, d * sizeof(double));
            support_y[taken++] = data->y[i];
        }
}

/* The local models, weighed by their shards' rows, reduced into the working model on a
   support of N / M rows (or the option's) drawn from all the rows. */
static moe_status reduce_shards(moe_fit_context *context, const ot_settings *settings,
                                moe_model_t *model, const moe_rows *data, uint64_t seed,
                                const shard *parts)
{
    size_t n = data->n, d = moe_model_n_features(model), M = settings->shards;
    size_t S = settings->support > 0 ? settings->support : default_support(model, n, M);
    if (S > n)
        S = n;
    if (S == 0)
        S = 1;
    double *support_X = malloc(S * (d > 0 ? d : 1) * sizeof(double));
    double *support_y = malloc(S * sizeof(double));
    const moe_model_t **models = malloc(M * sizeof *models);
    double *shares = malloc(M * sizeof(double));
    moe_status status = MOE_OK;
    if (!support_X || !support_y || !models || !shares)
        status = moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == MOE_OK) {
        draw_support(data, d, S, seed, support_X, support_y);
        double total = 0.0;
        for (size_t m = 0; m < M; ++m)
            total += (double)parts[m].n;
        for (size_t m = 0; m < M; ++m) {
            models[m] = parts[m].model;
            shares[m] = (double)parts[m].n / total;
        }
        moe_rows support = {S, d > 0 ? support_X : NULL, d, support_y, NULL};
        ot_options options;
        status = reduction_options(context, settings, &options);
        if (status == MOE_OK)
            status = ot_reduce(context, model, M, models, shares, &support, &options);
    }
    free(support_X);
    free(support_y);
    free(models);
    free(shares);
    return status;
}

static moe_status ot_fit(void *state, moe_fit_context *context)
{
    const ot_settings *settings = state;
    moe_model_t *model = moe_context_model(context);
    moe_rows data = {0, NULL, 0, NULL, NULL};
    long long seed = 0, threads = 1;
    moe_status status =
        moe_context_data(context, &data.n, &data.X, &data.ldx, &data.y, &data.weights);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_SEED, &seed);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_THREADS, &threads);
    if (status == MOE_OK)
        status = ot_check_family(context, model);
    if (status != MOE_OK)
        return status;
    size_t M = settings->shards;
    if (M > data.n)
        return moe_context_fail(context, MOE_ERR_TOO_FEW_SAMPLES, "more shards than rows");
    shard *parts = calloc(M, sizeof(shard));
    if (parts == NULL)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the shards");
    status = shards_create(context, settings, model, &data, (uint64_t)seed, parts);
    if (status == MOE_OK)
        status = shards_fit(context, parts, M, moe_model_n_features(model), threads);
    if (status == MOE_OK && M == 1)
        status = copy_local_fit(context, parts[0].model, model);
    else if (status == MOE_OK)
        status = reduce_shards(context, settings, model, &data, (uint64_t)seed, parts);
    for (size_t m = 0; m < M; ++m) {
        moe_fitter_free(parts[m].fitter);
        moe_model_free(parts[m].model);
        free(parts[m].X);
        free(parts[m].y);
        free(parts[m].w);
    }
    free(parts);
    return status;
}

const moe_estimator_ops moe_estimator_ot = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "ot",
    .create = ot_create,
    .destroy = ot_destroy,
    .fit = ot_fit,
    .partial_fit = NULL,
    .options = MOE_OPTION_BIT(MOE_OPT_MAX_ITER) | MOE_OPTION_BIT(MOE_OPT_TOLERANCE) |
               MOE_OPTION_BIT(MOE_OPT_N_INIT) | MOE_OPTION_BIT(MOE_OPT_SEED) |
               MOE_OPTION_BIT(MOE_OPT_INIT) | MOE_OPTION_BIT(MOE_OPT_GATE_L2) |
               MOE_OPTION_BIT(MOE_OPT_EXPERT_RIDGE) | MOE_OPTION_BIT(MOE_OPT_VARIANCE_FLOOR) |
               MOE_OPTION_BIT(MOE_OPT_GATE_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_GATE_TOLERANCE) |
               MOE_OPTION_BIT(MOE_OPT_MIN_EXPERT_WEIGHT) | MOE_OPTION_BIT(MOE_OPT_THREADS) |
               MOE_OPTION_BIT(MOE_OPT_SEARCH_SHARDS),
    .flags = MOE_ESTIMATOR_OWN_OBJECTIVE, /* the trace is the negated transport cost */
    .reset = NULL,
    .aggregate = ot_aggregate,
    .save_state = NULL,
    .load_state = NULL,
    .option_table = ot_option_table,
    .option_count = sizeof ot_option_table / sizeof ot_option_table[0],
    .set_option = ot_set_option,
    .get_option = ot_get_option,
};
