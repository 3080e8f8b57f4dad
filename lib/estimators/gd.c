/*
 * Gradient descent on the mean negative log-likelihood plus penalties (Algorithm 2 of the
 * EM-versus-gradient paper, docs/REPRODUCTIONS.md), one step size for every block. The
 * gradient comes from the posterior at the current parameters (Fisher identity), so it
 * shares every kernel with gem.
 *
 * Full batch by default. With batch_size > 0 an iteration is one pass over a seeded random
 * permutation of the rows in mini-batches, each taking a step on its own mean objective: the
 * stochastic baseline. With line_search = armijo the step is halved until the (batch)
 * objective passes the library's acceptance rule (moe_step_accepted).
 *
 * optimizer turns each gradient g into the direction of the step (the paper's stochastic
 * baselines): sgd g; momentum v = beta1 v + g; adam the bias-corrected moments m / (sqrt(v)
 * + eps), m and v decayed by beta1 and beta2; adamw the same plus weight_decay times the
 * coefficients (decoupled, not the log-variances); rmsprop g / (sqrt(v) + eps). The moments
 * start at zero with every restart and move with every (mini-batch) step. The log-variance
 * part of a direction is clamped to [-1, 1] like the plain gradient's.
 *
 * Written against moe/estimator.h alone.
 */
#include "moe/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HALVINGS 40
/* Stream offset of the shuffling generator, distinct from the starting points' streams. */
#define SHUFFLE_STREAM (UINT64_C(1) << 40)

typedef struct gd_state {
    moe_gradient_t *gradient;
    moe_model_t *saved; /* parameters before a step, for backtracking */
    double *parameters; /* scratch for copying parameters */
    size_t parameters_size;
    double step;        /* as requested; 0: the safe step */
    int line_search, update_experts;
    size_t batch_size;
    /* the optimiser */
    int optimizer;
    double beta1, beta2, eps, weight_decay;
    size_t length;   /* of the gradient's values */
    double *values;  /* the gradient, then the direction */
    double *first, *second; /* moments */
    double *coefficients;   /* the parameters in the gradient's layout (adamw) */
    uint64_t steps;  /* since the restart began */
    uint64_t seed;
    moe_rows all;
    /* mini-batches */
    size_t *order;
    double *batch_X, *batch_y, *batch_weights, *batch_resp;
    moe_rng rng;
} gd_state;

/* The adaptive optimisers' conventional learning rate when step is 0: their direction is
   scale-free, so the safe step of the gradient means nothing for it. */
#define ADAPTIVE_DEFAULT_STEP 1e-3

static moe_status step_size(gd_state *state, moe_fit_context *context, const moe_model_t *model,
                            double *step)
{
    if (state->step > 0.0) {
        *step = state->step;
        return MOE_OK;
    }
    if (state->optimizer != MOE_OPTIMIZER_SGD && state->optimizer != MOE_OPTIMIZER_MOMENTUM) {
        *step = ADAPTIVE_DEFAULT_STEP;
        return MOE_OK;
    }
    double expert = 0.0, gate = 0.0;
    moe_status status = moe_context_safe_steps(context, model, &expert, &gate);
    if (status != MOE_OK)
        return status;
    if (!state->update_experts)
        *step = gate;
    else
        *step = moe_model_n_experts(model) > 1 && gate < expert ? gate : expert;
    return MOE_OK;
}

/* Penalised objective of `rows` at the model, mean scale, minimised; +inf where undefined. */
static moe_status objective_on(gd_state *state, moe_fit_context *context,
                               const moe_model_t *model, const moe_rows *rows,
                               moe_estep_t *estep, double *objective)
{
    (void)state;
    moe_status status = moe_estep_run(estep, model, rows, 0, NULL);
    if (status == MOE_ERR_NUMERICAL) {
        *objective = INFINITY;
        return MOE_OK;
    }
    moe_estep_result result = MOE_ESTEP_RESULT_INIT;
    double penalty = 0.0;
    if (status == MOE_OK)
        status = moe_estep_get_result(estep, &result);
    if (status == MOE_OK)
        status = moe_context_penalty(context, model, &penalty);
    if (status == MOE_OK)
        *objective = isfinite(result.loglik) ? -result.loglik / result.total_weight + penalty
                                             : INFINITY;
    return status;
}

/* The model's coefficients in the gradient's layout: the gate's free rows, then the
   experts (their log-variances are not decayed: zeros). */
