/*
 * libmoe: the kernels the built-in estimators are made of. EXPERIMENTAL.
 *
 * The E-step, the M-steps, gradients and steps, the shared step rule and
 * solver, the deterministic parallel pass and the iteration loop that em,
 * gem, gd, cqt, ismm and ot are written with. An estimator written outside
 * libmoe (moe/estimator.h) may use them and then computes exactly what the
 * built-in ones compute. They are NOT covered by the stability promise of
 * the 1.x series: a minor release may change or remove any of them (the
 * performance work on the E-step and the gate step is expected to). Their
 * symbols are in the version node MOE_EXPERIMENTAL, so a program that uses
 * one records it. docs/API.md says what is stable and why.
 */
#ifndef MOE_KERNELS_H
#define MOE_KERNELS_H

#include <stddef.h>
#include "estimator.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every kernel below works on `rows` (NULL: the call's rows) with the
 * fitter's options (penalties, variance floor, Newton limits and tolerances,
 * threads), adds its work to the report's counters, and leaves its message
 * on the fitter. `model` is the working model or any model of the same
 * structure the estimator keeps (a previous iterate, say). Rows other than
 * the call's are validated first.
 *
 * Objectives are on the mean scale and minimised: the gate's is the
 * weighted soft-label cross-entropy (1/N) sum_i w_i sum_k -r_ik log pi_k(x_i)
 * plus the gate penalty, N the rows' total weight.
 */

/* The penalty of fitter.h's objective at `model`, mean scale:
   gate_l2/2 sum_k ||w_k - mean w||^2 + expert_ridge/2 sum_k ||beta_k||^2. */
MOE_API moe_status moe_context_penalty(const moe_fit_context *context, const moe_model_t *model,
                                       double *penalty);

/* log f_k(y_i | x_i) for rows first .. first + count - 1 of `rows`: out is count x K. */
MOE_API moe_status moe_context_expert_log_density(moe_fit_context *context,
                                                  const moe_model_t *model,
                                                  const moe_rows *rows, size_t first,
                                                  size_t count, double *out);

/* ---- The E-step ------------------------------------------------------------------------- */

typedef struct moe_estep moe_estep_t;

/* What an E-step sums besides the responsibilities and the log-likelihood. */
/* The gate objective at the model's gate with the new responsibilities as targets, and its
   gradient and Hessian: what a Newton step of the gate needs, without another pass. */
#define MOE_ESTEP_GATE_DERIVATIVES 0x1u
/* The experts' sufficient statistics, for moe_context_update_experts (families with a
   closed-form M-step: Gaussian experts with the identity link; for others the flag is
   ignored). */
#define MOE_ESTEP_EXPERT_STATISTICS 0x2u
/* The gate objective and gradient at the model's gate with the responsibilities resp held
   on entry as targets (those of the previous E-step): the check of a gate step taken from
   them, in the same pass. The objective takes each row's targets to sum to one, as an
   E-step leaves them (for up to four experts it is computed that way); targets that do
   not are outside the contract. */
#define MOE_ESTEP_PREVIOUS_TARGETS 0x4u

/* An E-step workspace for at most `flags`. */
MOE_API moe_status moe_estep_create(moe_fit_context *context, unsigned int flags,
                                    moe_estep_t **out);
MOE_API void moe_estep_free(moe_estep_t *estep);

/* One pass over `rows` at `model`: resp (n x K) receives the responsibilities (with
   MOE_ESTEP_PREVIOUS_TARGETS it holds the previous ones on entry). flags must be among those
   the workspace was created for. MOE_ERR_NUMERICAL names a row with zero or undefined
   likelihood under every expert. */
MOE_API moe_status moe_estep_run(moe_estep_t *estep, const moe_model_t *model,
                                 const moe_rows *rows, unsigned int flags, double *resp);

