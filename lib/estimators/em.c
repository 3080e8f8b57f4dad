/*
 * EM for softmax-gated mixtures of experts.
 *
 * E-step: log-space responsibilities and the log-likelihood (model/posterior.c).
 * M-step: each expert's exact maximiser through its family (weighted least
 * squares for Gaussian experts), then the gate by Newton with step halving
 * (model/gate.c). Both halves never decrease the surrogate, so the
 * (penalised) log-likelihood never decreases; any iteration that does is
 * counted in the report rather than hidden.
 */
#include "common/alloc.h"
#include "estimators/fitter_impl.h"
#include "estimators/init.h"
#include "model/family.h"
#include "model/gate.h"
#include "model/posterior.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Decrease, relative to N + |objective|, beyond which an iteration counts as a
   monotonicity violation: the per-observation scale makes the slack independent of n. */
#define MONOTONICITY_SLACK 1e-10
/* Share of the one-hot label kept when the initial partition trains the gate: a hard
   partition is often separable and would send the gate weights to infinity. */
#define INIT_GATE_CONFIDENCE 0.8

typedef struct em_settings {
    size_t max_iter;
    double tolerance;
    size_t n_init;
    uint64_t seed;
    moe_init_strategy init;
    double total_weight;
    moe_gate_options gate;
    moe_expert_mstep_options experts;
} em_settings;

typedef struct em_buffers {
    double *resp;   /* n x K */
    size_t *labels; /* n */
} em_buffers;

static double weighted_variance(const moe_data *data, double total)
{
    double mean = 0.0;
    for (size_t i = 0; i < data->n; ++i)
        mean += moe_data_weight(data, i) * data->y[i];
    mean /= total;
    double sum = 0.0;
    for (size_t i = 0; i < data->n; ++i)
        sum += moe_data_weight(data, i) * (data->y[i] - mean) * (data->y[i] - mean);
    return sum / total;
}

static void read_settings(const struct moe_fitter *fitter, const moe_data *data,
                          em_settings *settings)
{
    const moe_option_values *o = &fitter->options;
    settings->max_iter = (size_t)o->integer[MOE_OPT_MAX_ITER];
    settings->tolerance = o->real[MOE_OPT_TOLERANCE];
    settings->n_init = (size_t)o->integer[MOE_OPT_N_INIT];
    settings->seed = (uint64_t)o->integer[MOE_OPT_SEED];
    settings->init = (moe_init_strategy)o->integer[MOE_OPT_INIT];
    double total = 0.0;
    for (size_t i = 0; i < data->n; ++i)
        total += moe_data_weight(data, i);
    settings->total_weight = total;
    settings->gate.l2 = o->real[MOE_OPT_GATE_L2];
    settings->gate.max_newton = (size_t)o->integer[MOE_OPT_GATE_MAX_NEWTON];
    settings->gate.tolerance = o->real[MOE_OPT_GATE_TOLERANCE];
    settings->experts.ridge = o->real[MOE_OPT_EXPERT_RIDGE];
    settings->experts.total_weight = total;
    double variance = weighted_variance(data, total);
    settings->experts.variance_floor =
        o->real[MOE_OPT_VARIANCE_FLOOR] * (variance > 0.0 ? variance : 1.0);
    if (!(settings->experts.variance_floor > 0.0))
        settings->experts.variance_floor = 1e-300;
    settings->experts.min_weight = o->real[MOE_OPT_MIN_EXPERT_WEIGHT] * total;
}

/* The objective EM increases: log-likelihood minus the penalties on the sum scale. */
static double objective(const struct moe_model *model, const em_settings *settings,
                        double loglik)
{
    double penalty = moe_gate_penalty(model, settings->gate.l2) +
                     moe_expert_penalty(model, settings->experts.ridge);
    return loglik - settings->total_weight * penalty;
}

/* Convergence and monotonicity are judged per unit of weight, so the same tolerance means
   the same thing for n = 100 and n = 10^7. */
