/*
 * cqt: the tensor estimator of Gaussian experts (docs/ARCHITECTURE.md, "The tensor
 * estimator"), written against moe/estimator.h.
 *
 * Stage 1 finds the experts' directions from the cross moments of x with the cubic and
 * quadratic transforms of y (cqt_moments.c, cqt_decompose.c); stage 2 fits the gate by EM
 * with those experts held (cqt_gate.c), from n_init random starts in the whitened domain.
 * With refine = 1, em then fits every parameter from that solution.
 *
 * What the method assumes, and what it says when the data break it:
 *   - Gaussian experts, any link, no intercept anywhere: the model is y = g(a_k' x) + noise
 *     with the gate softmax(W x); a model with an intercept is MOE_ERR_UNSUPPORTED.
 *   - x roughly Gaussian and centred: the scores of the moments are Gaussian ones, and
 *     without intercepts a mean cannot be absorbed (x whose mean is far from 0 relative to
 *     its spread is MOE_ERR_UNSUPPORTED; centre it first).
 *   - K <= d, and K positive directions in the second moment (else MOE_ERR_UNSUPPORTED or
 *     MOE_ERR_NUMERICAL with the eigenvalues in the message); a covariance of x that cannot
 *     be inverted is MOE_ERR_NUMERICAL.
 *   - one noise variance shared by the experts, given (sigma) or estimated; experts of unit
 *     norm in the whitened coordinates (expert_scale = natural keeps the tensor's own scale).
 */
#define _POSIX_C_SOURCE 200809L

#include "estimators/cqt/cqt.h"
#include "common/clock.h"
#include "common/option_fields.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The stream of the decomposition's random starts; restarts of stage 2 use their index. */
#define CQT_TENSOR_STREAM 0x74656e736f72ULL

/* Which decompositions stage 1 tries: one method, or both with the likelihood choosing. */
typedef enum cqt_decomposition {
    DECOMPOSE_POWER = CQT_POWER,
    DECOMPOSE_ALS = CQT_ALS,
    DECOMPOSE_BOTH = 2
} cqt_decomposition;

typedef struct cqt_settings {
    double sigma;           /* noise standard deviation; 0: estimate */
    int preset;             /* cqt_preset: the ReLU constants */
    int decomposition;      /* cqt_decomposition */
    size_t restarts, iterations;
    int gate;               /* cqt_gate_method */
    double radius;          /* whitened bound on each free gate row; 0: no bound */
    double change_tol;
    int natural_scale;
    int refine;
    size_t first_restart; /* restart r draws the gate's start from stream first_restart + r */
} cqt_settings;

/* ---- Options ------------------------------------------------------------------------------ */

static const char *const preset_keywords[] = {"exact", "paper", NULL};
static const char *const decomposition_keywords[] = {"power", "als", "both", NULL};
static const char *const gate_keywords[] = {"em", "gradient", "moments", NULL};
static const char *const scale_keywords[] = {"unit", "natural", NULL};

/*
 * The gate's radius bounds each free row's logit standard deviation. Without one, experts
 * that stage 1 got wrong can leave soft labels a gate separates, and the gate stage then
 * grows a row without bound. 8 was measured (docs/REPRODUCTIONS.md, "The gate's radius"):
 * the paper's R = 1, and 2, clip true gates (the truth re-referenced to the fitted reference
 * expert has rows up to 2R, and on gates three times the paper's E rose up to fourfold); in
 * 340 fits of 11 settings 8 changed only the one whose gate ran away.
 *
 * Both decompositions by default: at k = 4 (d = 10, n = 8000, sigma = 0.5) the power method
 * alone left an expert below cosine 0.9 in 44 of 150 truths, ALS alone in 33, and the one of
 * the two with the larger likelihood after a gate stage in 33, with the smallest mean error
 * at k = 3 and 4 (docs/REPRODUCTIONS.md, "The k = 4 misses"). No criterion of stage 1 alone
 * can choose: the residual prefers the power method's fit of the noise.
 *
 * One row per option (common/option_fields.h): field, name, type, flags, lower, upper,
 * default, keywords, description.
 */
