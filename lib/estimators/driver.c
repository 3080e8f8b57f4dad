#include "estimators/driver.h"
#include "common/alloc.h"
#include "common/parallel.h"
#include "estimators/gradient.h"
#include "estimators/init.h"
#include "model/posterior.h"
#include "model/softmax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Decrease, relative to N + |objective|, beyond which an iteration counts as a
   monotonicity violation: the per-observation scale makes the slack independent of n. */
#define MONOTONICITY_SLACK 1e-10
/* Share of the one-hot label kept when the initial partition trains the gate (and
   classification experts): a hard partition is often separable and would send the weights
   to infinity. */
#define INIT_CONFIDENCE 0.8
/* Newton steps of the starting gate. Its targets are a softened hard partition that the first
   E-step replaces, so solving them to gate_tol buys nothing: on the flexmix comparison data
   two steps instead of a full solve cut the fit from 0.85 to 0.79 s with the same iterations
   and final log-likelihood (one step cost a slightly worse optimum). */
#define INIT_GATE_NEWTON_STEPS 2
/* Gradient steps that replace a starting M-step whose Newton system would be too large. */
#define INIT_GRADIENT_STEPS 50

static int newton_too_large(const struct moe_model *model, size_t rows)
{
    return rows * model->n_inputs > MOE_NEWTON_MAX_UNKNOWNS;
}

/* A classification expert's Newton system is too large for the kernel. */
static int expert_newton_too_large(const struct moe_model *model)
{
    size_t free_rows = model->family_ops->uses_classes ? model->n_classes - 1 : 1;
    return !model->family_ops->has_variance && newton_too_large(model, free_rows);
}

/* Starting points need the safe steps when some Newton system is too large. */
static int start_needs_steps(const struct moe_model *model)
{
    return newton_too_large(model, model->n_experts - 1) || expert_newton_too_large(model);
}

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
                          moe_fit_settings *settings)
{
    const moe_option_values *o = &fitter->options;
    memset(settings, 0, sizeof *settings);
    settings->max_iter = (size_t)o->integer[MOE_OPT_MAX_ITER];
    settings->tolerance = o->real[MOE_OPT_TOLERANCE];
    settings->n_init = (size_t)o->integer[MOE_OPT_N_INIT];
    settings->seed = (uint64_t)o->integer[MOE_OPT_SEED];
    settings->init = (moe_init_strategy)o->integer[MOE_OPT_INIT];
    double total = moe_data_total_weight(data);
    settings->total_weight = total;
    settings->gate.l2 = o->real[MOE_OPT_GATE_L2];
    settings->gate.max_newton = (size_t)o->integer[MOE_OPT_GATE_MAX_NEWTON];
    settings->gate.tolerance = o->real[MOE_OPT_GATE_TOLERANCE];
    moe_expert_mstep_options *experts = &settings->experts;
    experts->ridge = o->real[MOE_OPT_EXPERT_RIDGE];
    experts->total_weight = total;
    double variance = weighted_variance(data, total);
    experts->variance_floor = o->real[MOE_OPT_VARIANCE_FLOOR] * (variance > 0.0 ? variance : 1.0);
    if (!(experts->variance_floor > 0.0))
        experts->variance_floor = 1e-300;
    experts->min_weight = o->real[MOE_OPT_MIN_EXPERT_WEIGHT] * total;
    experts->update_variance = (int)o->integer[MOE_OPT_UPDATE_VARIANCE];
    experts->max_newton = (size_t)o->integer[MOE_OPT_EXPERT_MAX_NEWTON];
    experts->tolerance = o->real[MOE_OPT_EXPERT_TOLERANCE];
    settings->threads = moe_resolve_threads((size_t)o->integer[MOE_OPT_THREADS]);
    experts->threads = settings->threads;
    settings->gate.threads = settings->threads;
    settings->inner_steps = (size_t)o->integer[MOE_OPT_INNER_STEPS];
    settings->step = o->real[MOE_OPT_STEP];
    settings->gate_step = o->real[MOE_OPT_GATE_STEP];
    settings->batch_size = (size_t)o->integer[MOE_OPT_BATCH_SIZE];
    settings->line_search = (int)o->integer[MOE_OPT_LINE_SEARCH];
    settings->update_experts = (int)o->integer[MOE_OPT_UPDATE_EXPERTS];
}

double moe_fit_penalty(const struct moe_model *model, const moe_fit_settings *settings)
{
    return moe_gate_penalty(model, settings->gate.l2) +
           moe_expert_penalty(model, settings->experts.ridge);
}

