/*
 * EM for softmax-gated mixtures of experts.
 *
 * E-step: log-space responsibilities and the log-likelihood (model/posterior.c).
 * M-step: each expert's exact maximiser through its family (weighted least
 * squares for Gaussian experts, Newton with step halving for classification
 * experts), then the gate on the soft-label softmax regression. Both halves
 * never decrease the surrogate, so the (penalised) log-likelihood never
 * decreases; any iteration that does is counted in the report rather than
 * hidden.
 *
 * One pass over X per iteration. The E-step pass at the current parameters
 * also sums what the next M-step needs: the experts' sufficient statistics and
 * the gate's gradient and Hessian at the current gate for the new
 * responsibilities, which give the gate's Newton step without another pass.
 * That step is judged in the next iteration's pass, which also evaluates the
 * previous M-step's gate objective (and gradient) at the new gate: the step
 * stands if it decreased that objective enough (Armijo, as in model/softmax.c).
 *
 * gate_solver picks what the gate M-step is:
 *   newton_step (default): that one checked step. A rejected step (rare) is
 *     halved by recomputing the previous responsibilities. This is a
 *     generalised EM: monotone, with the fixed points of exact EM, and in the
 *     measurements of bench/RESULTS.md it needs about as many iterations.
 *   newton: the exact M-step. When the previous M-step's Newton decrement at
 *     the new gate is above gate_tol, its responsibilities are recomputed and
 *     the M-step is finished by the ordinary Newton solver before the pass is
 *     repeated: about four passes for such an iteration instead of one.
 *   bound: one majorise-minimise step with Boehning's fixed curvature, from
 *     the same pass's gradient; it needs no check.
 *
 * With inner_steps > 0 the gate and classification experts take that many
 * gradient steps on the surrogate instead (the paper's inexact EM), with
 * separate passes; Gaussian experts keep their closed-form update, which is
 * cheaper than one gradient step's worth of bookkeeping and exact.
 */
#include "common/alloc.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "estimators/driver.h"
#include "estimators/gradient.h"
#include "model/posterior.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gate_solver values */
enum { SOLVER_NEWTON = 0, SOLVER_BOUND = 1, SOLVER_NEWTON_STEP = 2 };

typedef struct em_state {
    int exact; /* gate_solver newton: each gate M-step solved to gate_tol */
    /* Boehning's curvature bound of the gate, when gate_solver is "bound". */
    int bound;
    double *curvature; /* p x p: E_w[x x'] / 2 + gate_l2 on the non-intercept diagonal */
    double *work;      /* p x (p + 2) */

    /* The one-pass iteration (inner_steps = 0). */
    int one_pass;
    moe_pass_request request;
    moe_pass_sums sums;        /* of the last pass, at the current parameters */
    struct moe_model *previous; /* the parameters before the last M-step */
    int pending;               /* a gate Newton step awaits its check in the next pass */
    double objective;          /* that M-step's objective before the step (mean scale) */
    double decrement;          /* and the step's Newton decrement */
    int hessian_ready;         /* hessian holds the gate Hessian of the last pass */
    double *hessian;           /* m x m */
    double *gradient;          /* m */
    double *direction;         /* m */
    double *solve_work;        /* m x (m + 1) */
} em_state;

static moe_status prepare_bound(em_state *state, struct moe_fit_context *context,
                                const moe_fit_settings *settings)
{
    const struct moe_model *model = context->model;
    size_t p = model->n_inputs;
    state->curvature = moe_alloc_array(p, p, sizeof(double));
    state->work = moe_alloc_array(p, p + 2, sizeof(double));
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
                                     settings->threads,
                                     state->curvature, state->work, fitter->message);
    fitter->report.inner_iterations += steps;
    return status;
}

/* ---- the one-pass iteration ------------------------------------------------------------ */

static moe_softmax_problem gate_problem(const struct moe_fit_context *context,
                                        const moe_fit_settings *settings)
{
    moe_softmax_problem problem =
        moe_gate_problem(context->model, &context->data, NULL, settings->gate.l2);
    problem.total_weight = settings->total_weight;
    return problem;
}

/* The mean-scale gate Hessian at the current gate from the last pass's sums (it does not
   depend on the targets, so both the check of the previous step and the next step use it). */
