/*
 * The gradient machinery gem, gd and em's inexact M-step share: the full
 * gradient of the mean negative log-likelihood (via the Fisher identity, the
 * gradient of the EM surrogate with the posterior held fixed), the safe step
 * sizes of the seed-em spec (section 3.4), and the update itself.
 */
#ifndef MOE_LIB_GRADIENT_H
#define MOE_LIB_GRADIENT_H

#include "estimators/driver.h"

/* gram (p x p, full) = E_w[x~ x~'] = (1/total_weight) sum_i w_i x~_i x~_i'. */
moe_status moe_design_gram(const moe_data *data, double total_weight, double *gram,
                           char *message);

/* lambda_max(E_w[x~ x~']) of the design (intercept column included), exactly, by LAPACK's
   symmetric eigensolver on the p x p weighted Gram matrix. */
moe_status moe_design_lambda_max(const moe_data *data, double total_weight, double *lambda,
                                 char *message);

/* 1 / (c lambda + gate_l2) with c = 1/4 for two experts (a sigmoid), 1/2 otherwise. */
double moe_safe_gate_step(const struct moe_model *model, const moe_fit_settings *settings);
/* 1 / (c lambda + expert_ridge) with c the family's curvature factor at the model. */
double moe_safe_expert_step(const struct moe_model *model, const moe_fit_settings *settings);

/* The step options as used: the requested step (step, gate_step), or the safe one when the
   option is 0. */
double moe_expert_step(const struct moe_model *model, const moe_fit_settings *settings);
double moe_gate_step(const struct moe_model *model, const moe_fit_settings *settings);

typedef struct moe_gradient {
    double *gate;          /* (K - 1) x p */
    double *experts;       /* K x expert_rows x p */
    double *log_variances; /* K, or NULL when the family has no variances or they are fixed */
    size_t gate_size, experts_size, variances_size;
} moe_gradient;

/* Without experts (a gate-only fit) the gradient has no expert or variance part. */
moe_status moe_gradient_allocate(moe_gradient *gradient, const struct moe_model *model,
                                 int with_experts, int with_variances, char *message);
void moe_gradient_free(moe_gradient *gradient);

/*
 * The gradient of (1/N) [-loglik] + penalties at the model on `data`, given its posterior
 * resp (n x K) at the model; N is the total weight of `data`.
 */
moe_status moe_gradient_compute(const struct moe_model *model, const moe_data *data,
                                const double *resp, const moe_fit_settings *settings,
                                double total_weight, moe_gradient *gradient, char *message);

/*
 * theta - scale * (gate_step g_gate, expert_step g_experts, log-variance steps), from the
 * parameters in `from` into `model`. The log-variance step is the gradient clamped to
 * [-1, 1], floored at variance_floor (counted in *floored). Returns the predicted decrease
 * of the objective to first order (for Armijo), on the mean scale.
 */
double moe_gradient_apply(struct moe_model *model, const struct moe_model *from,
                          const moe_gradient *gradient, double gate_step, double expert_step,
                          double scale, double variance_floor, size_t *floored);

#endif
