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
#include "common/alloc.h"
#include "estimators/driver.h"
#include "estimators/gradient.h"

#include <stdlib.h>

/* Per fit: Boehning's curvature bound of the gate, when gate_solver is "bound". */
typedef struct em_state {
    int bound;
    double *curvature; /* p x p: E_w[x x'] / 2 + gate_l2 on the non-intercept diagonal */
    double *work;      /* p x (p + 1) */
} em_state;

static moe_status prepare_bound(em_state *state, struct moe_fit_context *context,
                                const moe_fit_settings *settings)
{
    const struct moe_model *model = context->model;
    size_t p = model->n_inputs;
    state->curvature = moe_alloc_array(p, p, sizeof(double));
    state->work = moe_alloc_array(p, p + 1, sizeof(double));
    if (state->curvature == NULL || state->work == NULL)
        return moe_fail(context->fitter->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate the gate's curvature bound");
    moe_status status = moe_design_gram(&context->data, settings->total_weight,
                                        state->curvature, context->fitter->message);
    if (status != MOE_OK)
        return status;
    for (size_t a = 0; a < p * p; ++a)
        state->curvature[a] *= 0.5;
    for (size_t j = (size_t)model->intercept; j < p; ++j)
        state->curvature[j * p + j] += settings->gate.l2;
    return MOE_OK;
}

/* One or inner_steps majorise-minimise steps of the gate on the fixed bound. */
static moe_status bound_gate_steps(em_state *state, struct moe_fit_context *context,
                                   const moe_fit_settings *settings, const double *resp)
{
    struct moe_fitter *fitter = context->fitter;
    moe_status status = MOE_OK;
    if (state->curvature == NULL && (status = prepare_bound(state, context, settings)) != MOE_OK)
        return status;
    size_t steps = settings->inner_steps > 0 ? settings->inner_steps : 1;
    for (size_t step = 0; step < steps && status == MOE_OK; ++step)
        status = moe_gate_bound_step(context->model, &context->data, resp, settings->gate.l2,
                                     state->curvature, state->work, fitter->message);
    fitter->report.inner_iterations += steps;
    return status;
}

static moe_status em_iterate(void *opaque, struct moe_fit_context *context,
                             const moe_fit_settings *settings, double *resp, double objective,
                             size_t restart, size_t iteration)
{
    em_state *state = opaque;
    (void)objective;
    (void)restart;
    (void)iteration;
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    moe_expert_mstep_options options = settings->experts;
    options.inner_steps = settings->inner_steps;
    if (settings->inner_steps > 0) {
        options.step = moe_expert_step(model, settings);
        fitter->report.step = options.step;
        fitter->report.gradient_evaluations += settings->inner_steps;
    }
    moe_expert_mstep_report experts = MOE_EXPERT_MSTEP_REPORT_INIT;
    moe_status status = model->family_ops->m_step(model, &context->data, resp, &options,
                                                  &experts, fitter->message);
    moe_report_expert_mstep(&fitter->report, &experts);
    if (status != MOE_OK)
        return status;
    if (state->bound)
        return bound_gate_steps(state, context, settings, resp);
    if (settings->inner_steps > 0) {
        double step = moe_gate_step(model, settings);
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

static moe_status em_fit(void *unused, moe_fit_context *context)
{
    (void)unused;
    const moe_option_values *options = &context->fitter->options;
    int needs_steps = options->integer[MOE_OPT_INNER_STEPS] > 0 &&
                      (options->real[MOE_OPT_STEP] == 0.0 || options->real[MOE_OPT_GATE_STEP] == 0.0);
    em_state state = {options->integer[MOE_OPT_GATE_SOLVER] == 1, NULL, NULL};
    moe_iterative_method method = {needs_steps, em_iterate, &state};
    moe_status status = moe_iterative_fit(context, &method);
    free(state.curvature);
    free(state.work);
    return status;
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