static void finish_hessian(em_state *state, const moe_softmax_problem *problem)
{
    if (state->hessian_ready)
        return;
    moe_softmax_finish_hessian(problem, state->sums.gate_hessian_parts, state->hessian);
    state->hessian_ready = 1;
}

/*
 * Judge the pending gate step with the previous responsibilities at the new gate. Returns
 * 1 when the step was accepted and the M-step is finished, 0 when the M-step needs the
 * ordinary solver (from the new gate if the step was accepted, from the old one if not):
 * *accepted tells which.
 */
static int check_pending_step(em_state *state, struct moe_fit_context *context,
                              const moe_fit_settings *settings, int *accepted)
{
    const struct moe_model *model = context->model;
    moe_softmax_problem problem = gate_problem(context, settings);
    size_t m = (model->n_experts - 1) * model->n_inputs;
    double current = state->objective;
    double trial = state->sums.previous_gate_data / settings->total_weight +
                   moe_gate_penalty(model, settings->gate.l2);
    /* As in moe_softmax_newton: near the optimum Q cannot resolve the remaining decrease
       (pitfall P11b of the EM spec), and a step within rounding of Q is accepted. */
    double resolution = 16.0 * DBL_EPSILON * (1.0 + fabs(current));
    int near_optimum = 0.5 * state->decrement <= 1e-8 * (1.0 + fabs(current));
    *accepted = trial <= current - 1e-4 * state->decrement ||
                (near_optimum && trial <= current + resolution);
    if (!*accepted)
        return 0;
    moe_gate_report gate = MOE_GATE_REPORT_INIT;
    gate.newton_steps = 1;
    if (settings->gate.l2 == 0.0 && state->sums.weight > 0.0 &&
        state->sums.previous_gate_data <= 1e-9 * state->sums.weight)
        gate.separations = 1;
    moe_report_gate(&context->fitter->report, &gate);
    /* The pending step is the M-step's first Newton step. */
    if (!state->exact || settings->gate.max_newton <= 1)
        return 1;
    /* The exact Newton decrement of the previous M-step at the new gate. */
    finish_hessian(state, &problem);
    memcpy(state->gradient, state->sums.previous_gate_gradient, m * sizeof(double));
    moe_softmax_finish_gradient(&problem, model->gate, state->gradient);
    memcpy(state->direction, state->gradient, m * sizeof(double));
    int ignored = 0;
    if (moe_solve_spd(m, state->hessian, state->direction, state->solve_work, &ignored) != 0)
        return 0;
    double decrement = moe_dot(m, state->gradient, state->direction);
    return !(decrement > 0.0) || 0.5 * decrement <= settings->gate.tolerance * (1.0 + fabs(trial));
}

/*
 * Finish the previous gate M-step the ordinary way: its responsibilities again (an E-step
 * at the parameters it started from), then Newton from the new gate (or the old one when
 * the step was rejected), then the pass at the finished parameters.
 */
static moe_status complete_gate_mstep(em_state *state, struct moe_fit_context *context,
                                      const moe_fit_settings *settings, double *resp,
                                      int accepted)
{
    struct moe_model *model = context->model;
    struct moe_fitter *fitter = context->fitter;
    moe_posterior_result ignored;
    moe_status status = moe_posterior_pass(state->previous, &context->data, resp,
                                           settings->threads, &ignored, fitter->message);
    if (status != MOE_OK)
        return status;
    if (!accepted)
        memcpy(model->gate, state->previous->gate, moe_gate_size(model) * sizeof(double));
    moe_gate_options options = settings->gate;
    size_t taken = accepted ? 1 : 0;
    options.max_newton = options.max_newton > taken ? options.max_newton - taken : 1;
    if (!state->exact)
        options.max_newton = 1; /* the rejected step again, halved */
    moe_gate_report gate = MOE_GATE_REPORT_INIT;
    status = moe_gate_newton(model, &context->data, resp, &options, &gate, fitter->message);
    moe_report_gate(&fitter->report, &gate);
    if (status != MOE_OK)
        return status;
    state->request.previous = 0;
    state->hessian_ready = 0;
    return moe_pass_run(model, &context->data, resp, &state->request, &state->sums,
                        fitter->message);
}

