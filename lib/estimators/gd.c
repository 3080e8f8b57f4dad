/*
 * Gradient descent on the mean negative log-likelihood plus penalties (the
 * seed-em paper's Algorithm 2), one step size for every block. The gradient
 * comes from the posterior at the current parameters (Fisher identity), so it
 * shares every kernel with gem.
 *
 * Full batch by default. With batch_size > 0 an iteration is one pass over a
 * seeded random permutation of the rows in mini-batches, each taking a step
 * on its own mean objective: the stochastic baseline. With line_search =
 * armijo the step is halved until the (batch) objective decreases by at least
 * 1e-4 of the first-order prediction.
 */
#include "common/alloc.h"
#include "common/rng.h"
#include "estimators/driver.h"
#include "estimators/gradient.h"
#include "model/posterior.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ARMIJO_FRACTION 1e-4
#define ARMIJO_HALVINGS 40
/* Stream offset of the shuffling generator, distinct from the initialisation streams. */
#define SHUFFLE_STREAM (UINT64_C(1) << 40)

typedef struct gd_state {
    moe_gradient gradient;
    struct moe_model *saved; /* parameters before a step, for backtracking */
    /* mini-batches */
    size_t *order;
    double *batch_X, *batch_y, *batch_weights, *batch_resp;
    moe_rng rng;
} gd_state;

static double step_size(const struct moe_model *model, const moe_fit_settings *settings)
{
    if (settings->step > 0.0)
        return settings->step;
    if (!settings->update_experts)
        return moe_safe_gate_step(model, settings);
    double step = moe_safe_expert_step(model, settings);
    if (model->n_experts > 1) {
        double gate = moe_safe_gate_step(model, settings);
        step = gate < step ? gate : step;
    }
    return step;
}

/* Penalised objective of `data` on the sum scale at the model; -inf where undefined. */
static moe_status objective_on(const struct moe_model *model, const moe_data *data,
                               const moe_fit_settings *settings, double total_weight,
                               double *objective, char *message)
{
    moe_posterior_result posterior;
    moe_status status =
        moe_posterior_pass(model, data, NULL, settings->threads, &posterior, message);
    if (status == MOE_ERR_NUMERICAL || (status == MOE_OK && !isfinite(posterior.loglik))) {
        *objective = -INFINITY;
        return MOE_OK;
    }
    if (status != MOE_OK)
        return status;
    *objective = posterior.loglik - total_weight * moe_fit_penalty(model, settings);
    return MOE_OK;
}

/* One step on `data` whose posterior at the model is resp and objective (sum scale) is
   `objective`. */
static moe_status step_on(gd_state *state, struct moe_fit_context *context,
                          const moe_fit_settings *settings, const moe_data *data,
                          const double *resp, double total_weight, double objective)
{
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    moe_status status = moe_gradient_compute(model, data, resp, settings, total_weight,
                                             &state->gradient, fitter->message);
    if (status != MOE_OK)
        return status;
    double step = step_size(model, settings);
    fitter->report.step = step;
    double floor = settings->experts.variance_floor;
    if (!settings->line_search) {
        moe_gradient_apply(model, model, &state->gradient, step, step, 1.0, floor,
                           &fitter->report.floored_variances);
        return MOE_OK;
    }
    moe_model_copy_parameters(state->saved, model);
    double scale = 1.0;
    for (int halving = 0; halving < ARMIJO_HALVINGS; ++halving, scale *= 0.5) {
        size_t floored = 0;
        double decrease = moe_gradient_apply(model, state->saved, &state->gradient, step, step,
                                             scale, floor, &floored);
        double trial;
        status = objective_on(model, data, settings, total_weight, &trial, fitter->message);
        if (status != MOE_OK)
            return status;
        fitter->report.inner_iterations++; /* objective evaluations of the line search */
        if (trial >= objective + ARMIJO_FRACTION * total_weight * decrease) {
            fitter->report.floored_variances += floored;
            fitter->report.step = scale * step;
            return MOE_OK;
        }
    }
    moe_model_copy_parameters(model, state->saved);
    fitter->report.line_search_failures++;
    return MOE_OK;
}

/* Rows order[from .. from + rows) of the data as a contiguous data set. */
static moe_data gather(gd_state *state, const moe_data *data, size_t from, size_t rows)
{
    size_t d = data->n_features;
    moe_data batch = {rows, d, d, data->intercept, state->batch_X, state->batch_y,
                      data->weights != NULL ? state->batch_weights : NULL};
    for (size_t i = 0; i < rows; ++i) {
        size_t row = state->order[from + i];
        if (d > 0)
            memcpy(state->batch_X + i * d, data->X + row * data->ldx, d * sizeof(double));
        state->batch_y[i] = data->y[row];
        if (data->weights != NULL)
            state->batch_weights[i] = data->weights[row];
    }
    return batch;
}