#define MOE_ESTEP_RESULT_VERSION 1
typedef struct moe_estep_result {
    unsigned int version;           /* MOE_ESTEP_RESULT_VERSION */
    double loglik;                  /* sum_i w_i log p(y_i | x_i) */
    double entropy;                 /* -sum_i w_i sum_k r_ik log r_ik */
    double total_weight;            /* N */
    double gate_objective;          /* GATE_DERIVATIVES: penalty included */
    double previous_gate_objective; /* PREVIOUS_TARGETS: penalty included */
    int previous_gate_separated;    /* PREVIOUS_TARGETS, no gate_l2: the previous targets
                                       are fitted perfectly (the optimum is at infinity) */
} moe_estep_result;

#define MOE_ESTEP_RESULT_INIT { MOE_ESTEP_RESULT_VERSION, 0.0, 0.0, 0.0, 0.0, 0.0, 0 }
/* *result zeroed with the given version (1 .. MOE_ESTEP_RESULT_VERSION). */
MOE_API moe_status moe_estep_result_init(moe_estep_result *result, unsigned int version);

/* The last run's sums. */
MOE_API moe_status moe_estep_get_result(const moe_estep_t *estep, moe_estep_result *result);
/* Gradient of the gate objective ((K - 1) p values, the free rows) at the gate the last run
   saw: for the new targets, or with `previous` for those held on entry. */
MOE_API moe_status moe_estep_gate_gradient(const moe_estep_t *estep, int previous,
                                           double *gradient, size_t length);
/* Its Hessian, ((K - 1) p)^2 values, row-major and symmetric (the same for both targets). */
MOE_API moe_status moe_estep_gate_hessian(const moe_estep_t *estep, double *hessian,
                                          size_t length);

/* ---- M-steps ---------------------------------------------------------------------------- */

/*
 * The experts' M-step with responsibilities resp (n x K): each expert's exact maximiser of
 * its weighted log-likelihood minus the ridge (Gaussian: weighted least squares, or with a
 * sigmoid or ReLU link Gauss-Newton steps that never lower it, then the variance, floored;
 * classification: Newton), or with inner_steps > 0 that many gradient
 * steps of size `step` (0: the safe step). With `statistics` (an E-step run with
 * MOE_ESTEP_EXPERT_STATISTICS at model's experts) a closed-form M-step takes them instead of
 * a pass. Experts whose weight is below min_expert_weight stay as they are.
 */
MOE_API moe_status moe_context_update_experts(moe_fit_context *context, moe_model_t *model,
                                              const moe_rows *rows, const double *resp,
                                              const moe_estep_t *statistics,
                                              size_t inner_steps, double step);

/* The gate's M-step: Newton with step halving on the gate objective with targets resp, at
   most max_steps steps (0: the gate_max_newton option) to gate_tol. The first step is always
   taken. Steps above MOE_NEWTON_MAX_UNKNOWNS unknowns are MOE_ERR_UNSUPPORTED. */
#define MOE_NEWTON_MAX_UNKNOWNS 4096
MOE_API moe_status moe_context_gate_newton(moe_fit_context *context, moe_model_t *model,
                                           const moe_rows *rows, const double *resp,
                                           size_t max_steps);
/* `steps` gradient steps of size `step` (0: the safe step) on the gate objective. */
MOE_API moe_status moe_context_gate_gradient_steps(moe_fit_context *context, moe_model_t *model,
                                                   const moe_rows *rows, const double *resp,
                                                   size_t steps, double step);
/* The gradient of the gate objective with targets resp at model's gate ((K - 1) p values). */
MOE_API moe_status moe_context_gate_gradient(moe_fit_context *context, const moe_model_t *model,
                                             const moe_rows *rows, const double *resp,
                                             double *gradient, size_t length);
/* One majorise-minimise step of the gate from its gradient ((K - 1) p values, as
   moe_estep_gate_gradient gives) on Boehning's fixed curvature bound E_w[x~ x~'] / 2 plus
   the penalty, over the call's rows. Monotone without a line search. */
MOE_API moe_status moe_context_gate_bound_step(moe_fit_context *context, moe_model_t *model,
                                               const double *gradient, size_t length);

/* ---- Gradients and steps ---------------------------------------------------------------- */