static moe_status one_pass_evaluate(void *opaque, struct moe_fit_context *context,
                                    const moe_fit_settings *settings, double *resp,
                                    size_t iteration, moe_posterior_result *posterior)
{
    em_state *state = opaque;
    struct moe_fitter *fitter = context->fitter;
    if (iteration == 0)
        state->pending = 0;
    state->request.previous = state->pending;
    state->hessian_ready = 0;
    moe_status status = moe_pass_run(context->model, &context->data, resp, &state->request,
                                     &state->sums, fitter->message);
    if (status == MOE_OK && state->pending) {
        state->pending = 0;
        int accepted = 0;
        if (!check_pending_step(state, context, settings, &accepted))
            status = complete_gate_mstep(state, context, settings, resp, accepted);
    }
    if (status == MOE_OK)
        *posterior = state->sums.posterior;
    return status;
}

/* The gate M-step's first Newton step from the pass's sums; judged in the next pass. */
static moe_status one_pass_gate_step(em_state *state, struct moe_fit_context *context,
                                     const moe_fit_settings *settings, const double *resp)
{
    struct moe_model *model = context->model;
    struct moe_fitter *fitter = context->fitter;
    moe_softmax_problem problem = gate_problem(context, settings);
    size_t m = (model->n_experts - 1) * model->n_inputs;
    memcpy(state->gradient, state->sums.gate_gradient, m * sizeof(double));
    moe_softmax_finish_gradient(&problem, model->gate, state->gradient);
    if (state->bound) {
        moe_status status = MOE_OK;
        if (state->curvature == NULL &&
            (status = prepare_bound(state, context, settings)) != MOE_OK)
            return status;
        fitter->report.inner_iterations++;
        return moe_gate_bound_apply(model, state->gradient, state->curvature, state->work,
                                    fitter->message);
    }
    finish_hessian(state, &problem);
    for (size_t a = 0; a < m; ++a)
        state->direction[a] = -state->gradient[a];
    int ridge_used = 0;
    if (moe_solve_spd(m, state->hessian, state->direction, state->solve_work, &ridge_used) != 0) {
        /* Hand the whole M-step to the solver with its own fallbacks. */
        moe_gate_report gate = MOE_GATE_REPORT_INIT;
        moe_status status =
            moe_gate_newton(model, &context->data, resp, &settings->gate, &gate, fitter->message);
        moe_report_gate(&fitter->report, &gate);
        return status;
    }
    if (ridge_used)
        fitter->report.ridge_fallbacks++;
    double decrement = -moe_dot(m, state->gradient, state->direction);
    if (!(decrement > 0.0))
        return MOE_OK;
    /* The first step of an M-step is always taken (see moe_softmax_newton). */
    state->objective = state->sums.gate_data / settings->total_weight +
                       moe_gate_penalty(model, settings->gate.l2);
    state->decrement = decrement;
    state->pending = 1;
    for (size_t a = 0; a < m; ++a)
        model->gate[a] += state->direction[a];
    return MOE_OK;
}

static moe_status one_pass_iterate(em_state *state, struct moe_fit_context *context,
                                   const moe_fit_settings *settings, double *resp)
{
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    moe_model_copy_parameters(state->previous, model);
    moe_expert_mstep_report experts = MOE_EXPERT_MSTEP_REPORT_INIT;
    moe_status status = MOE_OK;
    if (!settings->update_experts)
        status = MOE_OK;
    else if (state->sums.experts != NULL)
        status = model->family_ops->solve_statistics(model, &context->data, resp,
                                                     state->sums.experts, &settings->experts,
                                                     &experts, fitter->message);
    else
        status = model->family_ops->m_step(model, &context->data, resp, &settings->experts,
                                           &experts, fitter->message);
    moe_report_expert_mstep(&fitter->report, &experts);
    if (status != MOE_OK || model->n_experts == 1)
        return status;
    return one_pass_gate_step(state, context, settings, resp);
}

/* ---- the iteration with separate passes -------------------------------------------------- */

