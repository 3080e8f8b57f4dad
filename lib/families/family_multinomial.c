/*
 * Multinomial (softmax) experts: P(y = c | x, expert k) = softmax_c(B_k x~),
 * y in {0, ..., C-1}, B_k a C x p block whose last row is the zero reference.
 * The M-step and gradient are the shared softmax-regression code
 * (families/family_categorical.c); this file holds what is multiclass-specific.
 */
#include "families/family_categorical.h"
#include "common/check.h"
#include "common/linalg.h"

#include <math.h>
#include <string.h>

static int multinomial_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY;
}

static size_t multinomial_expert_free_params(const struct moe_model *model)
{
    return (model->n_classes - 1) * moe_expert_free_inputs(model);
}

/* Subtracting the reference row from every row of a block leaves the softmax unchanged. */
static int multinomial_normalize_experts(const struct moe_model *model, double *experts)
{
    size_t p = model->n_inputs, C = model->n_classes;
    /* Check every block before changing any, so that a failure leaves experts as it was. */
    for (size_t k = 0; k < model->n_experts; ++k) {
        const double *block = experts + k * C * p, *reference = block + (C - 1) * p;
        for (size_t c = 0; c + 1 < C; ++c)
            for (size_t j = 0; j < p; ++j)
                if (!isfinite(block[c * p + j] - reference[j]))
                    return -1;
    }
    for (size_t k = 0; k < model->n_experts; ++k)
        moe_rows_rereference(experts + k * C * p, C, p);
    return 0;
}

static moe_status multinomial_check_response(const struct moe_model *model, size_t n,
                                             const double *X, size_t ldx, const double *y,
                                             char *message)
{
    (void)X;
    (void)ldx;
    return moe_check_class_labels(message, n, y, model->n_classes, "multinomial");
}

/* Log class probabilities of every expert: log_proba is rows x (K * C). */
static void expert_log_proba(const struct moe_model *model, size_t rows, const double *block,
                             double *log_proba)
{
    size_t C = model->n_classes;
    moe_expert_linear(model, rows, block, log_proba);
    for (size_t a = 0; a < rows * model->n_experts; ++a)
        moe_log_softmax(log_proba + a * C, C);
}

static void multinomial_log_density(const struct moe_model *model, size_t rows,
    const double *columns, const double *logits, const double *y, double *out,
                                    double *scratch)
{
    (void)columns;
    size_t K = model->n_experts, C = model->n_classes;
    /* expert k's class c logits are row k C + c of the columns */
    for (size_t k = 0; k < K; ++k)
        for (size_t i = 0; i < rows; ++i) {
            double *row = scratch;
            for (size_t c = 0; c < C; ++c)
                row[c] = logits[(k * C + c) * rows + i];
            moe_log_softmax(row, C);
            out[k * rows + i] = row[(size_t)y[i]];
        }
}

static size_t multinomial_prediction_width(const struct moe_model *model)
{
    return model->n_classes;
}

/* P(y = c | x) = sum_k pi_k(x) softmax_c(B_k x~): out is rows x C. */
static void multinomial_predict(const struct moe_model *model, size_t rows, const double *block,
                                const double *gate_proba, double *out, double *scratch)
{
    size_t K = model->n_experts, C = model->n_classes;
    expert_log_proba(model, rows, block, scratch);
    for (size_t i = 0; i < rows; ++i)
        for (size_t c = 0; c < C; ++c) {
            double sum = 0.0;
            for (size_t k = 0; k < K; ++k)
                sum += gate_proba[i * K + k] * moe_exp(scratch[(i * K + k) * C + c]);
            out[i * C + c] = sum;
        }
}

static double multinomial_curvature(const struct moe_model *model)
{
    (void)model;
    return 0.5; /* Boehning: the softmax Hessian is below (I - 11'/C) / 2 */
}

const struct moe_family_ops moe_family_multinomial = {
    .id = MOE_FAMILY_MULTINOMIAL,
    .name = "multinomial",
    .description = "C classes: multinomial logistic regression",
    .uses_classes = 1,
    .has_variance = 0,
    .supports_link = multinomial_supports_link,
    .information_terms = moe_categorical_information_terms,
    .expert_free_params = multinomial_expert_free_params,
    .normalize_experts = multinomial_normalize_experts,
    .check_response = multinomial_check_response,
    .log_density = multinomial_log_density,
    .prediction_width = multinomial_prediction_width,
    .predict = multinomial_predict,
    .m_step = moe_categorical_m_step,
    .gradient = moe_categorical_gradient,
    .curvature = multinomial_curvature,
};