static moe_status coefficients_of(gd_state *state, const moe_model_t *model)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    size_t gate = (K - 1) * p;
    memset(state->coefficients, 0, state->length * sizeof(double));
    moe_status status = moe_model_get_gate(model, state->parameters, state->parameters_size);
    if (status == MOE_OK)
        memcpy(state->coefficients, state->parameters, gate * sizeof(double));
    if (status == MOE_OK && state->update_experts) {
        size_t experts = K * moe_model_expert_rows(model) * p;
        status = moe_model_get_experts(model, state->parameters, state->parameters_size);
        if (status == MOE_OK && gate + experts <= state->length)
            memcpy(state->coefficients + gate, state->parameters, experts * sizeof(double));
    }
    return status;
}

/* The optimiser's direction in place of the gradient. */
static moe_status optimise(gd_state *state, const moe_model_t *model)
{
    if (state->optimizer == MOE_OPTIMIZER_SGD)
        return MOE_OK;
    size_t length = 0;
    moe_status status = moe_gradient_values(state->gradient, state->values, state->length,
                                            &length);
    if (status != MOE_OK)
        return status;
    state->steps += 1;
    double *g = state->values, *m = state->first, *v = state->second;
    double b1 = state->beta1, b2 = state->beta2;
    double correction1 = 1.0 - pow(b1, (double)state->steps);
    double correction2 = 1.0 - pow(b2, (double)state->steps);
    if (state->optimizer == MOE_OPTIMIZER_ADAMW && (status = coefficients_of(state, model)) != MOE_OK)
        return status;
    for (size_t i = 0; i < length; ++i) {
        switch (state->optimizer) {
        case MOE_OPTIMIZER_MOMENTUM:
            m[i] = b1 * m[i] + g[i];
            g[i] = m[i];
            break;
        case MOE_OPTIMIZER_RMSPROP:
            v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
            g[i] = g[i] / (sqrt(v[i]) + state->eps);
            break;
        default: /* adam, adamw */
            m[i] = b1 * m[i] + (1.0 - b1) * g[i];
            v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
            g[i] = (m[i] / correction1) / (sqrt(v[i] / correction2) + state->eps);
            if (state->optimizer == MOE_OPTIMIZER_ADAMW)
                g[i] += state->weight_decay * state->coefficients[i];
            break;
        }
    }
    return moe_gradient_set_values(state->gradient, g, length);
}

/* One step on `rows`, whose posterior at the model is resp and objective (mean scale,
   minimised) is `objective`. */
static moe_status step_on(gd_state *state, moe_fit_context *context, moe_model_t *model,
                          const moe_rows *rows, const double *resp, moe_estep_t *estep,
                          double objective)
{
    moe_status status = moe_gradient_compute(context, state->gradient, model, rows, resp);
    double step = 0.0;
    if (status == MOE_OK)
        status = optimise(state, model);
    if (status == MOE_OK)
        status = step_size(state, context, model, &step);
    if (status != MOE_OK)
        return status;
    moe_context_set_steps(context, step, NAN);
    size_t floored = 0;
    if (!state->line_search) {
        status = moe_gradient_step(context, state->gradient, model, model, step, step, 1.0,
                                   NULL, &floored);
        if (status == MOE_OK)
            moe_context_count(context, MOE_COUNTER_FLOORED_VARIANCES, floored);
        return status;
    }
    if ((status = moe_model_copy_parameters(state->saved, model)) != MOE_OK)
        return status;
    double scale = 1.0;
    for (int halving = 0; halving < HALVINGS; ++halving, scale *= 0.5) {
        double decrease = 0.0, trial = 0.0;
        status = moe_gradient_step(context, state->gradient, model, state->saved, step, step,
                                   scale, &decrease, &floored);
        if (status == MOE_OK)
            status = objective_on(state, context, model, rows, estep, &trial);
        if (status != MOE_OK)
            return status;
        /* objective evaluations of the line search */
        moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, 1);
        if (moe_step_accepted(objective, trial, decrease, 1.0)) {
            moe_context_count(context, MOE_COUNTER_FLOORED_VARIANCES, floored);
            moe_context_set_steps(context, scale * step, NAN);
            return MOE_OK;
        }
    }
    moe_context_count(context, MOE_COUNTER_LINE_SEARCH_FAILURES, 1);
    return moe_model_copy_parameters(model, state->saved);
}

/* Rows order[from .. from + count) as contiguous rows. */
static moe_rows gather(gd_state *state, size_t from, size_t count, size_t d)
{
    const moe_rows *all = &state->all;
    moe_rows batch = {count, d > 0 ? state->batch_X : NULL, d, state->batch_y,
                      all->weights != NULL ? state->batch_weights : NULL};
    for (size_t i = 0; i < count; ++i) {
        size_t row = state->order[from + i];
        if (d > 0)
            memcpy(state->batch_X + i * d, all->X + row * all->ldx, d * sizeof(double));
        state->batch_y[i] = all->y[row];
        if (all->weights != NULL)
            state->batch_weights[i] = all->weights[row];
    }
    return batch;
}