/*
 * The safe step sizes: 1 / (c lambda + penalty), lambda the largest eigenvalue of
 * E_w[x~ x~'] over the call's rows, c the curvature bound of the block (experts: the
 * family's, 1 / smallest variance for Gaussian experts; gate: 1/4 for two experts, else
 * 1/2). Either out-pointer may be NULL.
 */
MOE_API moe_status moe_context_safe_steps(moe_fit_context *context, const moe_model_t *model,
                                          double *expert_step, double *gate_step);

typedef struct moe_gradient moe_gradient_t;

/* A gradient of the mean negative log-likelihood plus the penalty: the gate's free rows,
   the experts (unless update_experts is 0) and their log-variances (unless update_variance
   is 0 or the family has none). */
MOE_API moe_status moe_gradient_create(moe_fit_context *context, moe_gradient_t **out);
MOE_API void moe_gradient_free(moe_gradient_t *gradient);
/* The gradient at `model` on `rows` whose posterior at the model is resp (Fisher's
   identity: the gradient of the EM surrogate with resp held). */
MOE_API moe_status moe_gradient_compute(moe_fit_context *context, moe_gradient_t *gradient,
                                        const moe_model_t *model, const moe_rows *rows,
                                        const double *resp);
/* The gradient's values, laid out as the gate's free rows ((K - 1) p), the experts (K x
   expert_rows x p, zero on multinomial reference rows; none in a gate-only fit), the
   log-variances (K; none when fixed or absent), then for t experts (since 1.1) the
   derivatives in log nu (K; none when update_degrees is 0): the buffer convention of
   moe/common.h.
   set_values replaces them (all finite), so an optimiser can turn a gradient into its own
   direction before moe_gradient_step. */
MOE_API moe_status moe_gradient_values(const moe_gradient_t *gradient, double *values,
                                       size_t capacity, size_t *length);
MOE_API moe_status moe_gradient_set_values(moe_gradient_t *gradient, const double *values,
                                           size_t length);
/*
 * model = from - scale * (gate_step on the gate, expert_step on the experts, the
 * log-variance gradient clamped to [-1, 1] on the log-variances, floored at the variance
 * floor). *predicted_decrease (may be NULL) receives the first-order decrease of the
 * objective, scale included, and *floored (may be NULL) the number of variances raised to
 * the floor (the estimator counts them when it keeps the step). model and from may be the
 * same.
 */
MOE_API moe_status moe_gradient_step(moe_fit_context *context, const moe_gradient_t *gradient,
                                     moe_model_t *model, const moe_model_t *from,
                                     double gate_step, double expert_step, double scale,
                                     double *predicted_decrease, size_t *floored);

/* ---- Shared rules and solvers ------------------------------------------------------------- */

/*
 * The library's one step-acceptance rule (Armijo with a floor at rounding): a step of
 * `fraction` of a direction whose full step predicts a decrease `decrement` (>= 0) takes a
 * minimised objective from `before` to `after`. Accepted when after <= before - 1e-4
 * fraction decrement; or, near the optimum (decrement / 2 <= 1e-8 (1 + |before|)), where the
 * objective cannot resolve the decrease, when after <= before + 16 eps (1 + |before|).
 */
MOE_API int moe_step_accepted(double before, double after, double decrement, double fraction);

/*
 * Solve A x = b for a symmetric positive (semi)definite A (order x order, row-major, not
 * modified), after scaling A to unit diagonal so the result does not depend on the units of
 * the unknowns; b becomes x. When the scaled A is singular or too ill-conditioned a growing
 * ridge (1e-12 to 1) is added and *ridge_used (may be NULL) set. MOE_ERR_NUMERICAL, b
 * unchanged, when no ridge works.
 */
MOE_API moe_status moe_solve_symmetric(size_t order, const double *matrix, double *rhs,
                                       int *ridge_used);

