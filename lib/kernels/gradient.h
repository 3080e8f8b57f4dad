/*
 * The gradient machinery gem, gd and em's inexact M-step share, behind the public
 * moe_gradient_* and moe_context_safe_steps: the full gradient of the mean negative
 * log-likelihood (via the Fisher identity, the gradient of the EM surrogate with the
 * posterior held fixed), the safe step sizes (docs/ARCHITECTURE.md, "Gradient steps"), and
 * the update itself.
 */
#ifndef MOE_LIB_GRADIENT_H
#define MOE_LIB_GRADIENT_H

#include "kernels/kernels.h"

/* lambda_max(E_w[x~ x~']) of the design (intercept column included), exactly, by LAPACK's
   symmetric eigensolver on the p x p weighted Gram matrix. */
moe_status moe_design_lambda_max(const moe_data *data, double total_weight, double *lambda,
                                 char *message);

typedef struct moe_gradient_parts {
    double *gate;          /* (K - 1) x p */
    double *experts;       /* K x expert_rows x p, or none in a gate-only fit */
    double *log_variances; /* K, or NULL when the family has no variances or they are fixed */
    double *log_degrees;   /* K for t experts whose nu is updated, else NULL */
    size_t gate_size, experts_size, variances_size, degrees_size;
} moe_gradient_parts;

/* Without experts (a gate-only fit) the gradient has no expert, variance or nu part;
   with_degrees adds t experts' log nu (update_degrees). */
moe_status moe_gradient_parts_allocate(moe_gradient_parts *gradient,
                                       const struct moe_model *model, int with_experts,
                                       int with_variances, int with_degrees, char *message);
void moe_gradient_parts_free(moe_gradient_parts *gradient);

/*
 * The gradient of (1/N) [-loglik] + penalties at the model on `data`, given its posterior
 * resp (n x K) at the model; N is the total weight of `data`.
 */
moe_status moe_gradient_parts_compute(const struct moe_model *model, const moe_data *data,
                                      const double *resp, const moe_fit_settings *settings,
                                      double total_weight, moe_gradient_parts *gradient,
                                      char *message);

/*
 * theta - scale * (gate_step g_gate, expert_step g_experts, log-variance and log-nu steps),
 * from the parameters in `from` into `model`. The log-variance step is the gradient clamped
 * to [-1, 1], floored at variance_floor (counted in *floored); the log-nu step the same,
 * nu kept within [MOE_DEGREES_MIN, MOE_DEGREES_MAX]. Returns the predicted decrease
 * of the objective to first order (for Armijo), on the mean scale.
 */
double moe_gradient_parts_apply(struct moe_model *model, const struct moe_model *from,
                                const moe_gradient_parts *gradient, double gate_step,
                                double expert_step, double scale, double variance_floor,
                                size_t *floored);

#endif