/* The state's E-step workspace for objectives and batches: one per fit. */
typedef struct gd_run {
    gd_state *state;
    moe_estep_t *estep;
} gd_run;

static moe_status mini_batch_epoch(gd_run *run, moe_fit_context *context, moe_model_t *model,
                                   size_t restart, size_t iteration)
{
    gd_state *state = run->state;
    size_t n = state->all.n, d = moe_model_n_features(model);
    size_t size = state->batch_size < n ? state->batch_size : n;
    if (iteration == 1) {
        moe_rng_seed(&state->rng, state->seed, SHUFFLE_STREAM + restart);
        for (size_t i = 0; i < n; ++i)
            state->order[i] = i;
    }
    for (size_t i = n; i > 1; --i) { /* Fisher-Yates */
        size_t j = moe_rng_below(&state->rng, i), held = state->order[i - 1];
        state->order[i - 1] = state->order[j];
        state->order[j] = held;
    }
    for (size_t from = 0; from < n; from += size) {
        size_t count = n - from < size ? n - from : size;
        moe_rows batch = gather(state, from, count, d);
        double total = 0.0;
        moe_status status = moe_context_total_weight(context, &batch, &total);
        if (status != MOE_OK)
            return status;
        if (!(total > 0.0))
            continue;
        status = moe_estep_run(run->estep, model, &batch, 0, state->batch_resp);
        moe_estep_result result = MOE_ESTEP_RESULT_INIT;
        double penalty = 0.0;
        if (status == MOE_OK)
            status = moe_estep_get_result(run->estep, &result);
        if (status == MOE_OK)
            status = moe_context_penalty(context, model, &penalty);
        if (status == MOE_OK)
            status = step_on(state, context, model, &batch, state->batch_resp, run->estep,
                             -result.loglik / total + penalty);
        if (status != MOE_OK)
            return status;
    }
    moe_context_count(context, MOE_COUNTER_GRADIENT_EVALUATIONS, 1);
    return MOE_OK;
}

static moe_status gd_iterate(void *opaque, moe_fit_context *context, moe_model_t *model,
                             double *resp, double objective, size_t restart, size_t iteration)
{
    gd_run *run = opaque;
    gd_state *state = run->state;
    if (iteration == 1 && state->optimizer != MOE_OPTIMIZER_SGD) {
        memset(state->first, 0, state->length * sizeof(double));
        memset(state->second, 0, state->length * sizeof(double));
        state->steps = 0;
    }
    if (state->batch_size > 0 && state->batch_size < state->all.n)
        return mini_batch_epoch(run, context, model, restart, iteration);
    moe_context_count(context, MOE_COUNTER_GRADIENT_EVALUATIONS, 1);
    double total = 0.0;
    moe_status status = moe_context_total_weight(context, NULL, &total);
    if (status != MOE_OK)
        return status;
    /* objective is the loop's, sum scale and maximised: this one is minimised per unit weight */
    return step_on(state, context, model, NULL, resp, run->estep, -objective / total);
}

static void state_free(gd_state *state)
{
    moe_gradient_free(state->gradient);
    moe_model_free(state->saved);
    free(state->parameters);
    free(state->order);
    free(state->batch_X);
    free(state->batch_y);
    free(state->batch_weights);
    free(state->batch_resp);
    free(state->values);
    free(state->first);
    free(state->second);
    free(state->coefficients);
}