double moe_fit_objective(const struct moe_model *model, const moe_fit_settings *settings,
                         double loglik)
{
    return loglik - settings->total_weight * moe_fit_penalty(model, settings);
}

void moe_report_expert_mstep(moe_fit_report *report, const moe_expert_mstep_report *experts)
{
    report->degenerate_events += experts->degenerate_experts;
    report->ridge_fallbacks += experts->ridge_fallbacks;
    report->floored_variances += experts->floored_variances;
    report->inner_iterations += experts->newton_steps;
    report->line_search_failures += experts->line_search_failures;
    report->separation_events += experts->separations;
}

void moe_report_gate(moe_fit_report *report, const moe_gate_report *gate)
{
    report->inner_iterations += gate->newton_steps;
    report->ridge_fallbacks += gate->ridge_fallbacks;
    report->line_search_failures += gate->line_search_failures;
    report->separation_events += gate->separations;
}

/* Convergence and monotonicity are judged per unit of weight, so the same tolerance means
   the same thing for n = 100 and n = 10^7. */
static double objective_scale(const moe_fit_settings *settings, double value)
{
    return settings->total_weight + fabs(value);
}

/*
 * A starting point: the model's own parameters (init = model, restart 0), or a hard
 * partition (k-means or random) turned into parameters by one exact M-step.
 */
static moe_status initialise(struct moe_fit_context *context, const moe_fit_settings *settings,
                             size_t restart, const struct moe_model *start, double *resp,
                             moe_label *labels)
{
    struct moe_model *model = context->model;
    const moe_data *data = &context->data;
    char *message = context->fitter->message;
    size_t K = model->n_experts, n = data->n;
    moe_model_copy_parameters(model, start);
    if (settings->init == MOE_INIT_MODEL && restart == 0)
        return MOE_OK;
    moe_init_strategy strategy =
        settings->init == MOE_INIT_RANDOM ? MOE_INIT_RANDOM : MOE_INIT_KMEANS;
    moe_rng rng;
    moe_rng_seed(&rng, settings->seed, restart);
    /* A class label is no coordinate: k-means on it as a number would split the data by
       label rather than by region, so classification experts cluster on x alone. */
    int use_response = model->family_ops->has_variance;
    moe_status status = moe_init_partition(strategy, data, K, use_response, &rng, labels, message);
    if (status != MOE_OK)
        return status;
    /* Starting points take exact M-steps whatever the estimator's inner steps are, unless a
       Newton system would be too large; then a fixed number of safe gradient steps. */
    moe_expert_mstep_options experts = settings->experts;
    experts.inner_steps = 0;
    if (expert_newton_too_large(model)) {
        experts.inner_steps = INIT_GRADIENT_STEPS;
        experts.step = moe_safe_expert_step(model, settings);
    }
    moe_expert_mstep_report ignored = MOE_EXPERT_MSTEP_REPORT_INIT;
    /* Every expert first takes the pooled fit, so one left empty by the partition still
       starts from sensible values. */
    for (size_t i = 0; i < n * K; ++i)
        resp[i] = 1.0 / (double)K;
    if (settings->update_experts)
        status = model->family_ops->m_step(model, data, resp, &experts, &ignored, message);
    if (status != MOE_OK)
        return status;
    double floor = (1.0 - INIT_CONFIDENCE) / (double)K;
    /* Gaussian experts fit their own cluster exactly; classification experts on a hard
       cluster would often be separated, so they see the softened partition like the gate. */
    int soften = !model->family_ops->has_variance;
    for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < K; ++k) {
            double hard = labels[i] == k ? 1.0 : 0.0;
            resp[i * K + k] = soften ? INIT_CONFIDENCE * hard + floor : hard;
        }
    /* Only the M-steps that make the starting point report (separation above all: a fit
       that starts separated stays so under gradient estimators, whose steps report none). */
    moe_expert_mstep_report starting = MOE_EXPERT_MSTEP_REPORT_INIT;
    if (settings->update_experts)
        status = model->family_ops->m_step(model, data, resp, &experts, &starting, message);
    context->fitter->report.separation_events += starting.separations;
    if (status != MOE_OK)
        return status;
    if (!soften)
        for (size_t i = 0; i < n * K; ++i)
            resp[i] = INIT_CONFIDENCE * resp[i] + floor;
    memset(model->gate, 0, moe_gate_size(model) * sizeof(double));
    if (newton_too_large(model, K - 1))
        return moe_gate_gradient_steps(model, data, resp, settings->gate.l2, settings->threads,
                                       INIT_GRADIENT_STEPS,
                                       moe_safe_gate_step(model, settings), message);
    moe_gate_report gate = MOE_GATE_REPORT_INIT;
    moe_gate_options start_gate = settings->gate;
    if (start_gate.max_newton > INIT_GATE_NEWTON_STEPS)
        start_gate.max_newton = INIT_GATE_NEWTON_STEPS;
    status = moe_gate_newton(model, data, resp, &start_gate, &gate, message);
    context->fitter->report.separation_events += gate.separations;
    return status;
}

