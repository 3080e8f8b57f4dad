/*
 * EM for softmax-gated mixtures of experts, written against moe/estimator.h alone: a copy of
 * this file compiled outside libmoe is the same estimator (tests/test_outside_em.c).
 *
 * E-step: the responsibilities and the log-likelihood (moe_estep_run). M-step: each expert's
 * exact maximiser through its family (weighted least squares for Gaussian experts, Newton
 * with step halving for classification experts), then the gate on the soft-label softmax
 * regression. Both halves never decrease the surrogate, so the (penalised) log-likelihood
 * never decreases; the shared loop counts any iteration that does rather than hiding it.
 *
 * One pass over X per iteration. The E-step at the current parameters also sums what the
 * next M-step needs: the experts' sufficient statistics, and the gate's gradient and Hessian
 * at the current gate for the new responsibilities, which give the gate's Newton step
 * without another pass. That step is judged in the next iteration's E-step, which also
 * evaluates the previous M-step's gate objective (and gradient) at the new gate: the step
 * stands if it passes the library's acceptance rule (moe_step_accepted).
 *
 * gate_solver picks what the gate M-step is (auto, the default, is newton_step or
 * hessian_free by the gate's size: the context resolves it, moe_context_get_int):
 *   newton_step: that one checked step. A rejected step (rare) is halved by
 *     recomputing the previous responsibilities. This is a generalised EM: monotone, with
 *     the fixed points of exact EM, and in the measurements of bench/RESULTS.md it needs
 *     about as many iterations.
 *   newton: the exact M-step. When the previous M-step's Newton decrement at the new gate is
 *     above gate_tol, its responsibilities are recomputed and the M-step is finished by the
 *     ordinary Newton solver before the E-step is repeated: about four passes for such an
 *     iteration instead of one.
 *   bound: one majorise-minimise step with Boehning's fixed curvature, from the same pass's
 *     gradient; it needs no check.
 *   hessian_free: one Newton step whose direction comes from conjugate gradients on
 *     Hessian-vector products (moe_context_gate_newton with one step, halved until it lowers
 *     the gate objective). The E-step then sums neither the gate's gradient nor its Hessian,
 *     whose Grams are most of a pass at large K p; the step makes its own passes (the
 *     gradient, some ten products, the trial), each O(n K p).
 *
 * With inner_steps > 0 the gate and classification experts take that many gradient steps on
 * the surrogate instead (the inexact EM of docs/REPRODUCTIONS.md), with separate passes;
 * Gaussian experts keep their closed-form update, which is exact and cheaper than one
 * gradient step's worth of bookkeeping.
 */
#include "moe/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gate_solver values */
enum { SOLVER_NEWTON = 0, SOLVER_BOUND = 1, SOLVER_NEWTON_STEP = 2, SOLVER_HESSIAN_FREE = 3 };

typedef struct em_options {
    int solver;
    size_t inner_steps;
    double step, gate_step;
    size_t gate_max_newton;
    double gate_tolerance;
    int update_experts;
} em_options;

typedef struct em_state {
    em_options options;
    size_t unknowns; /* the gate's free parameters, (K - 1) p */
    size_t gate_size;

    /* The one-pass iteration (inner_steps = 0). */
    int one_pass;
    unsigned int flags;     /* what every E-step sums */
    moe_estep_t *estep;     /* the last E-step, at the current parameters */
    moe_model_t *previous;  /* the parameters before the last M-step */
    int pending;            /* a gate Newton step awaits its check in the next E-step */
    double objective;       /* that M-step's gate objective before the step */
    double decrement;       /* and the step's Newton decrement */
    int hessian_ready;      /* hessian holds the gate Hessian of the last E-step */
    double *hessian;        /* m x m */
    double *gradient;       /* m */
    double *direction;      /* m */
    double *gate;           /* K x p */
} em_state;

static double dot(size_t count, const double *a, const double *b)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; ++i)
        sum += a[i] * b[i];
    return sum;
}

/* The gate Hessian of the last E-step (it does not depend on the targets, so both the check
   of the previous step and the next step use it). */
static moe_status finish_hessian(em_state *state)
{
    if (state->hessian_ready)
        return MOE_OK;
    moe_status status =
        moe_estep_gate_hessian(state->estep, state->hessian, state->unknowns * state->unknowns);
    state->hessian_ready = status == MOE_OK;
    return status;
}

