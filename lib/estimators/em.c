/*
 * EM for softmax-gated mixtures of experts.
 *
 * E-step: log-space responsibilities and the log-likelihood (model/posterior.c,
 * run by the shared driver after every iteration).
 * M-step: each expert's exact maximiser through its family (weighted least
 * squares for Gaussian experts, Newton with step halving for classification
 * experts), then the gate by Newton with step halving (model/gate.c). Both
 * halves never decrease the surrogate, so the (penalised) log-likelihood never
 * decreases; any iteration that does is counted in the report rather than
 * hidden.
 *
 * With inner_steps > 0 the gate and classification experts take that many
 * gradient steps on the surrogate instead (the paper's inexact EM); Gaussian
 * experts keep their closed-form update, which is cheaper than one gradient
 * step's worth of bookkeeping and exact.
 */
#include "estimators/driver.h"
#include "estimators/gradient.h"

static moe_status em_iterate(void *state, struct moe_fit_context *context,
                             const moe_fit_settings *settings, double *resp, double objective,
                             size_t restart, size_t iteration)
{
    (void)state;
    (void)objective;
    (void)restart;
    (void)iteration;
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    moe_expert_mstep_options options = settings->experts;
    options.inner_steps = settings->inner_steps;
    if (settings->inner_steps > 0) {
        options.step = settings->step > 0.0 ? settings->step : moe_safe_expert_step(model, settings);
        fitter->report.step = options.step;
        fitter->report.gradient_evaluations += settings->inner_steps;
    }
    moe_expert_mstep_report experts = MOE_EXPERT_MSTEP_REPORT_INIT;
    moe_status status = model->family_ops->m_step(model, &context->data, resp, &options,
                                                  &experts, fitter->message);
    moe_report_expert_mstep(&fitter->report, &experts);
    if (status != MOE_OK)
        return status;
    if (settings->inner_steps > 0) {
        double step =
            settings->gate_step > 0.0 ? settings->gate_step : moe_safe_gate_step(model, settings);
        fitter->report.gate_step = step;
        fitter->report.inner_iterations += settings->inner_steps;
        return moe_gate_gradient_steps(model, &context->data, resp, settings->gate.l2,
                                       settings->inner_steps, step, fitter->message);
    }
    moe_gate_report gate = MOE_GATE_REPORT_INIT;
    status = moe_gate_newton(model, &context->data, resp, &settings->gate, &gate,
                             fitter->message);
    moe_report_gate(&fitter->report, &gate);
    return status;
}

static moe_status em_create(void **state)
{
    *state = NULL;
    return MOE_OK;
}

static void em_destroy(void *state)
{
    (void)state;
}

static moe_status em_fit(void *state, moe_fit_context *context)
{
    const moe_option_values *options = &context->fitter->options;
    int needs_steps = options->integer[MOE_OPT_INNER_STEPS] > 0 &&
                      (options->real[MOE_OPT_STEP] == 0.0 || options->real[MOE_OPT_GATE_STEP] == 0.0);
    moe_iterative_method method = {needs_steps, em_iterate, state};
    return moe_iterative_fit(context, &method);
}

const moe_estimator_ops moe_estimator_em = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "em",
    .create = em_create,
    .destroy = em_destroy,
    .set_option = NULL,
    .fit = em_fit,
    .partial_fit = NULL,
};
