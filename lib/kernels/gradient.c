#include "kernels/gradient.h"
#include "common/alloc.h"
#include "common/combine.h"
#include "common/inputs.h"
#include "common/linalg.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

moe_status moe_design_gram(const moe_data *data, double total_weight, double *gram,
                           char *message)
{
    size_t p = moe_data_inputs(data);
    double *block = moe_alloc_array(MOE_BLOCK_ROWS, p, sizeof(double));
    double *scratch = moe_alloc_array(MOE_BLOCK_ROWS, p, sizeof(double));
    double *weights = moe_alloc_array(MOE_BLOCK_ROWS, 1, sizeof(double));
    moe_status status = MOE_OK;
    memset(gram, 0, p * p * sizeof(double));
    if (!block || !scratch || !weights)
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a Gram pass");
    for (size_t start = 0; status == MOE_OK && start < data->n; start += MOE_BLOCK_ROWS) {
        size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(data, start, rows, block);
        for (size_t i = 0; i < rows; ++i)
            weights[i] = moe_data_weight(data, start + i) / total_weight;
        moe_weighted_gram_add(rows, p, block, weights, scratch, gram);
    }
    /* A combined fit's workers add their Grams (common/combine.h), a failure included. */
    size_t ignored = 0;
    status = moe_combine_pass(gram, p * p, status, 0, &ignored, message);
    if (status == MOE_OK)
        moe_symmetrize_upper(p, gram);
    free(block);
    free(scratch);
    free(weights);
    return status;
}

moe_status moe_design_lambda_max(const moe_data *data, double total_weight, double *lambda,
                                 char *message)
{
    /* Power iteration would give a lower bound on lambda, hence a step that may be unsafe;
       the eigensolver's O(p^3) is small next to the O(n p^2) Gram. */
    size_t p = moe_data_inputs(data);
    double *gram = moe_alloc_array(p, p, sizeof(double));
    double *values = moe_alloc_array(p, 1, sizeof(double));
    double *vector = moe_alloc_array(p, 1, sizeof(double));
    lapack_int *support = moe_alloc_array(2, p, sizeof(lapack_int));
    moe_status status = MOE_OK;
    if (!gram || !values || !vector || !support) {
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                          "cannot allocate the %zu x %zu design Gram matrix", p, p);
        goto done;
    }
    if ((status = moe_design_gram(data, total_weight, gram, message)) != MOE_OK)
        goto done;
    lapack_int found = 0;
    lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', 'I', 'U', (lapack_int)p, gram,
                                     (lapack_int)p, 0.0, 0.0, (lapack_int)p, (lapack_int)p, 0.0,
                                     &found, values, vector, 1, support);
    if (info != 0 || found != 1 || !isfinite(values[0])) {
        status = moe_fail(message, MOE_ERR_NUMERICAL,
                          "the largest eigenvalue of the design Gram matrix was not found "
                          "(LAPACK info %d)",
                          (int)info);
        goto done;
    }
    *lambda = values[0] > 0.0 ? values[0] : 0.0;
done:
    free(gram);
    free(values);
    free(vector);
    free(support);
    return status;
}

static double safe_step(double curvature, double penalty)
{
    double bound = curvature + penalty;
    return bound > 0.0 ? 1.0 / bound : 1.0;
}

double moe_safe_gate_step(const struct moe_model *model, const moe_fit_settings *settings,
                          double lambda)
{
    double factor = model->n_experts == 2 ? 0.25 : 0.5;
    return safe_step(factor * lambda, settings->gate.l2);
}

double moe_safe_expert_step(const struct moe_model *model, const moe_fit_settings *settings,
                            double lambda)
{
    return safe_step(model->family_ops->curvature(model) * lambda, settings->experts.ridge);
}

moe_status moe_gradient_parts_allocate(moe_gradient_parts *gradient,
                                       const struct moe_model *model, int with_experts,
                                       int with_variances, int with_degrees, char *message)
{
    memset(gradient, 0, sizeof *gradient);
    size_t K = model->n_experts, p = model->n_inputs;
    gradient->gate_size = (K - 1) * p;
    gradient->experts_size = with_experts ? K * model->expert_rows * p : 0;
    gradient->variances_size =
        with_experts && with_variances && model->variances != NULL ? K : 0;
    gradient->gate = moe_alloc_array(gradient->gate_size + 1, 1, sizeof(double));
    gradient->experts = moe_alloc_array(gradient->experts_size + 1, 1, sizeof(double));
    gradient->degrees_size = with_experts && with_degrees && model->degrees != NULL &&
                                     model->family_ops->degrees_gradient != NULL
                                 ? K
                                 : 0;
    if (gradient->variances_size > 0)
        gradient->log_variances = moe_alloc_array(K, 1, sizeof(double));
    if (gradient->degrees_size > 0)
        gradient->log_degrees = moe_alloc_array(K, 1, sizeof(double));
    if (gradient->gate == NULL || gradient->experts == NULL ||
        (gradient->variances_size > 0 && gradient->log_variances == NULL) ||
        (gradient->degrees_size > 0 && gradient->log_degrees == NULL)) {
        moe_gradient_parts_free(gradient);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a gradient");
    }
    return MOE_OK;
}