/*
 * Judge the pending gate step with the previous responsibilities at the new gate. Returns 1
 * when the step was accepted and the M-step is finished, 0 when the M-step needs the
 * ordinary solver (from the new gate if the step was accepted, from the old one if not):
 * *accepted tells which.
 */
static int check_pending_step(em_state *state, moe_fit_context *context, int *accepted)
{
    moe_estep_result result = MOE_ESTEP_RESULT_INIT;
    if (moe_estep_get_result(state->estep, &result) != MOE_OK)
        return 0;
    double trial = result.previous_gate_objective;
    *accepted = moe_step_accepted(state->objective, trial, state->decrement, 1.0);
    if (!*accepted)
        return 0;
    /* The pending step is the M-step's first Newton step. */
    moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, 1);
    if (result.previous_gate_separated)
        moe_context_count(context, MOE_COUNTER_SEPARATION_EVENTS, 1);
    if (state->options.solver != SOLVER_NEWTON || state->options.gate_max_newton <= 1)
        return 1;
    /* The exact Newton decrement of the previous M-step at the new gate. */
    size_t m = state->unknowns;
    if (finish_hessian(state) != MOE_OK ||
        moe_estep_gate_gradient(state->estep, 1, state->gradient, m) != MOE_OK)
        return 0;
    memcpy(state->direction, state->gradient, m * sizeof(double));
    if (moe_solve_symmetric(m, state->hessian, state->direction, NULL) != MOE_OK)
        return 0;
    double decrement = dot(m, state->gradient, state->direction);
    return !(decrement > 0.0) ||
           0.5 * decrement <= state->options.gate_tolerance * (1.0 + fabs(trial));
}

/*
 * Finish the previous gate M-step the ordinary way: its responsibilities again (an E-step at
 * the parameters it started from), then Newton from the new gate (or the old one when the
 * step was rejected), then the E-step at the finished parameters.
 */
static moe_status complete_gate_mstep(em_state *state, moe_fit_context *context,
                                      moe_model_t *model, double *resp, int accepted)
{
    moe_status status = moe_estep_run(state->estep, state->previous, NULL, 0, resp);
    if (status != MOE_OK)
        return status;
    if (!accepted) {
        status = moe_model_get_gate(state->previous, state->gate, state->gate_size);
        if (status == MOE_OK)
            status = moe_model_set_gate(model, state->gate, state->gate_size);
        if (status != MOE_OK)
            return status;
    }
    size_t steps = 1; /* the rejected step again, halved */
    if (state->options.solver == SOLVER_NEWTON) {
        size_t taken = accepted ? 1 : 0, limit = state->options.gate_max_newton;
        steps = limit > taken ? limit - taken : 1;
    }
    status = moe_context_gate_newton(context, model, NULL, resp, steps);
    if (status != MOE_OK)
        return status;
    state->hessian_ready = 0;
    return moe_estep_run(state->estep, model, NULL, state->flags, resp);
}

static moe_status one_pass_evaluate(void *opaque, moe_fit_context *context, moe_model_t *model,
                                    double *resp, size_t restart, size_t iteration,
                                    double *loglik)
{
    (void)restart;
    em_state *state = opaque;
    if (iteration == 0)
        state->pending = 0;
    unsigned int flags = state->flags | (state->pending ? MOE_ESTEP_PREVIOUS_TARGETS : 0u);
    state->hessian_ready = 0;
    moe_status status = moe_estep_run(state->estep, model, NULL, flags, resp);
    if (status == MOE_OK && state->pending) {
        state->pending = 0;
        int accepted = 0;
        if (!check_pending_step(state, context, &accepted))
            status = complete_gate_mstep(state, context, model, resp, accepted);
    }
    moe_estep_result result = MOE_ESTEP_RESULT_INIT;
    if (status == MOE_OK)
        status = moe_estep_get_result(state->estep, &result);
    if (status == MOE_OK)
        *loglik = result.loglik;
    return status;
}

