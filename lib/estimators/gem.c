/*
 * Gradient EM (Algorithm 1 of the EM-versus-gradient paper, docs/REPRODUCTIONS.md): per
 * iteration, one gradient step on the EM surrogate for each block, the gate with gate_step
 * and the experts with step, at the posterior of the current parameters. By the Fisher
 * identity that gradient is the gradient of the mean negative log-likelihood, so with equal
 * steps gem is gd iterate for iterate; the two differ through the per-block steps, each of
 * which can be as large as its own block's curvature allows.
 *
 * Written against moe/estimator.h alone.
 */
#include "moe/kernels.h"

#include <math.h>

typedef struct gem_state {
    moe_gradient_t *gradient;
    double step, gate_step; /* as requested; 0: the safe step */
} gem_state;

static moe_status gem_iterate(void *opaque, moe_fit_context *context, moe_model_t *model,
                              double *resp, double objective, size_t restart, size_t iteration)
{
    (void)objective;
    (void)restart;
    (void)iteration;
    gem_state *state = opaque;
    moe_status status = moe_gradient_compute(context, state->gradient, model, NULL, resp);
    if (status != MOE_OK)
        return status;
    moe_context_count(context, MOE_COUNTER_GRADIENT_EVALUATIONS, 1);
    double safe_expert = 0.0, safe_gate = 0.0;
    if ((state->step == 0.0 || state->gate_step == 0.0) &&
        (status = moe_context_safe_steps(context, model, &safe_expert, &safe_gate)) != MOE_OK)
        return status;
    double gate_step = state->gate_step > 0.0 ? state->gate_step : safe_gate;
    double expert_step = state->step > 0.0 ? state->step : safe_expert;
    moe_context_set_steps(context, expert_step, gate_step);
    size_t floored = 0;
    status = moe_gradient_step(context, state->gradient, model, model, gate_step, expert_step,
                               1.0, NULL, &floored);
    if (status == MOE_OK)
        moe_context_count(context, MOE_COUNTER_FLOORED_VARIANCES, floored);
    return status;
}

static moe_status gem_create(void **state)
{
    *state = NULL;
    return MOE_OK;
}

static void gem_destroy(void *state)
{
    (void)state;
}

static moe_status gem_fit(void *unused, moe_fit_context *context)
{
    (void)unused;
    gem_state state = {NULL, 0.0, 0.0};
    moe_status status = moe_context_get_double(context, MOE_OPT_STEP, &state.step);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_GATE_STEP, &state.gate_step);
    if (status == MOE_OK)
        status = moe_gradient_create(context, &state.gradient);
    moe_iteration_ops ops = {MOE_ITERATION_OPS_VERSION, gem_iterate, NULL};
    if (status == MOE_OK)
        status = moe_context_iterate(context, &ops, &state);
    moe_gradient_free(state.gradient);
    return status;
}

/* A copy compiled outside libmoe names its own table (tests/outside/). */
#ifndef MOE_GEM_TABLE
#define MOE_GEM_TABLE moe_estimator_gem
#define MOE_GEM_NAME "gem"
#endif

const moe_estimator_ops MOE_GEM_TABLE = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = MOE_GEM_NAME,
    .create = gem_create,
    .destroy = gem_destroy,
    .set_option = NULL,
    .fit = gem_fit,
    .partial_fit = NULL,
    .options = MOE_ITERATION_OPTIONS | MOE_OPTION_BIT(MOE_OPT_STEP) |
               MOE_OPTION_BIT(MOE_OPT_GATE_STEP),
    .flags = 0,
    .reset = NULL,
    .aggregate = NULL,
    .save_state = NULL,
    .load_state = NULL,
};