static moe_status state_allocate(gd_state *state, moe_fit_context *context)
{
    memset(state, 0, sizeof *state);
    long long line_search = 0, batch = 0, update = 0, seed = 0;
    moe_status status = moe_context_get_double(context, MOE_OPT_STEP, &state->step);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_LINE_SEARCH, &line_search);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_BATCH_SIZE, &batch);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_UPDATE_EXPERTS, &update);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_SEED, &seed);
    if (status == MOE_OK)
        status = moe_context_rows(context, &state->all);
    if (status != MOE_OK)
        return status;
    state->line_search = line_search != 0;
    state->batch_size = (size_t)batch;
    state->update_experts = update != 0;
    state->seed = (uint64_t)seed;
    const moe_model_t *model = moe_context_model(context);
    size_t K = moe_model_n_experts(model);
    size_t size = K * moe_model_expert_rows(model) * moe_model_n_inputs(model);
    state->parameters_size = size > K ? size : K;
    state->parameters = malloc(state->parameters_size * sizeof(double));
    if (state->parameters == NULL)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate gd's workspace");
    if ((status = moe_gradient_create(context, &state->gradient)) != MOE_OK ||
        (status = moe_model_clone(&state->saved, model)) != MOE_OK)
        return status;
    long long optimizer = 0;
    if ((status = moe_context_get_int(context, MOE_OPT_OPTIMIZER, &optimizer)) != MOE_OK ||
        (status = moe_context_get_double(context, MOE_OPT_BETA1, &state->beta1)) != MOE_OK ||
        (status = moe_context_get_double(context, MOE_OPT_BETA2, &state->beta2)) != MOE_OK ||
        (status = moe_context_get_double(context, MOE_OPT_OPTIMIZER_EPS, &state->eps)) != MOE_OK ||
        (status = moe_context_get_double(context, MOE_OPT_WEIGHT_DECAY, &state->weight_decay)) !=
            MOE_OK)
        return status;
    state->optimizer = (int)optimizer;
    if (state->optimizer != MOE_OPTIMIZER_SGD) {
        if (state->line_search)
            return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                    "line_search = armijo backtracks along the gradient; it does "
                                    "not combine with an optimizer other than sgd");
        if ((status = moe_gradient_values(state->gradient, NULL, 0, &state->length)) != MOE_OK)
            return status;
        size_t length = state->length > 0 ? state->length : 1;
        state->values = calloc(length, sizeof(double));
        state->first = calloc(length, sizeof(double));
        state->second = calloc(length, sizeof(double));
        state->coefficients = calloc(length, sizeof(double));
        if (!state->values || !state->first || !state->second || !state->coefficients)
            return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                    "cannot allocate the optimiser's moments");
    }
    size_t n = state->all.n;
    if (state->batch_size == 0 || state->batch_size >= n)
        return MOE_OK;
    size_t rows = state->batch_size, d = moe_model_n_features(model);
    state->order = malloc(n * sizeof(size_t));
    state->batch_X = malloc(rows * (d > 0 ? d : 1) * sizeof(double));
    state->batch_y = malloc(rows * sizeof(double));
    state->batch_weights = malloc(rows * sizeof(double));
    state->batch_resp = malloc(rows * K * sizeof(double));
    if (!state->order || !state->batch_X || !state->batch_y || !state->batch_weights ||
        !state->batch_resp)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                "cannot allocate the mini-batches");
    return MOE_OK;
}

static moe_status gd_create(void **state)
{
    *state = NULL;
    return MOE_OK;
}

static void gd_destroy(void *state)
{
    (void)state;
}

static moe_status gd_fit(void *unused, moe_fit_context *context)
{
    (void)unused;
    gd_state state;
    gd_run run = {&state, NULL};
    moe_status status = state_allocate(&state, context);
    if (status == MOE_OK)
        status = moe_estep_create(context, 0, &run.estep);
    moe_iteration_ops ops = {MOE_ITERATION_OPS_VERSION, gd_iterate, NULL};
    if (status == MOE_OK)
        status = moe_context_iterate(context, &ops, &run);
    moe_estep_free(run.estep);
    state_free(&state);
    return status;
}

/* A copy compiled outside libmoe names its own table (tests/outside/). */
#ifndef MOE_GD_TABLE
#define MOE_GD_TABLE moe_estimator_gd
#define MOE_GD_NAME "gd"
#endif

const moe_estimator_ops MOE_GD_TABLE = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = MOE_GD_NAME,
    .create = gd_create,
    .destroy = gd_destroy,
    .set_option = NULL,
    .fit = gd_fit,
    .partial_fit = NULL,
    .options = MOE_ITERATION_OPTIONS | MOE_OPTION_BIT(MOE_OPT_STEP) |
               MOE_OPTION_BIT(MOE_OPT_BATCH_SIZE) | MOE_OPTION_BIT(MOE_OPT_LINE_SEARCH) |
               MOE_OPTION_BIT(MOE_OPT_OPTIMIZER) | MOE_OPTION_BIT(MOE_OPT_BETA1) |
               MOE_OPTION_BIT(MOE_OPT_BETA2) | MOE_OPTION_BIT(MOE_OPT_OPTIMIZER_EPS) |
               MOE_OPTION_BIT(MOE_OPT_WEIGHT_DECAY),
    .flags = 0,
    .reset = NULL,
    .aggregate = NULL,
    .save_state = NULL,
    .load_state = NULL,
};