void moe_gradient_parts_free(moe_gradient_parts *gradient)
{
    free(gradient->gate);
    free(gradient->experts);
    free(gradient->log_variances);
    free(gradient->log_degrees);
    memset(gradient, 0, sizeof *gradient);
}

moe_status moe_gradient_parts_compute(const struct moe_model *model, const moe_data *data,
                                      const double *resp, const moe_fit_settings *settings,
                                      double total_weight, moe_gradient_parts *gradient,
                                      char *message)
{
    moe_status status = MOE_OK;
    if (model->n_experts > 1)
        status = moe_gate_gradient(model, data, resp, settings->gate.l2, settings->threads,
                                   gradient->gate, message);
    if (status == MOE_OK && gradient->experts_size > 0)
        status = model->family_ops->gradient(model, data, resp, settings->experts.ridge,
                                             total_weight, settings->threads, gradient->experts,
                                             gradient->log_variances, message);
    /* The coefficients of inputs the experts do not see stay where they are held. */
    if (status == MOE_OK && gradient->experts_size > 0)
        moe_inputs_zero(model->n_experts * model->expert_rows, model->n_inputs,
                        model->expert_inputs, gradient->experts);
    if (status == MOE_OK && gradient->degrees_size > 0)
        status = model->family_ops->degrees_gradient(model, data, resp, total_weight,
                                                     settings->threads, gradient->log_degrees,
                                                     message);
    return status;
}

double moe_gradient_parts_apply(struct moe_model *model, const struct moe_model *from,
                                const moe_gradient_parts *gradient, double gate_step,
                                double expert_step, double scale, double variance_floor,
                                size_t *floored)
{
    double decrease = 0.0;
    for (size_t a = 0; a < gradient->gate_size; ++a) {
        model->gate[a] = from->gate[a] - scale * gate_step * gradient->gate[a];
        decrease += scale * gate_step * gradient->gate[a] * gradient->gate[a];
    }
    for (size_t a = 0; a < gradient->experts_size; ++a) {
        model->experts[a] = from->experts[a] - scale * expert_step * gradient->experts[a];
        decrease += scale * expert_step * gradient->experts[a] * gradient->experts[a];
    }
    for (size_t k = 0; k < gradient->variances_size; ++k) {
        double change = gradient->log_variances[k];
        change = change > 1.0 ? 1.0 : change < -1.0 ? -1.0 : change;
        double variance = from->variances[k] * exp(-scale * change);
        decrease += scale * change * gradient->log_variances[k];
        if (!(variance >= variance_floor)) {
            variance = variance_floor;
            if (floored != NULL)
                (*floored)++;
        }
        model->variances[k] = variance;
    }
    for (size_t k = 0; k < gradient->degrees_size; ++k) {
        double change = gradient->log_degrees[k];
        change = change > 1.0 ? 1.0 : change < -1.0 ? -1.0 : change;
        double nu = from->degrees[k] * exp(-scale * change);
        decrease += scale * change * gradient->log_degrees[k];
        model->degrees[k] = nu < MOE_DEGREES_MIN ? MOE_DEGREES_MIN
                            : nu > MOE_DEGREES_MAX ? MOE_DEGREES_MAX
                                                   : nu;
    }
    return decrease;
}

/* ---- The public gradient and safe steps ------------------------------------------------ */

struct moe_gradient {
    moe_gradient_parts parts;
};

moe_status moe_context_safe_steps(moe_fit_context *context, const moe_model_t *model,
                                  double *expert_step, double *gate_step)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate the fit's settings");
    moe_status status = moe_context_check_model(context, model);
    double lambda = 0.0;
    if (status == MOE_OK)
        status = moe_context_lambda(context, &lambda);
    if (status != MOE_OK)
        return status;
    if (expert_step != NULL)
        *expert_step = moe_safe_expert_step(model, settings, lambda);
    if (expert_step != NULL && model->family_ops->data_curvature != NULL)
        *expert_step = safe_step(model->family_ops->data_curvature(model, &context->data) * lambda,
                                 settings->experts.ridge);
    if (gate_step != NULL)
        *gate_step = moe_safe_gate_step(model, settings, lambda);
    return MOE_OK;
}

