#include "families/family_categorical.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/linalg.h"
#include "pass/softmax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double moe_log_sigmoid(double z)
{
    return z >= 0.0 ? -log1p(moe_exp(-z)) : z - log1p(moe_exp(z));
}

static int is_binary(const struct moe_model *model)
{
    return !model->family_ops->uses_classes;
}

static size_t softmax_classes(const struct moe_model *model)
{
    return is_binary(model) ? 2 : model->n_classes;
}

/* Expert k's softmax problem; coefficients of expert k live in a C x p buffer. */
static moe_softmax_problem expert_problem(const struct moe_model *model, const moe_data *data,
                                          const double *resp, size_t k, double ridge,
                                          double total_weight)
{
    moe_softmax_problem problem = {data,
                                   softmax_classes(model),
                                   NULL,
                                   data->y,
                                   is_binary(model),
                                   resp + k,
                                   model->n_experts,
                                   total_weight,
                                   ridge,
                                   !is_binary(model),
                                   1,
                                   model->expert_inputs,
                                   NULL};
    return problem;
}

/* Expert k's stored rows into the C x p softmax layout (the binary reference row is zero). */
static void load_expert(const struct moe_model *model, size_t k, double *buffer)
{
    size_t p = model->n_inputs, C = softmax_classes(model);
    memset(buffer, 0, C * p * sizeof(double));
    memcpy(buffer, model->experts + k * model->expert_rows * p,
           model->expert_rows * p * sizeof(double));
}

static void store_expert(struct moe_model *model, size_t k, const double *buffer)
{
    size_t p = model->n_inputs;
    memcpy(model->experts + k * model->expert_rows * p, buffer,
           model->expert_rows * p * sizeof(double));
}

/*
 * Inner gradient steps on every expert with weight at once: their problems share the rows
 * and labels, so one pass per step serves them all (moe_softmax_gradient_steps_stacked), and
 * each expert's steps are the ones it would take alone.
 */
static moe_status gradient_steps_m_step(struct moe_model *model, const moe_data *data,
                                        const double *resp,
                                        const moe_expert_mstep_options *options,
                                        moe_expert_mstep_report *report, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs, C = softmax_classes(model);
    moe_softmax_problem *problems = moe_alloc_array(K, sizeof *problems, 1);
    size_t *experts = moe_alloc_array(K, sizeof *experts, 1);
    double *stacked = moe_alloc_array(K * C, p, sizeof(double));
    moe_status status = MOE_OK;
    if (problems == NULL || experts == NULL || stacked == NULL)
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    size_t count = 0;
    for (size_t k = 0; k < K && status == MOE_OK; ++k) {
        if (!moe_expert_has_weight(data, resp, K, k, options, report))
            continue;
        problems[count] =
            expert_problem(model, data, resp, k, options->ridge, options->total_weight);
        problems[count].threads = options->threads;
        load_expert(model, k, stacked + count * C * p);
        experts[count++] = k;
    }
    if (status == MOE_OK)
        status = moe_softmax_gradient_steps_stacked(problems, count, stacked,
                                                    options->inner_steps, options->step,
                                                    message);
    for (size_t e = 0; e < count && status == MOE_OK; ++e) {
        store_expert(model, experts[e], stacked + e * C * p);
        report->newton_steps += options->inner_steps;
    }
    free(problems);
    free(experts);
    free(stacked);
    return status;
}

moe_status moe_categorical_m_step(struct moe_model *model, const moe_data *data,
                                  const double *resp, const moe_expert_mstep_options *options,
                                  moe_expert_mstep_report *report, char *message)
{
    if (options->inner_steps > 0)
        return gradient_steps_m_step(model, data, resp, options, report, message);
    size_t K = model->n_experts, p = model->n_inputs, C = softmax_classes(model);
    double *buffer = moe_alloc_array(C, p, sizeof(double));
    if (buffer == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    moe_status status = MOE_OK;
    for (size_t k = 0; k < K && status == MOE_OK; ++k) {
        if (!moe_expert_has_weight(data, resp, K, k, options, report))
            continue;
        moe_softmax_problem problem =
            expert_problem(model, data, resp, k, options->ridge, options->total_weight);
        problem.threads = options->threads;
        load_expert(model, k, buffer);
        moe_newton_options newton = {options->max_newton, options->tolerance};
        moe_newton_report outcome = {0, 0, 0, 0};
        status = moe_softmax_newton(&problem, buffer, &newton, &outcome, message);
        report->newton_steps += outcome.steps;
        report->ridge_fallbacks += outcome.ridge_fallbacks;
        report->line_search_failures += outcome.line_search_failures;
        report->separations += (size_t)outcome.separated;
        if (status == MOE_OK)
            store_expert(model, k, buffer);
    }
    free(buffer);
    return status;
}

moe_status moe_categorical_gradient(const struct moe_model *model, const moe_data *data,
                                    const double *resp, double ridge, double total_weight,
                                    size_t threads, double *coefficients, double *log_variances,
                                    char *message)
{
    (void)log_variances;
    size_t K = model->n_experts, p = model->n_inputs, C = softmax_classes(model);
    size_t rows = model->expert_rows;
    double *buffer = moe_alloc_array(C, p, sizeof(double));
    if (buffer == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert gradient");
    memset(coefficients, 0, K * rows * p * sizeof(double));
    moe_status status = MOE_OK;
    for (size_t k = 0; k < K && status == MOE_OK; ++k) {
        moe_softmax_problem problem = expert_problem(model, data, resp, k, ridge, total_weight);
        problem.threads = threads;
        load_expert(model, k, buffer);
        /* The free rows' gradient is (C - 1) x p; the reference row's stays zero. */
        status = moe_softmax_gradient(&problem, buffer, coefficients + k * rows * p, NULL,
                                      message);
    }
    free(buffer);
    return status;
}

void moe_categorical_information_terms(const struct moe_model *model, size_t k, size_t rows,
                                      const double *columns, const double *linear,
                                      const double *y, double *terms)
{
    (void)columns;
    moe_information_shape shape = moe_information_shape_of(model);
    int classes = model->family_ops->uses_classes;
    size_t R = shape.R;
    /* The class logits, the reference last (logistic: class 1 free, 0 the reference). */
    const double *logits = linear + k * model->expert_rows * rows;
    double z[257];
    for (size_t i = 0; i < rows; ++i) {
        for (size_t q = 0; q < R; ++q)
            z[q] = logits[q * rows + i];
        z[R] = 0.0;
        size_t label = classes ? (size_t)y[i] : (y[i] > 0.5 ? 0u : 1u);
        double total = moe_log_sum_exp(z, R + 1);
        for (size_t q = 0; q <= R; ++q)
            z[q] = exp(z[q] - total); /* the class probabilities */
        for (size_t q = 0; q < R; ++q)
            terms[(shape.a + q) * rows + i] = (q == label ? 1.0 : 0.0) - z[q];
        for (size_t q1 = 0, at = shape.h; q1 < R; ++q1)
            for (size_t q2 = q1; q2 < R; ++q2, ++at)
                terms[at * rows + i] = (q1 == q2 ? z[q1] : 0.0) - z[q1] * z[q2];
    }
}