/* The gate M-step's first Newton step from the E-step's sums; judged in the next E-step. */
static moe_status one_pass_gate_step(em_state *state, moe_fit_context *context,
                                     moe_model_t *model, const double *resp)
{
    size_t m = state->unknowns;
    /* Its own passes: the gradient, the products, the trial. */
    if (state->options.solver == SOLVER_HESSIAN_FREE)
        return moe_context_gate_newton(context, model, NULL, resp, 1);
    moe_status status = moe_estep_gate_gradient(state->estep, 0, state->gradient, m);
    if (status != MOE_OK)
        return status;
    if (state->options.solver == SOLVER_BOUND) {
        moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, 1);
        return moe_context_gate_bound_step(context, model, state->gradient, m);
    }
    if ((status = finish_hessian(state)) != MOE_OK)
        return status;
    for (size_t a = 0; a < m; ++a)
        state->direction[a] = -state->gradient[a];
    int ridge_used = 0;
    if (moe_solve_symmetric(m, state->hessian, state->direction, &ridge_used) != MOE_OK)
        /* Hand the whole M-step to the solver with its own fallbacks. */
        return moe_context_gate_newton(context, model, NULL, resp, 0);
    if (ridge_used)
        moe_context_count(context, MOE_COUNTER_RIDGE_FALLBACKS, 1);
    double decrement = -dot(m, state->gradient, state->direction);
    if (!(decrement > 0.0))
        return MOE_OK;
    /* The first step of an M-step is always taken (see moe_context_gate_newton). */
    moe_estep_result result = MOE_ESTEP_RESULT_INIT;
    if ((status = moe_estep_get_result(state->estep, &result)) != MOE_OK)
        return status;
    state->objective = result.gate_objective;
    state->decrement = decrement;
    state->pending = 1;
    if ((status = moe_model_get_gate(model, state->gate, state->gate_size)) != MOE_OK)
        return status;
    for (size_t a = 0; a < m; ++a)
        state->gate[a] += state->direction[a];
    return moe_model_set_gate(model, state->gate, state->gate_size);
}

static moe_status one_pass_iterate(em_state *state, moe_fit_context *context,
                                   moe_model_t *model, double *resp)
{
    moe_status status = moe_model_copy_parameters(state->previous, model);
    if (status == MOE_OK && state->options.update_experts)
        status = moe_context_update_experts(context, model, NULL, resp, state->estep, 0, 0.0);
    if (status != MOE_OK || moe_model_n_experts(model) == 1)
        return status;
    return one_pass_gate_step(state, context, model, resp);
}

/* ---- the iteration with separate passes ------------------------------------------------ */

static moe_status em_iterate(void *opaque, moe_fit_context *context, moe_model_t *model,
                             double *resp, double objective, size_t restart, size_t iteration)
{
    em_state *state = opaque;
    (void)objective;
    (void)restart;
    (void)iteration;
    if (state->one_pass)
        return one_pass_iterate(state, context, model, resp);
    const em_options *options = &state->options;
    moe_status status = MOE_OK;
    if (options->inner_steps > 0) {
        double step = options->step;
        if (step == 0.0 && (status = moe_context_safe_steps(context, model, &step, NULL)) != MOE_OK)
            return status;
        moe_context_set_steps(context, step, NAN);
        moe_context_count(context, MOE_COUNTER_GRADIENT_EVALUATIONS, options->inner_steps);
        if (options->update_experts)
            status = moe_context_update_experts(context, model, NULL, resp, NULL,
                                                options->inner_steps, step);
    } else if (options->update_experts) {
        status = moe_context_update_experts(context, model, NULL, resp, NULL, 0, 0.0);
    }
    if (status != MOE_OK || moe_model_n_experts(model) == 1)
        return status;
    if (options->solver == SOLVER_BOUND) {
        size_t steps = options->inner_steps > 0 ? options->inner_steps : 1;
        for (size_t s = 0; s < steps && status == MOE_OK; ++s) {
            status = moe_context_gate_gradient(context, model, NULL, resp, state->gradient,
                                               state->unknowns);
            if (status == MOE_OK)
                status = moe_context_gate_bound_step(context, model, state->gradient,
                                                     state->unknowns);
        }
        moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, steps);
        return status;
    }
    if (options->inner_steps > 0) {
        double step = options->gate_step;
        if (step == 0.0 && (status = moe_context_safe_steps(context, model, NULL, &step)) != MOE_OK)
            return status;
        moe_context_set_steps(context, NAN, step);
        moe_context_count(context, MOE_COUNTER_INNER_ITERATIONS, options->inner_steps);
        return moe_context_gate_gradient_steps(context, model, NULL, resp, options->inner_steps,
                                               step);
    }
    /* A Newton system above the size limit: the solver reports it. */
    return moe_context_gate_newton(context, model, NULL, resp, 0);
}