#define CQT_OPTIONS(X, S)                                                                    \
    X(S, sigma, "sigma", MOE_OPTION_REAL, 0, 0, 1e300, 0, NULL,                               \
      "noise standard deviation shared by the experts; 0: estimated")                         \
    X(S, preset, "relu_constants", MOE_OPTION_KEYWORD, 0, 0, 0, CQT_PRESET_EXACT,             \
      preset_keywords, "the ReLU link's moment constants: exact, or the paper's")             \
    X(S, decomposition, "decomposition", MOE_OPTION_KEYWORD, 0, 0, 0, DECOMPOSE_BOTH,         \
      decomposition_keywords,                                                                 \
      "stage 1's tensor decomposition: power, als, or both (the likelihood chooses)")         \
    X(S, restarts, "tensor_restarts", MOE_OPTION_INTEGER, 0, 1, 100000, 30, NULL,             \
      "random starts of the tensor decomposition")                                            \
    X(S, iterations, "tensor_iterations", MOE_OPTION_INTEGER, 0, 1, 100000, 50, NULL,         \
      "iterations per start of the tensor decomposition")                                     \
    X(S, gate, "gate_method", MOE_OPTION_KEYWORD, 0, 0, 0, CQT_GATE_EM, gate_keywords,        \
      "stage 2's gate fit: em, gradient, or moments")                                         \
    X(S, radius, "gate_radius", MOE_OPTION_REAL, 0, 0, 1e300, 8.0, NULL,                      \
      "whitened bound on each free gate row; 0: none")                                        \
    X(S, change_tol, "gate_change_tol", MOE_OPTION_REAL, 0, 0, 1e300, 1e-5, NULL,             \
      "stage 2 stops when the gate moves less than this")                                     \
    X(S, natural_scale, "expert_scale", MOE_OPTION_KEYWORD, 0, 0, 0, 0, scale_keywords,       \
      "experts of unit norm in whitened coordinates, or the tensor's natural scale")          \
    X(S, refine, "refine", MOE_OPTION_INTEGER, 0, 0, 1, 0, NULL,                              \
      "1: em then fits every parameter from the tensor solution")                              \
    X(S, first_restart, "first_restart", MOE_OPTION_INTEGER, 0, 0, 9007199254740991.0, 0, NULL, \
      "restart r's gate starts from PRNG stream first_restart + r, so that n_init = 1 "       \
      "fits give the restarts of one fit one at a time")
MOE_OPTION_LIST(static, cqt, cqt_settings, CQT_OPTIONS);
MOE_OPTION_ACCESSORS(cqt)

static moe_status cqt_create(void **state)
{
    cqt_settings *settings = malloc(sizeof *settings);
    if (settings == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    memset(settings, 0, sizeof *settings);
    *state = settings; /* the fitter sets every default from cqt_option_table */
    return MOE_OK;
}

static void cqt_destroy(void *state)
{
    free(state);
}

/* ---- Stage 1 into a model ----------------------------------------------------------------- */

static moe_status check_model(moe_fit_context *context, const moe_model_t *model)
{
    if (moe_model_family(model) != MOE_FAMILY_GAUSSIAN)
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                "cqt fits Gaussian experts only: its moments are those of a "
                                "real response");
    if (moe_model_has_intercept(model))
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                "cqt fits models without intercepts (y = g(a' x) + noise, gate "
                                "softmax(W x)): the moment conditions hold only for experts "
                                "through the origin of centred x; create the model with "
                                "intercept = 0 and centre x");
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_status status = moe_model_get_spec(model, &spec);
    if (status == MOE_OK && (spec.gate_features != NULL || spec.expert_features != NULL))
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                "cqt needs the gate and the experts to see every column: its "
                                "moment tensors are those of the one x both are functions of; "
                                "fit this model with em, gem, gd, ismm or ot");
    return status;
}

typedef struct tensor_result {
    cqt_stage1 stage;
    double *lambda, *theta;
} tensor_result;

static void tensor_result_free(tensor_result *result)
{
    cqt_stage1_free(&result->stage);
    free(result->lambda);
    free(result->theta);
}

/*
 * A third moment that does not show K components: fewer experts than K, or a moment too noisy
 * at this n. The second is what the nonlinear links meet: their transforms keep c3 times the
 * weights of signal (the identity's c3 is 6, the sigmoid's 0.023), and at sigma = 0.5 a row
 * of P3(y) He3 / c3 has about 4 times the identity's standard deviation for the sigmoid and
 * 3 times for ReLU (docs/REPRODUCTIONS.md, Figs. 4-5).
 */
