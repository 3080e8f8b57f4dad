/*
 * Gradient EM (the seed-em paper's Algorithm 1): per iteration, one gradient
 * step on the EM surrogate for each block, the gate with gate_step and the
 * experts with step, at the posterior of the current parameters. By the
 * Fisher identity that gradient is the gradient of the mean negative
 * log-likelihood, so with equal steps gem is gd iterate for iterate; the two
 * differ through the per-block steps, each of which can be as large as its
 * own block's curvature allows.
 */
#include "estimators/driver.h"
#include "estimators/gradient.h"

typedef struct gem_state {
    moe_gradient gradient;
} gem_state;

static moe_status gem_iterate(void *opaque, struct moe_fit_context *context,
                              const moe_fit_settings *settings, double *resp, double objective,
                              size_t restart, size_t iteration)
{
    (void)objective;
    (void)restart;
    (void)iteration;
    gem_state *state = opaque;
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    moe_status status = moe_gradient_compute(model, &context->data, resp, settings,
                                             settings->total_weight, &state->gradient,
                                             fitter->message);
    if (status != MOE_OK)
        return status;
    fitter->report.gradient_evaluations++;
    double gate_step = moe_gate_step(model, settings);
    double expert_step = moe_expert_step(model, settings);
    fitter->report.gate_step = gate_step;
    fitter->report.step = expert_step;
    moe_gradient_apply(model, model, &state->gradient, gate_step, expert_step, 1.0,
                       settings->experts.variance_floor, &fitter->report.floored_variances);
    return MOE_OK;
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
    gem_state state;
    const long long *integer = context->fitter->options.integer;
    int variances = integer[MOE_OPT_UPDATE_VARIANCE] != 0;
    moe_status status = moe_gradient_allocate(&state.gradient, context->model,
                                              integer[MOE_OPT_UPDATE_EXPERTS] != 0, variances,
                                              context->fitter->message);
    if (status != MOE_OK)
        return status;
    const double *real = context->fitter->options.real;
    int needs_steps = real[MOE_OPT_STEP] == 0.0 || real[MOE_OPT_GATE_STEP] == 0.0;
    moe_iterative_method method = {needs_steps, gem_iterate, NULL, &state};
    status = moe_iterative_fit(context, &method);
    moe_gradient_free(&state.gradient);
    return status;
}

const moe_estimator_ops moe_estimator_gem = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "gem",
    .create = gem_create,
    .destroy = gem_destroy,
    .set_option = NULL,
    .fit = gem_fit,
    .partial_fit = NULL,
    .options = (MOE_ITERATION_OPTIONS | MOE_OPTION_BIT(MOE_OPT_STEP) |
                MOE_OPTION_BIT(MOE_OPT_GATE_STEP)),
    .flags = 0,
    .reset = NULL,
    .aggregate = NULL,
    .save_state = NULL,
    .load_state = NULL,
};