static double objective_scale(const em_settings *settings, double value)
{
    return settings->total_weight + fabs(value);
}

static moe_status m_step(struct moe_fit_context *context, const em_settings *settings,
                         const double *resp)
{
    struct moe_fitter *fitter = context->fitter;
    moe_expert_mstep_report experts = {0, 0, 0};
    moe_status status = context->model->family_ops->m_step(
        context->model, &context->data, resp, &settings->experts, &experts, fitter->message);
    fitter->report.degenerate_events += experts.degenerate_experts;
    fitter->report.ridge_fallbacks += experts.ridge_fallbacks;
    fitter->report.floored_variances += experts.floored_variances;
    if (status != MOE_OK)
        return status;
    moe_gate_report gate = {0, 0, 0};
    status = moe_gate_newton(context->model, &context->data, resp, &settings->gate, &gate,
                             fitter->message);
    fitter->report.inner_iterations += gate.newton_steps;
    fitter->report.ridge_fallbacks += gate.ridge_fallbacks;
    fitter->report.line_search_failures += gate.line_search_failures;
    return status;
}

static moe_status initialise(struct moe_fit_context *context, const em_settings *settings,
                             size_t restart, const struct moe_model *start, em_buffers *buffers)
{
    struct moe_model *model = context->model;
    const moe_data *data = &context->data;
    size_t K = model->n_experts, n = data->n;
    if (settings->init == MOE_INIT_MODEL && restart == 0) {
        moe_model_copy_parameters(model, start);
        return MOE_OK;
    }
    moe_init_strategy strategy =
        settings->init == MOE_INIT_RANDOM ? MOE_INIT_RANDOM : MOE_INIT_KMEANS;
    moe_rng rng;
    moe_rng_seed(&rng, settings->seed, restart);
    moe_status status = moe_init_partition(strategy, data, K, &rng, buffers->labels,
                                           context->fitter->message);
    if (status != MOE_OK)
        return status;
    moe_expert_mstep_report ignored = {0, 0, 0};
    /* Every expert first takes the pooled fit, so one left empty by the partition still
       starts from sensible values. */
    for (size_t i = 0; i < n * K; ++i)
        buffers->resp[i] = 1.0 / (double)K;
    status = model->family_ops->m_step(model, data, buffers->resp, &settings->experts, &ignored,
                                       context->fitter->message);
    if (status != MOE_OK)
        return status;
    for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < K; ++k)
            buffers->resp[i * K + k] = buffers->labels[i] == k ? 1.0 : 0.0;
    status = model->family_ops->m_step(model, data, buffers->resp, &settings->experts, &ignored,
                                       context->fitter->message);
    if (status != MOE_OK)
        return status;
    double floor = (1.0 - INIT_GATE_CONFIDENCE) / (double)K;
    for (size_t i = 0; i < n * K; ++i)
        buffers->resp[i] = INIT_GATE_CONFIDENCE * buffers->resp[i] + floor;
    memset(model->gate, 0, moe_gate_size(model) * sizeof(double));
    moe_gate_report gate = {0, 0, 0};
    return moe_gate_newton(model, data, buffers->resp, &settings->gate, &gate,
                           context->fitter->message);
}

typedef struct restart_outcome {
    double objective;
    int converged;
} restart_outcome;