static moe_status weak_tensor(moe_fit_context *context, const moe_model_t *model,
                              const cqt_settings *settings, const char *what)
{
    cqt_constants constants;
    char message[512], unused[64];
    double sigma2 = settings->sigma > 0.0 ? settings->sigma * settings->sigma : 0.0;
    if (cqt_constants_for(moe_model_link(model), settings->preset, sigma2, &constants, unused,
                          sizeof unused) != 0)
        constants.c3 = NAN;
    snprintf(message, sizeof message,
             "%s: either the data have fewer than K experts, or the third moment is too noisy "
             "at this n to show K (its signal is c3 = %.3g times the mixing weights, against 6 "
             "for the identity link): more rows or less noise are needed, or a smaller K",
             what, constants.c3);
    return moe_context_fail(context, MOE_ERR_NUMERICAL, message);
}

/* Stage 1 into result (its stage, and room for the decomposition). */
static moe_status stage1_checked(moe_fit_context *context, const moe_model_t *model,
                                 const cqt_settings *settings, tensor_result *result)
{
    memset(result, 0, sizeof *result);
    size_t K = moe_model_n_experts(model), d = moe_model_n_features(model);
    moe_rows rows;
    moe_status status = moe_context_rows(context, &rows);
    if (status != MOE_OK)
        return status;
    double sigma2 = settings->sigma > 0.0 ? settings->sigma * settings->sigma : -1.0;
    status = cqt_stage1_run(context, &rows, d, moe_model_link(model), settings->preset, sigma2,
                            K, &result->stage);
    if (status != MOE_OK)
        return status;
    /* A centred sample has a mean of about sqrt(d / n) standard deviations. */
    double allowed = 0.1 + 4.0 * sqrt((double)d / (double)(rows.n > 0 ? rows.n : 1));
    if (result->stage.mean_distance > allowed) {
        char message[320];
        snprintf(message, sizeof message,
                 "cqt: x is not centred (its mean is %.3g standard deviations from 0, more "
                 "than %.3g): a model without intercepts cannot absorb it; subtract the mean "
                 "of each feature first",
                 result->stage.mean_distance, allowed);
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED, message);
    }
    result->lambda = calloc(K, sizeof(double));
    result->theta = calloc(K * K, sizeof(double));
    if (result->lambda == NULL || result->theta == NULL)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                "cannot allocate cqt's decomposition");
    return MOE_OK;
}

/*
 * Decompose stage 1's tensor by `method` and put the experts (and the shared variance, at
 * least variance_floor) into model. Every call starts the decomposition's random stream
 * afresh, so a method gives the same experts whether it runs alone or beside the other.
 */
static moe_status experts_from_decomposition(moe_fit_context *context, moe_model_t *model,
                                             const cqt_settings *settings, cqt_method method,
                                             double variance_floor, tensor_result *result)
{
    size_t K = moe_model_n_experts(model), d = moe_model_n_features(model);
    long long seed = 0;
    moe_status status = moe_context_get_int(context, MOE_OPT_SEED, &seed);
    if (status != MOE_OK)
        return status;
    const cqt_stage1 *stage = &result->stage;
    double *experts = calloc(K * d, sizeof(double)), *variances = calloc(K, sizeof(double));
    double *tensor = malloc(K * K * K * sizeof(double));
    if (experts == NULL || variances == NULL || tensor == NULL) {
        free(experts);
        free(variances);
        free(tensor);
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                "cannot allocate cqt's decomposition");
    }
    moe_rng rng;
    moe_rng_seed(&rng, (uint64_t)seed, CQT_TENSOR_STREAM);
    memcpy(tensor, stage->tensor, K * K * K * sizeof(double));
    size_t found = cqt_decompose(tensor, K, method, settings->restarts, settings->iterations,
                                 &rng, result->lambda, result->theta);
    free(tensor);
    if (found < K)
        status = weak_tensor(context, model, settings,
                             "cqt: the whitened third moment has fewer than K positive "
                             "components");
    for (size_t i = 0; status == MOE_OK && i < K; ++i) {
        const double *theta = result->theta + i * K;
        /* lambda = 1 / sqrt(pi): a weight below 1e-6 is not a component. */
        if (!(result->lambda[i] < 1e3)) {
            char what[128];
            snprintf(what, sizeof what,
                     "cqt: a component of the third moment has no weight (lambda = %g)",
                     result->lambda[i]);
            status = weak_tensor(context, model, settings, what);
            break;
        }
        double length = 0.0;
        for (size_t j = 0; j < K; ++j)
            length += stage->nu[j] * theta[j] * theta[j];
        length = sqrt(length);
        double scale = settings->natural_scale ? result->lambda[i] : 1.0 / length;
        for (size_t a = 0; a < d; ++a) {
            double sum = 0.0;
            for (size_t j = 0; j < K; ++j)
                sum += stage->unwhiten[a * K + j] * theta[j];
            experts[i * d + a] = scale * sum;
        }
    }
    if (status == MOE_OK) {
        double variance = stage->sigma2 > variance_floor ? stage->sigma2 : variance_floor;
        for (size_t i = 0; i < K; ++i)
            variances[i] = variance;
        status = moe_model_set_experts(model, experts, K * d);
        if (status == MOE_OK)
            status = moe_model_set_variances(model, variances, K);
    }
    free(experts);
    free(variances);
    return status;
}