static moe_status evaluate(struct moe_fit_context *context, const moe_iterative_method *method,
                           const moe_fit_settings *settings, double *resp, size_t iteration,
                           moe_posterior_result *posterior)
{
    if (method->evaluate != NULL)
        return method->evaluate(method->state, context, settings, resp, iteration, posterior);
    return moe_posterior_pass(context->model, &context->data, resp, settings->threads,
                              posterior, context->fitter->message);
}

typedef struct restart_outcome {
    double objective;
    int converged;
} restart_outcome;

static moe_status run_restart(struct moe_fit_context *context, const moe_iterative_method *method,
                              const moe_fit_settings *settings, size_t restart, double *resp,
                              restart_outcome *outcome)
{
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    moe_posterior_result posterior;
    outcome->objective = -INFINITY;
    outcome->converged = 0;
    moe_status status = evaluate(context, method, settings, resp, 0, &posterior);
    if (status != MOE_OK)
        return status;
    if (!isfinite(posterior.loglik))
        return moe_fail(fitter->message, MOE_ERR_NUMERICAL,
                        "restart %zu: log-likelihood at the starting point is not finite",
                        restart);
    double previous = moe_fit_objective(model, settings, posterior.loglik);
    outcome->objective = previous;
    status = moe_context_iteration(context, restart, 0, posterior.loglik);
    if (status != MOE_OK)
        return status;
    for (size_t t = 1; t <= settings->max_iter; ++t) {
        status = method->iterate(method->state, context, settings, resp, previous, restart, t);
        if (status != MOE_OK)
            return status;
        status = evaluate(context, method, settings, resp, t, &posterior);
        if (status != MOE_OK)
            return status;
        if (!isfinite(posterior.loglik))
            return moe_fail(fitter->message, MOE_ERR_NUMERICAL,
                            "restart %zu iteration %zu: log-likelihood is not finite", restart,
                            t);
        double current = moe_fit_objective(model, settings, posterior.loglik);
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

moe_status moe_iterative_fit(struct moe_fit_context *context, const moe_iterative_method *method)
{
    struct moe_fitter *fitter = context->fitter;
    struct moe_model *model = context->model;
    size_t n = context->data.n, K = model->n_experts;
    moe_fit_settings settings;
    read_settings(fitter, &context->data, &settings);
    double *resp = moe_alloc_array(n, K, sizeof(double));
    moe_label *labels = moe_alloc_array(n, 1, sizeof(moe_label));
    struct moe_model *start = NULL, *best = NULL;
    moe_status status = MOE_OK;
    if (resp == NULL || labels == NULL) {
        status = moe_fail(fitter->message, MOE_ERR_OUT_OF_MEMORY,
                          "cannot allocate %zu x %zu responsibilities", n, K);
        goto done;
    }
    if ((status = moe_model_clone(&start, model)) != MOE_OK ||
        (status = moe_model_clone(&best, model)) != MOE_OK) {
        moe_fail_propagate(fitter->message, status);
        goto done;
    }
    if ((method->needs_safe_steps || start_needs_steps(model)) &&
        (status = moe_design_lambda_max(&context->data, settings.total_weight, &settings.lambda,
                                        fitter->message)) != MOE_OK)
        goto done;
    double best_objective = -INFINITY;
    int best_converged = 0, have_best = 0;
    size_t best_restart = 0;
    moe_status last_failure = MOE_OK;
    char failure_message[MOE_MESSAGE_SIZE] = "";
    for (size_t restart = 0; restart < settings.n_init; ++restart) {
        restart_outcome outcome = {-INFINITY, 0};
        status = initialise(context, &settings, restart, start, resp, labels);
        if (status == MOE_OK)
            status = run_restart(context, method, &settings, restart, resp, &outcome);
        /* A cancelled restart still offers its current parameters as a candidate. */
        if ((status == MOE_OK || status == MOE_ERR_CANCELLED) && outcome.objective > best_objective) {
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
    free(resp);
    free(labels);
    moe_model_free(start);
    moe_model_free(best);
    return status;
}
