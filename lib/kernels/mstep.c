/*
 * The public M-step kernels: the experts' update through their family (exact, from E-step
 * statistics, or by inner gradient steps), and the gate's Newton solve, gradient steps,
 * gradient and fixed-curvature bound step.
 */
#include "kernels/kernels.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

/* kernels/estep.c: the expert statistics of the last run, if it summed them. */
double *moe_estep_expert_statistics(const moe_estep_t *estep, const moe_data **data);

/* The common entry of the kernels that change a model with rows and responsibilities. The
   gate's kernels need x and the responsibilities only: an aggregation's support rows may
   come without responses. */
static moe_status entry(moe_fit_context *context, const moe_model_t *model, const moe_rows *rows,
                        const double *resp, const moe_fit_settings **settings, moe_data *data,
                        int needs_response)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    char *message = context->message;
    *settings = moe_context_settings(context);
    if (*settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    moe_status status = moe_context_check_model(context, model);
    if (status == MOE_OK)
        status = moe_context_resolve_rows(context, rows, data);
    if (status != MOE_OK)
        return status;
    if (resp == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "resp is NULL");
    if (data->n == 0 || (needs_response && data->y == NULL))
        return moe_fail(message, MOE_ERR_EMPTY_INPUT, "an M-step needs rows with responses");
    return MOE_OK;
}

moe_status moe_context_update_experts(moe_fit_context *context, moe_model_t *model,
                                      const moe_rows *rows, const double *resp,
                                      const moe_estep_t *statistics, size_t inner_steps,
                                      double step)
{
    const moe_fit_settings *settings = NULL;
    moe_data data;
    moe_status status = entry(context, model, rows, resp, &settings, &data, 1);
    if (status != MOE_OK)
        return status;
    char *message = context->message;
    if (!(step >= 0.0))
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT, "step must be >= 0, got %g", step);
    moe_expert_mstep_options options = settings->experts;
    options.total_weight = moe_data_total_weight(&data);
    options.inner_steps = inner_steps;
    if (inner_steps > 0) {
        if (step == 0.0)
            status = moe_context_safe_steps(context, model, &step, NULL);
        if (status != MOE_OK)
            return status;
        options.step = step;
    }
    moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
    const moe_data *summed = NULL;
    double *sums = inner_steps == 0 ? moe_estep_expert_statistics(statistics, &summed) : NULL;
    if (sums != NULL && model->family_ops->solve_statistics != NULL)
        status = model->family_ops->solve_statistics(model, summed, resp, sums, &options,
                                                     &report, message);
    else
        status = model->family_ops->m_step(model, &data, resp, &options, &report, message);
    moe_report_expert_mstep(context, &report);
    return status;
}

moe_status moe_context_gate_newton(moe_fit_context *context, moe_model_t *model,
                                   const moe_rows *rows, const double *resp, size_t max_steps)
{
    const moe_fit_settings *settings = NULL;
    moe_data data;
    moe_status status = entry(context, model, rows, resp, &settings, &data, 0);
    if (status != MOE_OK)
        return status;
    moe_gate_options options = settings->gate;
    if (max_steps > 0)
        options.max_newton = max_steps;
    if (settings->gate_hessian_free &&
        (status = moe_context_gate_curvature(context, settings, &options.curvature)) != MOE_OK)
        return status;
    moe_gate_report report = MOE_GATE_REPORT_INIT;
    status = moe_gate_newton(model, &data, resp, &options, &report, context->message);
    moe_report_gate(context, &report);
    return status;
}

moe_status moe_context_gate_gradient_steps(moe_fit_context *context, moe_model_t *model,
                                           const moe_rows *rows, const double *resp,
                                           size_t steps, double step)
{
    const moe_fit_settings *settings = NULL;
    moe_data data;
    moe_status status = entry(context, model, rows, resp, &settings, &data, 0);
    if (status != MOE_OK)
        return status;
    if (!(step >= 0.0))
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "step must be >= 0, got %g", step);
    if (step == 0.0 && (status = moe_context_safe_steps(context, model, NULL, &step)) != MOE_OK)
        return status;
    return moe_gate_gradient_steps(model, &data, resp, settings->gate.l2, settings->threads,
                                   steps, step, context->message);
}

moe_status moe_context_gate_gradient(moe_fit_context *context, const moe_model_t *model,
                                     const moe_rows *rows, const double *resp,
                                     double *gradient, size_t length)
{
    const moe_fit_settings *settings = NULL;
    moe_data data;
    moe_status status = entry(context, model, rows, resp, &settings, &data, 0);
    if (status != MOE_OK)
        return status;
    size_t m = (model->n_experts - 1) * model->n_inputs;
    if (gradient == NULL && m > 0)
        return moe_fail(context->message, MOE_ERR_NULL_POINTER, "gradient is NULL");
    if (length < m)
        return moe_fail(context->message, MOE_ERR_DIMENSION,
                        "gradient holds %zu values, %zu needed", length, m);
    return moe_gate_gradient(model, &data, resp, settings->gate.l2, settings->threads, gradient,
                             context->message);
}

moe_status moe_context_gate_curvature(moe_fit_context *context,
                                     const moe_fit_settings *settings, const double **curvature)
{
    if (context->gate_curvature == NULL) {
        const struct moe_model *model = context->model;
        size_t p = model->n_inputs;
        double *matrix = moe_alloc_array(p, p, sizeof(double));
        if (matrix == NULL)
            return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                            "cannot allocate the gate's curvature bound");
        moe_status status = moe_design_gram(&context->data, settings->total_weight, matrix,
                                            context->message);
        if (status != MOE_OK) {
            free(matrix);
            return status;
        }
        for (size_t a = 0; a < p * p; ++a)
            matrix[a] *= 0.5;
        for (size_t j = (size_t)model->intercept; j < p; ++j)
            matrix[j * p + j] += settings->gate.l2;
        moe_inputs_restrict_step(1, p, model->gate_inputs, matrix, NULL);
        context->gate_curvature = matrix;
    }
    *curvature = context->gate_curvature;
    return MOE_OK;
}

moe_status moe_context_gate_bound_step(moe_fit_context *context, moe_model_t *model,
                                       const double *gradient, size_t length)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    char *message = context->message;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    moe_status status = moe_context_check_model(context, model);
    if (status != MOE_OK)
        return status;
    size_t p = model->n_inputs, m = (model->n_experts - 1) * p;
    if (m == 0)
        return MOE_OK;
    if (gradient == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "gradient is NULL");
    if (length < m)
        return moe_fail(message, MOE_ERR_DIMENSION, "gradient holds %zu values, %zu needed",
                        length, m);
    const double *curvature = NULL;
    if ((status = moe_context_gate_curvature(context, settings, &curvature)) != MOE_OK)
        return status;
    double *copy = moe_alloc_array(m, 1, sizeof(double));
    double *work = moe_alloc_array(p, p + 2, sizeof(double));
    if (copy == NULL || work == NULL)
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a bound step");
    else {
        memcpy(copy, gradient, m * sizeof(double));
        status = moe_gate_bound_apply(model, copy, curvature, work, message);
    }
    free(copy);
    free(work);
    return status;
}