static moe_status mini_batch_epoch(gd_state *state, struct moe_fit_context *context,
                                   const moe_fit_settings *settings, size_t restart,
                                   size_t iteration)
{
    const moe_data *data = &context->data;
    char *message = context->fitter->message;
    size_t n = data->n, size = settings->batch_size < n ? settings->batch_size : n;
    if (iteration == 1) {
        moe_rng_seed(&state->rng, settings->seed, SHUFFLE_STREAM + restart);
        for (size_t i = 0; i < n; ++i)
            state->order[i] = i;
    }
    for (size_t i = n; i > 1; --i) { /* Fisher-Yates */
        size_t j = moe_rng_below(&state->rng, i), held = state->order[i - 1];
        state->order[i - 1] = state->order[j];
        state->order[j] = held;
    }
    for (size_t from = 0; from < n; from += size) {
        size_t rows = n - from < size ? n - from : size;
        moe_data batch = gather(state, data, from, rows);
        double total = moe_data_total_weight(&batch);
        if (!(total > 0.0))
            continue;
        moe_posterior_result posterior;
        moe_status status =
            moe_posterior_pass(context->model, &batch, state->batch_resp, settings->threads,
                               &posterior, message);
        if (status != MOE_OK)
            return status;
        double objective = posterior.loglik - total * moe_fit_penalty(context->model, settings);
        status = step_on(state, context, settings, &batch, state->batch_resp, total, objective);
        if (status != MOE_OK)
            return status;
    }
    context->fitter->report.gradient_evaluations++;
    return MOE_OK;
}

static moe_status gd_iterate(void *opaque, struct moe_fit_context *context,
                             const moe_fit_settings *settings, double *resp, double objective,
                             size_t restart, size_t iteration)
{
    gd_state *state = opaque;
    if (settings->batch_size > 0 && settings->batch_size < context->data.n)
        return mini_batch_epoch(state, context, settings, restart, iteration);
    context->fitter->report.gradient_evaluations++;
    return step_on(state, context, settings, &context->data, resp, settings->total_weight,
                   objective);
}

static void state_free(gd_state *state)
{
    moe_gradient_free(&state->gradient);
    moe_model_free(state->saved);
    free(state->order);
    free(state->batch_X);
    free(state->batch_y);
    free(state->batch_weights);
    free(state->batch_resp);
}

static moe_status state_allocate(gd_state *state, moe_fit_context *context)
{
    struct moe_fitter *fitter = context->fitter;
    const moe_data *data = &context->data;
    memset(state, 0, sizeof *state);
    int variances = fitter->options.integer[MOE_OPT_UPDATE_VARIANCE] != 0;
    int experts = fitter->options.integer[MOE_OPT_UPDATE_EXPERTS] != 0;
    moe_status status = moe_gradient_allocate(&state->gradient, context->model, experts,
                                              variances, fitter->message);
    if (status != MOE_OK)
        return status;
    status = moe_model_clone(&state->saved, context->model);
    if (status != MOE_OK)
        return moe_fail_propagate(fitter->message, status);
    size_t batch = (size_t)fitter->options.integer[MOE_OPT_BATCH_SIZE];
    if (batch == 0 || batch >= data->n)
        return MOE_OK;
    size_t d = data->n_features > 0 ? data->n_features : 1;
    state->order = moe_alloc_array(data->n, 1, sizeof(size_t));
    state->batch_X = moe_alloc_array(batch, d, sizeof(double));
    state->batch_y = moe_alloc_array(batch, 1, sizeof(double));
    state->batch_weights = moe_alloc_array(batch, 1, sizeof(double));
    state->batch_resp = moe_alloc_array(batch, context->model->n_experts, sizeof(double));
    if (!state->order || !state->batch_X || !state->batch_y || !state->batch_weights ||
        !state->batch_resp)
        return moe_fail(fitter->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate mini-batches of %zu rows", batch);
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
    moe_status status = state_allocate(&state, context);
    if (status == MOE_OK) {
        /* An explicit step needs no curvature bound. */
        int needs_steps = context->fitter->options.real[MOE_OPT_STEP] == 0.0;
        moe_iterative_method method = {needs_steps, gd_iterate, NULL, &state};
        status = moe_iterative_fit(context, &method);
    }
    state_free(&state);
    return status;
}

const moe_estimator_ops moe_estimator_gd = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "gd",
    .create = gd_create,
    .destroy = gd_destroy,
    .set_option = NULL,
    .fit = gd_fit,
    .partial_fit = NULL,
    .options = (MOE_ITERATION_OPTIONS | MOE_OPTION_BIT(MOE_OPT_STEP) |
                MOE_OPTION_BIT(MOE_OPT_BATCH_SIZE) | MOE_OPTION_BIT(MOE_OPT_LINE_SEARCH)),
    .flags = 0,
    .reset = NULL,
    .aggregate = NULL,
    .save_state = NULL,
    .load_state = NULL,
};