static moe_status em_iterate(void *opaque, struct moe_fit_context *context,
                             const moe_fit_settings *settings, double *resp, double objective,
                             size_t restart, size_t iteration)
{
    em_state *state = opaque;
    (void)objective;
    (void)restart;
    (void)iteration;
    if (state->one_pass)
        return one_pass_iterate(state, context, settings, resp);
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
    moe_status status = MOE_OK;
    if (settings->update_experts)
        status = model->family_ops->m_step(model, &context->data, resp, &options, &experts,
                                           fitter->message);
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
                                       settings->threads,
                                       settings->inner_steps, step, fitter->message);
    }
    /* A Newton system above the size limit: the solver reports it. */
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

static moe_status prepare_one_pass(em_state *state, struct moe_fit_context *context)
{
    const struct moe_model *model = context->model;
    size_t m = (model->n_experts - 1) * model->n_inputs;
    state->request.threads =
        moe_resolve_threads((size_t)context->fitter->options.integer[MOE_OPT_THREADS]);
    state->request.gate = model->n_experts > 1;
    state->request.experts = model->family_ops->statistics_size != NULL &&
                             context->fitter->options.integer[MOE_OPT_UPDATE_EXPERTS] != 0;
    /* Sized for the passes that also check a pending step. */
    moe_pass_request largest = state->request;
    largest.previous = 1;
    moe_status status =
        moe_pass_sums_allocate(model, &largest, &state->sums, context->fitter->message);
    if (status != MOE_OK)
        return status;
    if ((status = moe_model_clone(&state->previous, model)) != MOE_OK)
        return moe_fail_propagate(context->fitter->message, status);
    state->hessian = moe_alloc_array(m > 0 ? m : 1, m > 0 ? m : 1, sizeof(double));
    state->gradient = moe_alloc_array(m + 1, 1, sizeof(double));
    state->direction = moe_alloc_array(m + 1, 1, sizeof(double));
    state->solve_work = moe_alloc_array(m + 1, m + 1, sizeof(double));
    if (state->hessian == NULL || state->gradient == NULL || state->direction == NULL ||
        state->solve_work == NULL)
        return moe_fail(context->fitter->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate the gate's Newton workspace (%zu unknowns)", m);
    return MOE_OK;
}

static moe_status em_fit(void *unused, moe_fit_context *context)
{
    (void)unused;
    const moe_option_values *options = &context->fitter->options;
    const struct moe_model *model = context->model;
    int inexact = options->integer[MOE_OPT_INNER_STEPS] > 0;
    int needs_steps = inexact && (options->real[MOE_OPT_STEP] == 0.0 ||
                                  options->real[MOE_OPT_GATE_STEP] == 0.0);
    em_state state;
    memset(&state, 0, sizeof state);
    state.bound = options->integer[MOE_OPT_GATE_SOLVER] == SOLVER_BOUND;
    state.exact = options->integer[MOE_OPT_GATE_SOLVER] == SOLVER_NEWTON;
    /* The one-pass iteration takes Newton steps from a Hessian it sums: beyond the Newton
       size limit the ordinary path reports the limit. */
    size_t m = (model->n_experts - 1) * model->n_inputs;
    state.one_pass = !inexact && (state.bound || m <= MOE_NEWTON_MAX_UNKNOWNS);
    moe_status status = MOE_OK;
    if (state.one_pass)
        status = prepare_one_pass(&state, context);
    moe_iterative_method method = {needs_steps, em_iterate,
                                   state.one_pass ? one_pass_evaluate : NULL, &state};
    if (status == MOE_OK)
        status = moe_iterative_fit(context, &method);
    free(state.curvature);
    free(state.work);
    moe_pass_sums_free(&state.sums);
    moe_model_free(state.previous);
    free(state.hessian);
    free(state.gradient);
    free(state.direction);
    free(state.solve_work);
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
    .options = (MOE_ITERATION_OPTIONS | MOE_OPTION_BIT(MOE_OPT_INNER_STEPS) |
                MOE_OPTION_BIT(MOE_OPT_STEP) | MOE_OPTION_BIT(MOE_OPT_GATE_STEP) |
                MOE_OPTION_BIT(MOE_OPT_GATE_SOLVER)),
    .flags = 0,
    .reset = NULL,
    .aggregate = NULL,
    .save_state = NULL,
    .load_state = NULL,
};