static moe_status read_options(moe_fit_context *context, em_options *options)
{
    long long solver = 0, inner = 0, max_newton = 0, update = 0;
    moe_status status = moe_context_get_int(context, MOE_OPT_GATE_SOLVER, &solver);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_INNER_STEPS, &inner);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_GATE_MAX_NEWTON, &max_newton);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_UPDATE_EXPERTS, &update);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_STEP, &options->step);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_GATE_STEP, &options->gate_step);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_GATE_TOLERANCE, &options->gate_tolerance);
    options->solver = (int)solver;
    options->inner_steps = (size_t)inner;
    options->gate_max_newton = (size_t)max_newton;
    options->update_experts = update != 0;
    return status;
}

static void state_free(em_state *state)
{
    moe_estep_free(state->estep);
    moe_model_free(state->previous);
    free(state->hessian);
    free(state->gradient);
    free(state->direction);
    free(state->gate);
}

static moe_status state_allocate(em_state *state, moe_fit_context *context)
{
    const moe_model_t *model = moe_context_model(context);
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    size_t m = (K - 1) * p;
    state->unknowns = m;
    state->gate_size = K * p;
    /* The one-pass iteration takes Newton steps from a Hessian it sums: beyond the Newton size
       limit the ordinary path reports the limit. */
    int hessian_free = state->options.solver == SOLVER_HESSIAN_FREE;
    state->one_pass = state->options.inner_steps == 0 &&
                      (state->options.solver == SOLVER_BOUND || hessian_free ||
                       m <= MOE_NEWTON_MAX_UNKNOWNS);
    /* The Hessian-free step sums nothing in the E-step: above all not the Hessian. */
    state->flags = (hessian_free ? 0u : MOE_ESTEP_GATE_DERIVATIVES) |
                   (state->options.update_experts ? MOE_ESTEP_EXPERT_STATISTICS : 0u);
    state->gradient = malloc((m + 1) * sizeof(double));
    state->gate = malloc(state->gate_size * sizeof(double));
    int ok = state->gradient != NULL && state->gate != NULL;
    if (ok && state->one_pass && !hessian_free) {
        state->hessian = malloc((m > 0 ? m * m : 1) * sizeof(double));
        state->direction = malloc((m + 1) * sizeof(double));
        ok = state->hessian != NULL && state->direction != NULL;
    }
    if (!ok)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                "cannot allocate em's workspace");
    if (!state->one_pass)
        return MOE_OK;
    moe_status status = moe_estep_create(context, state->flags | MOE_ESTEP_PREVIOUS_TARGETS,
                                         &state->estep);
    if (status == MOE_OK)
        status = moe_model_clone(&state->previous, model);
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
    em_state state;
    memset(&state, 0, sizeof state);
    moe_status status = read_options(context, &state.options);
    if (status == MOE_OK)
        status = state_allocate(&state, context);
    moe_iteration_ops ops = {MOE_ITERATION_OPS_VERSION, em_iterate,
                             state.one_pass ? one_pass_evaluate : NULL};
    if (status == MOE_OK)
        status = moe_context_iterate(context, &ops, &state);
    state_free(&state);
    return status;
}

/* A copy compiled outside libmoe names its own table (tests/outside/). */
#ifndef MOE_EM_TABLE
#define MOE_EM_TABLE moe_estimator_em
#define MOE_EM_NAME "em"
#endif

const moe_estimator_ops MOE_EM_TABLE = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = MOE_EM_NAME,
    .create = em_create,
    .destroy = em_destroy,
    .set_option = NULL,
    .fit = em_fit,
    .partial_fit = NULL,
    .options = MOE_ITERATION_OPTIONS | MOE_OPTION_BIT(MOE_OPT_INNER_STEPS) |
               MOE_OPTION_BIT(MOE_OPT_STEP) | MOE_OPTION_BIT(MOE_OPT_GATE_STEP) |
               MOE_OPTION_BIT(MOE_OPT_GATE_SOLVER),
    .flags = MOE_ESTIMATOR_COMBINES,
    .reset = NULL,
    .aggregate = NULL,
    .save_state = NULL,
    .load_state = NULL,
};
