/*
 * The experts that are one generalised linear model each (Poisson, binomial, Gamma): one
 * stored row per expert, the linear predictor eta = beta_k' x~ and a family's row loss.
 * Their M-step, gradient and observed information differ only in that loss, so the loop
 * lives here once and each family file gives the loss of one row (moe_glm_family).
 *
 * The M-step minimises, per expert (sum scale),
 *   F(beta) = sum_i v_i r_ik loss(eta_i) + N (ridge/2) ||beta without intercept||^2
 * by Newton's method (IRLS) with step halving; each family's loss is convex in eta (its
 * curvature below is >= 0), so Newton from any finite start with a line search that never
 * accepts an increase converges.
 */
#ifndef MOE_LIB_GLM_EXPERT_H
#define MOE_LIB_GLM_EXPERT_H

#include "model/family.h"

/* One row's loss -log f (up to terms free of beta), its derivative in eta (the slope) and
   its second derivative (the curvature, >= 0). */
typedef struct moe_glm_row {
    double loss, slope, curvature;
} moe_glm_row;

typedef struct moe_glm_expert moe_glm_expert;

typedef struct moe_glm_family {
    /* Row i of expert k: x its design row (the family may read a column of it, the trials
       of binomial experts), y its response. */
    void (*row)(const struct moe_model *model, size_t k, const double *x, double y, double eta,
                moe_glm_row *out);
    /* Optional: a start from which the minimisation runs again when Newton from the warm
       start fails (a constant mean), into expert->beta; 0 when there is none. */
    int (*constant_start)(moe_glm_expert *expert, char *message);
    /* Optional: whether the expert's unpenalised optimum lies at infinity (counted as a
       separation). */
    int (*separated)(const moe_glm_expert *expert);
    /* The end of "<family> expert k: " when the loss overflows at the M-step's start, and
       of "the <family> experts' gradient overflows: " */
    const char *overflow;
    const char *gradient_overflow;
} moe_glm_family;

/* An expert's M-step problem (for the family's callbacks). */
struct moe_glm_expert {
    const struct moe_model *model;
    const moe_glm_family *family;
    const moe_data *data;
    const double *resp;
    const moe_expert_mstep_options *options;
    size_t k, p;
    double *beta, *saved, *direction, *sums, *work;
    double *warm_end; /* where Newton from the warm start ended */
};

/* The mean-scale objective at expert->beta (and, with derivatives, its gradient at
   sums + 1 and Hessian at sums + 1 + p, mean scale, penalty included); +inf where the loss
   overflows. */
moe_status moe_glm_evaluate(moe_glm_expert *expert, int derivatives, size_t *failed,
                            double *objective, char *message);

/* The family's m_step, gradient and data_curvature (the largest curvature of any row under
   any expert, which with lambda_max(E_w[x x']) bounds every expert's curvature). */
moe_status moe_glm_m_step(const moe_glm_family *family, struct moe_model *model,
                          const moe_data *data, const double *resp,
                          const moe_expert_mstep_options *options,
                          moe_expert_mstep_report *report, char *message);
moe_status moe_glm_gradient(const moe_glm_family *family, const struct moe_model *model,
                            const moe_data *data, const double *resp, double ridge,
                            double total_weight, size_t threads, double *coefficients,
                            char *message);
double moe_glm_data_curvature(const moe_glm_family *family, const struct moe_model *model,
                              const moe_data *data);

#endif