/* The absolute variance floor: the option is relative to the weighted variance of y. */
static double absolute_floor(moe_fit_context *context, const cqt_stage1 *stage)
{
    double relative = 0.0;
    moe_context_get_double(context, MOE_OPT_VARIANCE_FLOOR, &relative);
    double spread = stage->y_second - stage->y_mean * stage->y_mean;
    return relative * (spread > 0.0 ? spread : 1.0);
}

/* ---- The estimator -------------------------------------------------------------------------- */

typedef struct forward {
    moe_fit_context *context;
    size_t restart, offset;
    moe_status status;
} forward;

/* em's iterations during refinement go to cqt's trace, progress and cancel. */
static int forward_progress(const moe_progress *progress, void *user)
{
    forward *state = user;
    state->status = moe_context_iteration(state->context, state->restart,
                                          state->offset + progress->iteration, progress->loglik);
    return state->status != MOE_OK;
}

static moe_status refine(moe_fit_context *context, moe_model_t *model, size_t restart,
                         size_t offset)
{
    moe_fitter_t *em = NULL;
    moe_status status = moe_fitter_create(&em, "em");
    static const moe_option copied_int[] = {MOE_OPT_MAX_ITER, MOE_OPT_SEED, MOE_OPT_THREADS,
                                            MOE_OPT_GATE_MAX_NEWTON};
    static const moe_option copied_real[] = {MOE_OPT_TOLERANCE, MOE_OPT_GATE_L2,
                                             MOE_OPT_EXPERT_RIDGE, MOE_OPT_VARIANCE_FLOOR,
                                             MOE_OPT_GATE_TOLERANCE, MOE_OPT_MIN_EXPERT_WEIGHT};
    for (size_t i = 0; status == MOE_OK && i < sizeof copied_int / sizeof copied_int[0]; ++i) {
        long long value = 0;
        status = moe_context_get_int(context, copied_int[i], &value);
        if (status == MOE_OK)
            status = moe_fitter_set_int(em, copied_int[i], value);
    }
    for (size_t i = 0; status == MOE_OK && i < sizeof copied_real / sizeof copied_real[0]; ++i) {
        double value = 0.0;
        status = moe_context_get_double(context, copied_real[i], &value);
        if (status == MOE_OK)
            status = moe_fitter_set_double(em, copied_real[i], value);
    }
    if (status == MOE_OK)
        status = moe_fitter_set_int(em, MOE_OPT_INIT, MOE_INIT_MODEL);
    if (status == MOE_OK)
        status = moe_fitter_set_int(em, MOE_OPT_N_INIT, 1);
    forward state = {context, restart, offset, MOE_OK};
    if (status == MOE_OK)
        status = moe_fitter_set_progress(em, forward_progress, &state);
    const double *X = NULL, *y = NULL, *weights = NULL;
    size_t n = 0, ldx = 0;
    if (status == MOE_OK)
        status = moe_context_data(context, &n, &X, &ldx, &y, &weights);
    if (status == MOE_OK) {
        status = moe_fitter_fit(em, model, n, X, ldx, y, weights);
        if (state.status != MOE_OK)
            status = state.status; /* the outer trace's failure or a cancel */
        else if (status != MOE_OK)
            moe_context_fail(context, status, moe_fitter_last_error(em));
    }
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    if (em != NULL && moe_fitter_get_report(em, &report) == MOE_OK) {
        moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, report.inner_iterations);
        moe_context_count(context, MOE_COUNTER_DEGENERATE_EVENTS, report.degenerate_events);
        moe_context_count(context, MOE_COUNTER_RIDGE_FALLBACKS, report.ridge_fallbacks);
        moe_context_count(context, MOE_COUNTER_FLOORED_VARIANCES, report.floored_variances);
        moe_context_count(context, MOE_COUNTER_SEPARATION_EVENTS, report.separation_events);
        if (report.monotonicity_violations > 0)
            moe_context_note_decrease(context, report.worst_relative_decrease);
    }
    moe_fitter_free(em);
    return status;
}