static moe_status run_restart(struct moe_fit_context *context, const em_settings *settings,
                              size_t restart, em_buffers *buffers, restart_outcome *outcome)
{
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    moe_posterior_result posterior;
    outcome->objective = -INFINITY;
    outcome->converged = 0;
    moe_status status =
        moe_posterior_pass(model, &context->data, buffers->resp, &posterior, fitter->message);
    if (status != MOE_OK)
        return status;
    if (!isfinite(posterior.loglik))
        return moe_fail(fitter->message, MOE_ERR_NUMERICAL,
                        "restart %zu: log-likelihood at the starting point is not finite",
                        restart);
    double previous = objective(model, settings, posterior.loglik);
    outcome->objective = previous;
    status = moe_context_iteration(context, restart, 0, posterior.loglik);
    if (status != MOE_OK)
        return status;
    for (size_t t = 1; t <= settings->max_iter; ++t) {
        status = m_step(context, settings, buffers->resp);
        if (status != MOE_OK)
            return status;
        status = moe_posterior_pass(model, &context->data, buffers->resp, &posterior,
                                    fitter->message);
        if (status != MOE_OK)
            return status;
        if (!isfinite(posterior.loglik))
            return moe_fail(fitter->message, MOE_ERR_NUMERICAL,
                            "restart %zu iteration %zu: log-likelihood is not finite", restart,
                            t);
        double current = objective(model, settings, posterior.loglik);
        double decrease = previous - current;
        double scale = objective_scale(settings, previous);
        if (decrease > MONOTONICITY_SLACK * scale) {
            double relative = decrease / scale;
            fitter->report.monotonicity_violations++;
            if (relative > fitter->report.worst_relative_decrease)
                fitter->report.worst_relative_decrease = relative;
        }
        outcome->objective = current;
        status = moe_context_iteration(context, restart, t, posterior.loglik);
        if (status != MOE_OK)
            return status;
        if (fabs(current - previous) <= settings->tolerance * objective_scale(settings, current)) {
            outcome->converged = 1;
            break;
        }
        previous = current;
    }
    return MOE_OK;
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
    (void)state;
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    size_t n = context->data.n, K = model->n_experts;
    em_settings settings;
    read_settings(fitter, &context->data, &settings);
    em_buffers buffers = {moe_alloc_array(n, K, sizeof(double)),
                          moe_alloc_array(n, 1, sizeof(size_t))};
    struct moe_model *start = NULL, *best = NULL;
    moe_status status = MOE_OK;
    if (buffers.resp == NULL || buffers.labels == NULL) {
        status = moe_fail(fitter->message, MOE_ERR_OUT_OF_MEMORY,
                          "cannot allocate %zu x %zu responsibilities", n, K);
        goto done;
    }
    if ((status = moe_model_clone(&start, model)) != MOE_OK ||
        (status = moe_model_clone(&best, model)) != MOE_OK) {
        moe_fail_propagate(fitter->message, status);
        goto done;
    }
    double best_objective = -INFINITY;
    int best_converged = 0, have_best = 0;
    size_t best_restart = 0;
    moe_status last_failure = MOE_OK;
    char failure_message[MOE_MESSAGE_SIZE] = "";
    for (size_t restart = 0; restart < settings.n_init; ++restart) {
        restart_outcome outcome = {-INFINITY, 0};
        status = initialise(context, &settings, restart, start, &buffers);
        if (status == MOE_OK)
            status = run_restart(context, &settings, restart, &buffers, &outcome);
        /* A cancelled restart still offers its current parameters as a candidate. */
        if ((status == MOE_OK || status == MOE_ERR_CANCELLED) && outcome.objective > best_objective) {
            best_objective = outcome.objective;
            best_converged = outcome.converged;
            best_restart = restart;
            have_best = 1;
            moe_model_copy_parameters(best, model);
        }
        if (status == MOE_ERR_CANCELLED || status == MOE_ERR_OUT_OF_MEMORY)
            break;
        if (status != MOE_OK) { /* numerical trouble in one restart: try the others */
            last_failure = status;
            memcpy(failure_message, fitter->message, MOE_MESSAGE_SIZE);
            status = MOE_OK;
        }
    }
    if (have_best) {
        moe_model_copy_parameters(model, best);
        moe_context_set_result(context, best_restart, best_converged);
    } else if (status == MOE_OK) {
        status = last_failure != MOE_OK ? last_failure : MOE_ERR_NUMERICAL;
        memcpy(fitter->message, failure_message, MOE_MESSAGE_SIZE);
    }
done:
    free(buffers.resp);
    free(buffers.labels);
    moe_model_free(start);
    moe_model_free(best);
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
