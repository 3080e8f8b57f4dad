/*
 * Binary logistic experts: P(y = 1 | x, expert k) = sigma(beta_k' x~), y in {0, 1}.
 * The M-step and gradient are the shared softmax-regression code
 * (families/family_categorical.c); this file holds what is binary-specific.
 */
#include "families/family_categorical.h"
#include "common/check.h"
#include "common/linalg.h"

#include <math.h>

static int logistic_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY;
}

static size_t logistic_expert_free_params(const struct moe_model *model)
{
    return moe_expert_free_inputs(model);
}

static moe_status logistic_check_response(const struct moe_model *model, size_t n,
                                          const double *X, size_t ldx, const double *y,
                                          char *message)
{
    (void)X;
    (void)ldx;
    (void)model;
    return moe_check_class_labels(message, n, y, 2, "logistic");
}

static void logistic_log_density(const struct moe_model *model, size_t rows,
    const double *columns, const double *logits,
                                 const double *y, double *out, double *scratch)
{
    (void)columns;
    (void)scratch;
    size_t K = model->n_experts;
    for (size_t k = 0; k < K; ++k)
        for (size_t i = 0; i < rows; ++i) {
            double z = logits[k * rows + i];
            out[k * rows + i] = moe_log_sigmoid(y[i] == 1.0 ? z : -z);
        }
}

static size_t logistic_prediction_width(const struct moe_model *model)
{
    (void)model;
    return 1;
}

/* P(y = 1 | x) = sum_k pi_k(x) sigma(beta_k' x~) */
static void logistic_predict(const struct moe_model *model, size_t rows, const double *block,
                             const double *gate_proba, double *out, double *scratch)
{
    moe_expert_mixture_mean(model, rows, block, gate_proba, moe_log_sigmoid, out, scratch);
}

static double logistic_curvature(const struct moe_model *model)
{
    (void)model;
    return 0.25; /* sigma' <= 1/4 */
}

static double logistic_inverse_link(const struct moe_model *model, double eta)
{
    (void)model;
    return exp(moe_log_sigmoid(eta));
}

const struct moe_family_ops moe_family_logistic = {
    .id = MOE_FAMILY_LOGISTIC,
    .name = "logistic",
    .description = "two classes (any labels): logistic regression",
    .uses_classes = 0,
    .has_variance = 0,
    .supports_link = logistic_supports_link,
    .information_terms = moe_categorical_information_terms,
    .inverse_link = logistic_inverse_link,
    .expert_free_params = logistic_expert_free_params,
    .normalize_experts = NULL,
    .check_response = logistic_check_response,
    .log_density = logistic_log_density,
    .prediction_width = logistic_prediction_width,
    .predict = logistic_predict,
    .m_step = moe_categorical_m_step,
    .gradient = moe_categorical_gradient,
    .curvature = logistic_curvature,
};
