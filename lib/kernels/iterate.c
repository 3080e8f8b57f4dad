/*
 * The loop iterative estimators share (moe_context_iterate): restarts and their starting
 * points, the evaluation after each iteration, the trace, the monotonicity check and
 * convergence. An estimator supplies what one iteration does.
 */
#include "kernels/kernels.h"
#include "kernels/start_search.h"
#include "common/alloc.h"
#include "common/check.h"
#include "common/versioned.h"
#include "common/clock.h"
#include "pass/posterior.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Decrease, relative to N + |objective|, beyond which an iteration counts as a
   monotonicity violation: the per-observation scale makes the slack independent of n. */
#define MONOTONICITY_SLACK 1e-10

/* Convergence and monotonicity are judged per unit of weight, so the same tolerance means
   the same thing for n = 100 and n = 10^7. */
static double objective_scale(const moe_fit_settings *settings, double value)
{
    return settings->total_weight + fabs(value);
}

static moe_status evaluate(moe_fit_context *context, const moe_iteration_ops *ops, void *state,
                           const moe_fit_settings *settings, double *resp, size_t restart,
                           size_t iteration, double *loglik)
{
    struct moe_model *model = context->model;
    if (ops->evaluate != NULL)
        return ops->evaluate(state, context, model, resp, restart, iteration, loglik);
    moe_posterior_result posterior;
    moe_status status = moe_posterior_pass(model, &context->data, resp, settings->threads,
                                           &posterior, context->message);
    if (status == MOE_OK)
        *loglik = posterior.loglik;
    return status;
}

typedef struct restart_outcome {
    double objective;
    int converged;
} restart_outcome;

/*
 * A restart that cannot catch the best one: its last increments shrink geometrically, and
 * even ABANDON_MARGIN times the rest of that series (at the slowest of its last ratios)
 * would leave it below the best objective so far. Restarts from the search's lesser end
 * points were measured creeping for hundreds of iterations towards optima tens of nats
 * below the winner's, most of a default fit's time (bench/RESULTS.md). A restart whose
 * increments grow (leaving a saddle) or that has run fewer than ABANDON_AFTER iterations
 * goes on.
 */
#define ABANDON_AFTER 10
#define ABANDON_MARGIN 20.0
#define ABANDON_RATIOS 3

typedef struct restart_pace {
    double increments[ABANDON_RATIOS + 1]; /* the last ones, newest first */
    size_t seen;
} restart_pace;

static int cannot_catch(restart_pace *pace, double increment, double current, double best,
                        size_t iteration)
{
    memmove(pace->increments + 1, pace->increments, ABANDON_RATIOS * sizeof(double));
    pace->increments[0] = increment;
    pace->seen++;
    if (!isfinite(best) || iteration < ABANDON_AFTER || pace->seen <= ABANDON_RATIOS ||
        !(current < best))
        return 0;
    double slowest = 0.0;
    for (size_t r = 0; r < ABANDON_RATIOS; ++r) {
        double newer = pace->increments[r], older = pace->increments[r + 1];
        if (!(newer > 0.0 && older > 0.0 && newer < older))
            return 0;
        slowest = fmax(slowest, newer / older);
    }
    double rest = increment * slowest / (1.0 - slowest);
    return current + ABANDON_MARGIN * rest < best;
}

static moe_status run_restart(moe_fit_context *context, const moe_iteration_ops *ops,
                              void *state, const moe_fit_settings *settings, size_t restart,
                              double best, double *resp, restart_outcome *outcome)
{
    restart_pace pace = {{0.0}, 0};
    char *message = context->message;
    struct moe_model *model = context->model;
    double loglik = 0.0;
    outcome->objective = -INFINITY;
    outcome->converged = 0;
    moe_status status = evaluate(context, ops, state, settings, resp, restart, 0, &loglik);
    if (status != MOE_OK)
        return status;
    if (!isfinite(loglik))
        return moe_fail(message, MOE_ERR_NUMERICAL,
                        "restart %zu: log-likelihood at the starting point is not finite",
                        restart);
    double previous = loglik - settings->total_weight * moe_fit_penalty(model, settings);
    outcome->objective = previous;
    status = moe_context_iteration(context, restart, 0, loglik);
    if (status != MOE_OK)
        return status;
    for (size_t t = 1; t <= settings->max_iter; ++t) {
        status = ops->iterate(state, context, model, resp, previous, restart, t);
        if (status == MOE_OK)
            status = evaluate(context, ops, state, settings, resp, restart, t, &loglik);
        if (status != MOE_OK)
            return status;
        if (!isfinite(loglik))
            return moe_fail(message, MOE_ERR_NUMERICAL,
                            "restart %zu iteration %zu: log-likelihood is not finite", restart,
                            t);
        double current = loglik - settings->total_weight * moe_fit_penalty(model, settings);
        double decrease = previous - current;
        double scale = objective_scale(settings, previous);
        if (decrease > MONOTONICITY_SLACK * scale)
            moe_context_note_decrease(context, decrease / scale);
        outcome->objective = current;
        status = moe_context_iteration(context, restart, t, loglik);
        if (status != MOE_OK)
            return status;
        if (fabs(current - previous) <= settings->tolerance * objective_scale(settings, current)) {
            outcome->converged = 1;
            break;
        }
        if (cannot_catch(&pace, current - previous, current, best, t))
            break;
        previous = current;
    }
    return MOE_OK;
}