moe_status moe_gradient_create(moe_fit_context *context, moe_gradient_t **out)
{
    if (out != NULL)
        *out = NULL;
    if (context == NULL || out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", context ? "out" : "context");
    struct moe_gradient *gradient = calloc(1, sizeof *gradient);
    if (gradient == NULL)
        return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate a gradient");
    const long long *options = context->options.integer;
    moe_status status = moe_gradient_parts_allocate(
        &gradient->parts, context->model, options[MOE_OPT_UPDATE_EXPERTS] != 0,
        options[MOE_OPT_UPDATE_VARIANCE] != 0, options[MOE_OPT_UPDATE_DEGREES] != 0,
        context->message);
    if (status != MOE_OK) {
        free(gradient);
        return status;
    }
    *out = gradient;
    return MOE_OK;
}

void moe_gradient_free(moe_gradient_t *gradient)
{
    if (gradient == NULL)
        return;
    moe_gradient_parts_free(&gradient->parts);
    free(gradient);
}

moe_status moe_gradient_compute(moe_fit_context *context, moe_gradient_t *gradient,
                                const moe_model_t *model, const moe_rows *rows,
                                const double *resp)
{
    if (context == NULL || gradient == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL",
                        context ? "gradient" : "context");
    char *message = context->message;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    moe_data data;
    moe_status status = moe_context_check_model(context, model);
    if (status == MOE_OK)
        status = moe_context_resolve_rows(context, rows, &data);
    if (status != MOE_OK)
        return status;
    if (resp == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "resp is NULL");
    if (data.n == 0 || data.y == NULL)
        return moe_fail(message, MOE_ERR_EMPTY_INPUT, "a gradient needs rows with responses");
    return moe_gradient_parts_compute(model, &data, resp, settings,
                                      moe_data_total_weight(&data), &gradient->parts, message);
}

moe_status moe_gradient_step(moe_fit_context *context, const moe_gradient_t *gradient,
                             moe_model_t *model, const moe_model_t *from, double gate_step,
                             double expert_step, double scale, double *predicted_decrease,
                             size_t *floored)
{
    if (context == NULL || gradient == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL",
                        context ? "gradient" : "context");
    char *message = context->message;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    moe_status status = moe_context_check_model(context, model);
    if (status == MOE_OK)
        status = moe_context_check_model(context, from);
    if (status != MOE_OK)
        return status;
    if (!(gate_step >= 0.0 && expert_step >= 0.0 && scale >= 0.0) || !isfinite(gate_step) ||
        !isfinite(expert_step) || !isfinite(scale))
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "steps and scale must be finite and >= 0, got %g, %g, %g", gate_step,
                        expert_step, scale);
    size_t count = 0;
    double decrease =
        moe_gradient_parts_apply(model, from, &gradient->parts, gate_step, expert_step, scale,
                                 settings->experts.variance_floor, &count);
    if (predicted_decrease != NULL)
        *predicted_decrease = decrease;
    if (floored != NULL)
        *floored = count;
    return MOE_OK;
}

static size_t gradient_length(const moe_gradient_t *gradient)
{
    const moe_gradient_parts *parts = &gradient->parts;
    return parts->gate_size + parts->experts_size + parts->variances_size + parts->degrees_size;
}

moe_status moe_gradient_values(const moe_gradient_t *gradient, double *values, size_t capacity,
                               size_t *length)
{
    if (length != NULL)
        *length = 0;
    if (gradient == NULL || length == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL",
                        gradient == NULL ? "gradient" : "length");
    size_t size = gradient_length(gradient);
    *length = size;
    if (values == NULL && capacity == 0)
        return MOE_OK;
    if (values == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "values is NULL");
    if (capacity < size)
        return moe_fail(NULL, MOE_ERR_BUFFER_TOO_SMALL,
                        "the gradient has %zu values, the buffer %zu", size, capacity);
    const moe_gradient_parts *parts = &gradient->parts;
    memcpy(values, parts->gate, parts->gate_size * sizeof(double));
    if (parts->experts_size > 0)
        memcpy(values + parts->gate_size, parts->experts, parts->experts_size * sizeof(double));
    if (parts->variances_size > 0)
        memcpy(values + parts->gate_size + parts->experts_size, parts->log_variances,
               parts->variances_size * sizeof(double));
    if (parts->degrees_size > 0)
        memcpy(values + parts->gate_size + parts->experts_size + parts->variances_size,
               parts->log_degrees, parts->degrees_size * sizeof(double));
    return MOE_OK;
}

moe_status moe_gradient_set_values(moe_gradient_t *gradient, const double *values, size_t length)
{
    if (gradient == NULL || values == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL",
                        gradient == NULL ? "gradient" : "values");
    size_t size = gradient_length(gradient);
    if (length != size)
        return moe_fail(NULL, MOE_ERR_DIMENSION, "the gradient has %zu values, got %zu", size,
                        length);
    for (size_t i = 0; i < size; ++i)
        if (!isfinite(values[i]))
            return moe_fail(NULL, MOE_ERR_NON_FINITE, "value %zu is not finite", i);
    moe_gradient_parts *parts = &gradient->parts;
    memcpy(parts->gate, values, parts->gate_size * sizeof(double));
    if (parts->experts_size > 0)
        memcpy(parts->experts, values + parts->gate_size, parts->experts_size * sizeof(double));
    if (parts->variances_size > 0)
        memcpy(parts->log_variances, values + parts->gate_size + parts->experts_size,
               parts->variances_size * sizeof(double));
    if (parts->degrees_size > 0)
        memcpy(parts->log_degrees,
               values + parts->gate_size + parts->experts_size + parts->variances_size,
               parts->degrees_size * sizeof(double));
    return MOE_OK;
}
