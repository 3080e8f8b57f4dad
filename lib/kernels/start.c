/*
 * Starting points (moe_context_start): the caller's model, a hard partition of the rows
 * (k-means++ or random, kernels/init.c) turned into parameters by M-steps, the tensor
 * estimator's fit (init = tensor, kernels/start_tensor.c), or the best candidates of the
 * search over many short runs (init = mixed, kernels/start_search.c).
 */
#include "kernels/kernels.h"
#include "common/alloc.h"
#include "common/rng.h"
#include "kernels/init.h"
#include "kernels/start_search.h"
#include "pass/softmax.h"

#include <stdlib.h>
#include <string.h>

/* Share of the one-hot label kept when the initial partition trains the gate (and
   classification experts): a hard partition is often separable and would send the weights
   to infinity. */
#define INIT_CONFIDENCE 0.8
/* Newton steps of the starting gate. Its targets are a softened hard partition that the first
   E-step replaces, so solving them to gate_tol buys nothing (bench/RESULTS.md: two steps keep
   the iterations and the optimum of a full solve; one step found a slightly worse one). */
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

int moe_start_newton_too_large(const struct moe_model *model)
{
    return newton_too_large(model, model->n_experts - 1) || expert_newton_too_large(model);
}

/* init = custom: the caller's function writes the start through the model's setters. */
static moe_status custom_start(moe_fit_context *context, struct moe_model *model, size_t restart)
{
    char *message = context->message;
    if (context->start_function == NULL)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "init = custom needs a start function (moe_fitter_set_start)");
    moe_rows rows;
    moe_context_rows(context, &rows);
    message[0] = '\0';
    moe_status status = context->start_function(context->start_data, model, restart, &rows);
    if (status != MOE_OK && message[0] == '\0')
        moe_fail(message, status, "the start function failed at restart %zu: %s",
                 restart, moe_strerror(status));
    return status;
}

moe_expert_mstep_options moe_start_expert_options(const moe_fit_settings *settings,
                                                  const moe_data *data)
{
    /* On a sample of the call's rows the ridge's N and the degenerate expert's weight are
       the sample's: the same penalty per unit weight. On the call's rows the ratio is 1. */
    moe_expert_mstep_options experts = settings->experts;
    double ratio = moe_data_total_weight(data) / settings->total_weight;
    experts.total_weight *= ratio;
    experts.min_weight *= ratio;
    return experts;
}

moe_status moe_start_point(moe_fit_context *context, struct moe_model *model, size_t restart,
                           const moe_data *data, double *resp, moe_label *labels)
{
    char *message = context->message;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    size_t K = model->n_experts;
    moe_model_copy_parameters(model, context->start);
    if (settings->init == MOE_INIT_MODEL && restart == 0)
        return MOE_OK;
    if (settings->init == MOE_INIT_CUSTOM)
        return custom_start(context, model, restart);
    if (settings->init == MOE_INIT_TENSOR)
        return moe_tensor_start(context, model, restart);
    /* Systems too large for Newton steps have no exact M-steps to search with: such fits
       start as init = kmeans does (below). */
    if (settings->init == MOE_INIT_MIXED && !moe_start_newton_too_large(model))
        return moe_start_search_take(context, model, restart, data, resp, labels);
    moe_init_strategy strategy =
        settings->init == MOE_INIT_RANDOM ? MOE_INIT_RANDOM : MOE_INIT_KMEANS;
    moe_rng rng;
    moe_rng_seed(&rng, settings->seed, restart);
    /* A class label is no coordinate: k-means on it as a number would split the data by
       label rather than by region, so classification experts cluster on x alone. */
    int use_response = model->family_ops->numeric_response;
    moe_status status = moe_init_partition(strategy, data, K, use_response, &rng, labels, message);
    if (status != MOE_OK)
        return status;
    return moe_start_from_labels(context, model, data, resp, labels);
}

moe_status moe_start_from_labels(moe_fit_context *context, struct moe_model *model,
                                 const moe_data *data, double *resp, const moe_label *labels)
{
    char *message = context->message;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    size_t K = model->n_experts, n = data->n;
    moe_status status = MOE_OK;
    /* Starting points take exact M-steps whatever the estimator's inner steps are, unless a
       Newton system would be too large; then a fixed number of safe gradient steps. */
    moe_expert_mstep_options experts = moe_start_expert_options(settings, data);
    experts.inner_steps = 0;
    if (expert_newton_too_large(model)) {
        experts.inner_steps = INIT_GRADIENT_STEPS;
        if ((status = moe_context_safe_steps(context, model, &experts.step, NULL)) != MOE_OK)
            return status;
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
    context->report->separation_events += starting.separations;
    if (status != MOE_OK)
        return status;
    if (!soften)
        for (size_t i = 0; i < n * K; ++i)
            resp[i] = INIT_CONFIDENCE * resp[i] + floor;
    memset(model->gate, 0, moe_gate_size(model) * sizeof(double));
    if (newton_too_large(model, K - 1)) {
        double step = 0.0;
        if ((status = moe_context_safe_steps(context, model, NULL, &step)) != MOE_OK)
            return status;
        return moe_gate_gradient_steps(model, data, resp, settings->gate.l2, settings->threads,
                                       INIT_GRADIENT_STEPS, step, message);
    }
    moe_gate_report gate = MOE_GATE_REPORT_INIT;
    moe_gate_options start_gate = settings->gate;
    if (start_gate.max_newton > INIT_GATE_NEWTON_STEPS)
        start_gate.max_newton = INIT_GATE_NEWTON_STEPS;
    if (settings->gate_hessian_free &&
        (status = moe_context_gate_curvature(context, settings, &start_gate.curvature)) != MOE_OK)
        return status;
    status = moe_gate_newton(model, data, resp, &start_gate, &gate, message);
    context->report->separation_events += gate.separations;
    return status;
}

moe_status moe_context_start_rows(moe_fit_context *context, moe_model_t *model, size_t restart,
                                  const moe_rows *rows)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    char *message = context->message;
    moe_status status = moe_context_check_model(context, model);
    moe_data data;
    if (status == MOE_OK)
        status = moe_context_resolve_rows(context, rows, &data);
    if (status != MOE_OK)
        return status;
    if (data.n == 0 || data.y == NULL)
        return moe_fail(message, MOE_ERR_EMPTY_INPUT, "a starting point needs rows with "
                                                      "responses");
    double *resp = moe_alloc_array(data.n, model->n_experts, sizeof(double));
    moe_label *labels = moe_alloc_array(data.n, 1, sizeof(moe_label));
    if (resp == NULL || labels == NULL)
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate %zu x %zu "
                                                          "responsibilities",
                          data.n, model->n_experts);
    else
        status = moe_start_point(context, model, restart, &data, resp, labels);
    free(resp);
    free(labels);
    return status;
}

moe_status moe_context_start(moe_fit_context *context, moe_model_t *model, size_t restart)
{
    return moe_context_start_rows(context, model, restart, NULL);
}