moe_status moe_iteration_ops_init(moe_iteration_ops *ops, unsigned int version)
{
    if (ops == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "ops is NULL");
    static const moe_struct_layout layout = {"iteration ops", MOE_ITERATION_OPS_VERSION,
                                             {sizeof(moe_iteration_ops)}};
    _Static_assert(MOE_ITERATION_OPS_VERSION == 1, "a new version appends its size to layout");
    moe_iteration_ops empty = {MOE_ITERATION_OPS_VERSION, NULL, NULL};
    return moe_struct_fill(ops, version, &empty, &layout, NULL);
}

moe_status moe_context_iterate(moe_fit_context *context, const moe_iteration_ops *ops,
                               void *state)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    char *message = context->message;
    if (ops == NULL || ops->iterate == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "%s is NULL",
                        ops == NULL ? "ops" : "ops->iterate");
    moe_status status = moe_check_struct_version(message, "iteration ops", ops->version,
                                                 MOE_ITERATION_OPS_VERSION);
    if (status != MOE_OK)
        return status;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    unsigned int stage = settings->update_experts ? MOE_STAGE_JOINT : MOE_STAGE_GATE;
    moe_context_add_stages(context, stage);
    double started = moe_now_seconds();
    struct moe_model *model = context->model;
    size_t n = context->data.n, K = model->n_experts;
    if (n == 0 || context->data.y == NULL)
        return moe_fail(message, MOE_ERR_EMPTY_INPUT, "iterations need rows with responses");
    double *resp = moe_alloc_array(n, K, sizeof(double));
    moe_label *labels = moe_alloc_array(n, 1, sizeof(moe_label));
    struct moe_model *best = NULL;
    if (resp == NULL || labels == NULL) {
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                          "cannot allocate %zu x %zu responsibilities", n, K);
        goto done;
    }
    if ((status = moe_model_clone(&best, model)) != MOE_OK) {
        moe_fail_propagate(message, status);
        goto done;
    }
    double best_objective = -INFINITY;
    int best_converged = 0, have_best = 0;
    size_t best_restart = 0;
    moe_status last_failure = MOE_OK;
    char failure_message[MOE_MESSAGE_SIZE] = "";
    for (size_t restart = 0; restart < settings->n_init; ++restart) {
        /* The search of init = mixed may have found fewer distinct end points than
           restarts: running one twice would end where it ended before. */
        if (restart > 0 && settings->init == MOE_INIT_MIXED &&
            restart >= moe_start_search_count(context) && moe_start_search_count(context) > 0)
            break;
        restart_outcome outcome = {-INFINITY, 0};
        status = moe_start_point(context, model, restart, &context->data, resp, labels);
        if (status == MOE_OK)
            status = run_restart(context, ops, state, settings, restart, best_objective, resp,
                                 &outcome);
        /* A cancelled restart still offers its current parameters as a candidate. */
        if ((status == MOE_OK || status == MOE_ERR_CANCELLED) &&
            outcome.objective > best_objective) {
            best_objective = outcome.objective;
            best_converged = outcome.converged;
            best_restart = restart;
            have_best = 1;
            moe_model_copy_parameters(best, model);
        }
        /* Cancelled, out of memory or a configuration the method cannot run (a Newton
           system too large): another restart would end the same way. */
        if (status == MOE_ERR_CANCELLED || status == MOE_ERR_OUT_OF_MEMORY ||
            status == MOE_ERR_UNSUPPORTED)
            break;
        if (status != MOE_OK) { /* numerical trouble in one restart: try the others */
            last_failure = status;
            memcpy(failure_message, message, MOE_MESSAGE_SIZE);
            status = MOE_OK;
        }
    }
    if (have_best) {
        moe_model_copy_parameters(model, best);
        moe_context_set_result(context, best_restart, best_converged);
    } else if (status == MOE_OK) {
        status = last_failure != MOE_OK ? last_failure : MOE_ERR_NUMERICAL;
        memcpy(message, failure_message, MOE_MESSAGE_SIZE);
    }
done:
    moe_context_add_stage_seconds(context, stage, moe_now_seconds() - started);
    free(resp);
    free(labels);
    moe_model_free(best);
    return status;
}
