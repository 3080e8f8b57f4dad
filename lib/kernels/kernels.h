/*
 * What the kernels behind moe/estimator.h share inside the library: the call's settings read
 * once from the options, rows resolved to validated data, and the report's folding of the
 * model-level kernels' counters. Estimators never include this; they have the public header.
 */
#ifndef MOE_LIB_KERNELS_H
#define MOE_LIB_KERNELS_H

#include "kernels/context.h"
#include "kernels/init.h"
#include "model/family.h"
#include "pass/gate.h"

#include <stdint.h>

typedef struct moe_fit_settings {
    size_t max_iter;
    double tolerance;
    size_t n_init;
    uint64_t seed;
    moe_init_strategy init;
    double total_weight;   /* N of the call's rows */
    moe_gate_options gate; /* l2, Newton limit and tolerance, threads */
    moe_expert_mstep_options experts;
    size_t threads;        /* resolved: never 0 */
    int update_experts;
    int gate_hessian_free; /* gate_solver resolves to hessian_free: gate Newton directions by
                              conjugate gradients (moe_context_gate_newton) */
} moe_fit_settings;

/* The call's settings, read from the options on first use (NULL only when out of memory). */
const moe_fit_settings *moe_context_settings(moe_fit_context *context);

/* The data behind `rows` (NULL: the call's rows); rows of the estimator's own are validated
   like the call's. */
moe_status moe_context_resolve_rows(moe_fit_context *context, const moe_rows *rows,
                                    moe_data *data);

/* `model` has the working model's structure (family, experts, inputs, classes). */
moe_status moe_context_check_model(moe_fit_context *context, const moe_model_t *model);

/* The gate's fixed-curvature bound M = E_w[x~ x~'] / 2 + gate_l2 off the intercept (p x p,
   restricted to the gate's inputs) over the call's rows: computed once per call. The bound
   step's curvature, and the Hessian-free steps' preconditioner. */
moe_status moe_context_gate_curvature(moe_fit_context *context,
                                     const moe_fit_settings *settings, const double **curvature);

/* The penalty of the objective at a model, mean scale. */
double moe_fit_penalty(const struct moe_model *model, const moe_fit_settings *settings);

/* lambda_max(E_w[x~ x~']) of the call's rows, computed once per call. */
moe_status moe_context_lambda(moe_fit_context *context, double *lambda);

/* The safe steps at a model given lambda (moe_context_safe_steps without the context). */
double moe_safe_gate_step(const struct moe_model *model, const moe_fit_settings *settings,
                          double lambda);
double moe_safe_expert_step(const struct moe_model *model, const moe_fit_settings *settings,
                            double lambda);

/* gram (p x p, full) = E_w[x~ x~'] over data. */
moe_status moe_design_gram(const moe_data *data, double total_weight, double *gram,
                           char *message);

/* Fold a model-level kernel's counters into the report. */
void moe_report_expert_mstep(moe_fit_context *context, const moe_expert_mstep_report *experts);
void moe_report_gate(moe_fit_context *context, const moe_gate_report *gate);

/* A hard partition of data's rows turned into a starting point by M-steps (resp: n x K
   workspace). */
moe_status moe_start_from_labels(moe_fit_context *context, struct moe_model *model,
                                 const moe_data *data, double *resp, const moe_label *labels);

/* The gate's or an expert's Newton system is above MOE_NEWTON_MAX_UNKNOWNS: starting
   points then take gradient steps instead of Newton M-steps. */
int moe_start_newton_too_large(const struct moe_model *model);

/* The experts' M-step options for rows `data` (the call's, or a sample of them). */
moe_expert_mstep_options moe_start_expert_options(const moe_fit_settings *settings,
                                                  const moe_data *data);

/* init = tensor: restart `restart`'s start from the tensor estimator cqt (start_tensor.c). */
moe_status moe_tensor_start(moe_fit_context *context, struct moe_model *model, size_t restart);

/* moe_context_start with the caller's workspaces: resp n x K doubles, labels n. */
moe_status moe_start_point(moe_fit_context *context, struct moe_model *model, size_t restart,
                           const moe_data *data,
                           double *resp, moe_label *labels);

#endif