static moe_status gate_options(moe_fit_context *context, const cqt_settings *settings,
                               const cqt_stage1 *stage, cqt_gate_options *options)
{
    long long max_iter = 0;
    double step = 0.0;
    moe_status status = moe_context_get_int(context, MOE_OPT_MAX_ITER, &max_iter);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_GATE_STEP, &step);
    options->method = settings->gate;
    options->radius = settings->radius;
    options->change_tol = settings->change_tol;
    options->max_iter = (size_t)max_iter;
    /* 1 / L for the softmax's curvature bound 1/2 in whitened coordinates. */
    options->step = step > 0.0 ? step : 2.0;
    options->estimate_sigma = !(settings->sigma > 0.0);
    options->variance_floor = absolute_floor(context, stage);
    options->record = 1;
    return status;
}

/* A candidate's gate stage is cut short: the gate settles in about ten iterations (Fig. 3a),
   and so does the likelihood's ranking of the candidates (the same choice on 300 truths of
   Figs. 3b-c's laws); converging takes 30 to 60, which made the default 2.3 times slower. */
enum { CANDIDATE_ITERATIONS = 10 };

/*
 * The experts of one decomposition, or with decomposition = both, of the one of the power
 * method's and ALS's whose short gate stage (one unrecorded restart) ends with the larger
 * log-likelihood: the likelihood sees an expert that stage 1 missed, which no criterion of
 * the tensor alone does. The power method's refusal of a tensor without K components stands
 * (ALS's orthonormal frame cannot tell); a failure of ALS's candidate only drops it.
 */
static moe_status choose_decomposition(moe_fit_context *context, moe_model_t *model,
                                       const cqt_settings *settings,
                                       const cqt_gate_options *options, tensor_result *result)
{
    double floor = options->variance_floor;
    if (settings->decomposition != DECOMPOSE_BOTH)
        return experts_from_decomposition(context, model, settings,
                                          (cqt_method)settings->decomposition, floor, result);
    static const cqt_method methods[] = {CQT_POWER, CQT_ALS};
    long long seed = 0;
    moe_model_t *trial = NULL;
    moe_status status = moe_context_get_int(context, MOE_OPT_SEED, &seed);
    if (status == MOE_OK)
        status = moe_model_clone(&trial, model);
    cqt_gate_options quiet = *options;
    quiet.record = 0;
    if (quiet.max_iter > CANDIDATE_ITERATIONS)
        quiet.max_iter = CANDIDATE_ITERATIONS;
    double best_objective = -INFINITY;
    size_t chosen = 0;
    for (size_t m = 0; status == MOE_OK && m < sizeof methods / sizeof methods[0]; ++m) {
        moe_status tried =
            experts_from_decomposition(context, trial, settings, methods[m], floor, result);
        if (tried != MOE_OK && m == 0)
            status = tried;
        cqt_gate_result gate;
        if (tried == MOE_OK) {
            moe_rng rng;
            moe_rng_seed(&rng, (uint64_t)seed, 0);
            tried = cqt_gate_fit(context, trial, &result->stage, &quiet, &rng, 0, &gate);
        }
        if (tried == MOE_ERR_OUT_OF_MEMORY)
            status = tried;
        if (tried == MOE_OK && gate.objective > best_objective) {
            best_objective = gate.objective;
            chosen = m;
        }
    }
    moe_model_free(trial);
    if (status != MOE_OK)
        return status;
    return experts_from_decomposition(context, model, settings, methods[chosen], floor, result);
}