/*
 * Rows on the fitter's threads, with a reduction that does not depend on their number: the
 * rows 0 .. n-1 are cut into fixed chunks, `run` sums each chunk into its own zeroed
 * `sums_size` doubles (with `scratch_size` doubles of scratch per thread, whose contents on
 * entry are undefined: it may be memory an earlier pass of the same call used), and the
 * chunks' sums are added in chunk order into `sums`. run returns 0, or 1 + a failing row (the call
 * then returns MOE_ERR_NUMERICAL naming the lowest such row).
 */
typedef size_t (*moe_chunk_fn)(void *user, size_t first, size_t count, double *sums,
                               double *scratch);
MOE_API moe_status moe_context_parallel(moe_fit_context *context, size_t n, size_t sums_size,
                                        size_t scratch_size, moe_chunk_fn run, void *user,
                                        double *sums);

/*
 * The loop em, gem and gd share, for any estimator that improves a model iteration by
 * iteration: for each of n_init restarts (with init = mixed, no more than the search found
 * distinct end points), the starting point (moe_context_start), the
 * E-step, then up to max_iter iterations, each followed by an evaluation, until the
 * penalised objective changes by at most tol (N + |objective|). Every iteration is recorded
 * (trace, progress, cancel); a decrease of the objective by more than 1e-10 (N +
 * |objective|) counts as a monotonicity violation. The best restart's parameters end in the
 * working model, named by moe_context_set_result.
 */
#define MOE_ITERATION_OPS_VERSION 1
typedef struct moe_iteration_ops {
    unsigned int version; /* MOE_ITERATION_OPS_VERSION */
    /*
     * One iteration. On entry resp (n x K) holds the posterior at the model and objective
     * the penalised objective (sum scale, maximised: loglik - N penalty); the iteration may
     * overwrite resp. Required.
     */
    moe_status (*iterate)(void *state, moe_fit_context *context, moe_model_t *model,
                          double *resp, double objective, size_t restart, size_t iteration);
    /*
     * The evaluation after an iteration (and at iteration 0 of a restart): resp receives
     * the posterior at the model and *loglik the log-likelihood. NULL: a plain E-step. An
     * evaluation may change the model (to finish an iteration's step), as long as resp and
     * loglik are then those of the changed model.
     */
    moe_status (*evaluate)(void *state, moe_fit_context *context, moe_model_t *model,
                           double *resp, size_t restart, size_t iteration, double *loglik);
} moe_iteration_ops;
/* *ops with the given version (1 .. MOE_ITERATION_OPS_VERSION) and no functions. */
MOE_API moe_status moe_iteration_ops_init(moe_iteration_ops *ops, unsigned int version);

/* The options the loop and the kernels read, for an estimator's option mask. */
#define MOE_ITERATION_OPTIONS                                                                  \
    (MOE_OPTION_BIT(MOE_OPT_MAX_ITER) | MOE_OPTION_BIT(MOE_OPT_TOLERANCE) |                    \
     MOE_OPTION_BIT(MOE_OPT_N_INIT) | MOE_OPTION_BIT(MOE_OPT_SEED) |                           \
     MOE_OPTION_BIT(MOE_OPT_INIT) | MOE_OPTION_BIT(MOE_OPT_GATE_L2) |                          \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_RIDGE) | MOE_OPTION_BIT(MOE_OPT_VARIANCE_FLOOR) |           \
     MOE_OPTION_BIT(MOE_OPT_GATE_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_GATE_TOLERANCE) |        \
     MOE_OPTION_BIT(MOE_OPT_MIN_EXPERT_WEIGHT) | MOE_OPTION_BIT(MOE_OPT_UPDATE_VARIANCE) |     \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_EXPERT_TOLERANCE) |    \
     MOE_OPTION_BIT(MOE_OPT_THREADS) | MOE_OPTION_BIT(MOE_OPT_UPDATE_EXPERTS) |              \
     MOE_OPTION_BIT(MOE_OPT_UPDATE_DEGREES) | MOE_OPTION_BIT(MOE_OPT_SEARCH_SHARDS))

MOE_API moe_status moe_context_iterate(moe_fit_context *context, const moe_iteration_ops *ops,
                                       void *state);

#ifdef __cplusplus
}
#endif

#endif /* MOE_KERNELS_H */