static moe_status cqt_fit(void *state, moe_fit_context *context)
{
    const cqt_settings *settings = state;
    moe_model_t *model = moe_context_model(context);
    moe_status status = check_model(context, model);
    if (status != MOE_OK)
        return status;
    tensor_result tensor;
    cqt_gate_options options = {0};
    double started = moe_now_seconds();
    /* The gate options carry the variance floor, which needs y's spread from stage 1. The
       choice between decompositions, gate stages included, counts as the tensor stage. */
    status = stage1_checked(context, model, settings, &tensor);
    if (status == MOE_OK)
        status = gate_options(context, settings, &tensor.stage, &options);
    if (status == MOE_OK)
        status = choose_decomposition(context, model, settings, &options, &tensor);
    moe_context_add_stage_seconds(context, MOE_STAGE_TENSOR, moe_now_seconds() - started);
    started = moe_now_seconds();
    if (status == MOE_OK)
        moe_context_add_stages(context, MOE_STAGE_TENSOR);
    long long n_init = 1, seed = 0;
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_N_INIT, &n_init);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_SEED, &seed);
    /* The moment gate has no random start: one restart is all of it. */
    size_t restarts = settings->gate == CQT_GATE_MOMENTS ? 1 : (size_t)n_init;
    moe_model_t *trial = NULL, *start = NULL;
    if (status == MOE_OK)
        status = moe_model_clone(&trial, model);
    if (status == MOE_OK)
        status = moe_model_clone(&start, model);
    double best_objective = -INFINITY;
    size_t best = 0, best_iterations = 0;
    int best_converged = 0;
    for (size_t restart = 0; status == MOE_OK && restart < restarts; ++restart) {
        moe_rng rng;
        moe_rng_seed(&rng, (uint64_t)seed, (uint64_t)(settings->first_restart + restart));
        status = moe_model_copy_parameters(trial, start);
        cqt_gate_result result;
        if (status == MOE_OK)
            status = cqt_gate_fit(context, trial, &tensor.stage, &options, &rng, restart,
                                  &result);
        if (status == MOE_OK && result.objective > best_objective) {
            best_objective = result.objective;
            best = restart;
            best_iterations = result.iterations;
            best_converged = result.converged;
            status = moe_model_copy_parameters(model, trial);
        }
    }
    moe_model_free(trial);
    moe_model_free(start);
    moe_context_add_stage_seconds(context, MOE_STAGE_GATE, moe_now_seconds() - started);
    if (status == MOE_OK) {
        moe_context_add_stages(context, MOE_STAGE_GATE);
        if (settings->refine) {
            started = moe_now_seconds();
            status = refine(context, model, best, best_iterations);
            moe_context_add_stage_seconds(context, MOE_STAGE_JOINT, moe_now_seconds() - started);
            if (status == MOE_OK)
                moe_context_add_stages(context, MOE_STAGE_JOINT);
        }
    }
    if (status == MOE_OK)
        status = moe_context_set_result(context, best, best_converged);
    tensor_result_free(&tensor);
    return status;
}

const moe_estimator_ops moe_estimator_cqt = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "cqt",
    .create = cqt_create,
    .destroy = cqt_destroy,
    .fit = cqt_fit,
    .partial_fit = NULL,
    .options = MOE_OPTION_BIT(MOE_OPT_MAX_ITER) | MOE_OPTION_BIT(MOE_OPT_TOLERANCE) |
               MOE_OPTION_BIT(MOE_OPT_N_INIT) | MOE_OPTION_BIT(MOE_OPT_SEED) |
               MOE_OPTION_BIT(MOE_OPT_GATE_L2) | MOE_OPTION_BIT(MOE_OPT_EXPERT_RIDGE) |
               MOE_OPTION_BIT(MOE_OPT_VARIANCE_FLOOR) |
               MOE_OPTION_BIT(MOE_OPT_GATE_MAX_NEWTON) |
               MOE_OPTION_BIT(MOE_OPT_GATE_TOLERANCE) |
               MOE_OPTION_BIT(MOE_OPT_MIN_EXPERT_WEIGHT) | MOE_OPTION_BIT(MOE_OPT_THREADS) |
               MOE_OPTION_BIT(MOE_OPT_GATE_STEP),
    .flags = 0,
    .reset = NULL,
    .aggregate = NULL,
    .save_state = NULL,
    .load_state = NULL,
    .option_table = cqt_option_table,
    .option_count = sizeof cqt_option_table / sizeof cqt_option_table[0],
    .set_option = cqt_set_option,
    .get_option = cqt_get_option,
};
