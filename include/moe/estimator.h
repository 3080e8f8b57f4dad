/*
 * libmoe: the estimator interface, for writing estimators outside libmoe.
 *
 * Every estimator, built-in or not, is a moe_estimator_ops table: em, gem and
 * gd are written against exactly this header, and a copy of any of them
 * compiled outside libmoe behaves bit for bit like the built-in. A custom
 * table goes through moe_fitter_create_custom; libmoe keeps no global
 * registry. docs/ARCHITECTURE.md draws the contract.
 *
 * What the fitter does around an estimator's call:
 *   1. validates the data (finite, weights >= 0, labels valid for the family,
 *      sizes consistent) and, for fit, that there are at least as many rows
 *      of positive weight as free parameters;
 *   2. gives the estimator a private working copy of the caller's model;
 *   3. calls fit, partial_fit or aggregate with a moe_fit_context, through
 *      which the estimator reads the data, options and session, records
 *      iterations and counters, and calls the library's kernels;
 *   4. checks that the working model's parameters and the recorded
 *      log-likelihoods are finite, puts the experts in canonical order (not
 *      after partial_fit of an estimator with MOE_ESTIMATOR_KEEPS_ORDER) and
 *      copies the working model into the caller's model, only on MOE_OK or
 *      on MOE_ERR_CANCELLED after moe_context_set_result.
 */
#ifndef MOE_ESTIMATOR_H
#define MOE_ESTIMATOR_H

#include <stddef.h>
#include "common.h"
#include "model.h"
#include "fitter.h"
#include "rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The table's version. libmoe accepts every version from 1 to this one and
 * reads only the fields the table's version has, so a table compiled
 * against an older header keeps working; fields marked "(2)" came with
 * version 2. Version 1 tables read any pinned option, have no flags and
 * none of the version 2 operations.
 */
#define MOE_ESTIMATOR_ABI_VERSION 2

/* Flags (ops->flags). */
/* partial_fit accepts batches with fewer rows than the model has free parameters
   (a streaming estimator that accumulates statistics over batches). */
#define MOE_ESTIMATOR_SMALL_BATCHES 0x1u
/* partial_fit keeps the experts in the order of the session: the working model
   is not put in canonical order between calls, so per-expert statistics the
   estimator carries from call to call stay with their expert. */
#define MOE_ESTIMATOR_KEEPS_ORDER 0x2u

typedef struct moe_fit_context moe_fit_context;

typedef struct moe_estimator_ops {
    unsigned int abi_version; /* MOE_ESTIMATOR_ABI_VERSION (1 is accepted too) */
    const char *name;         /* non-empty; must outlive the fitters */
    /* Allocate per-fitter state (may set *state to NULL). Required. */
    moe_status (*create)(void **state);
    /* Release the state. Required. */
    void (*destroy)(void *state);
    /* Options the library does not pin, by name; NULL if none. Return
       MOE_ERR_NOT_FOUND for unknown names. */
    moe_status (*set_option)(void *state, const char *name, const char *value);
    /* Batch fit. Required. */
    moe_status (*fit)(void *state, moe_fit_context *context);
    /* Streaming update (moe_fitter_partial_fit); NULL if unsupported. */
    moe_status (*partial_fit)(void *state, moe_fit_context *context);
    /* (2) MOE_OPTION_BIT of every pinned option the estimator reads; setting
       any other on its fitter is MOE_ERR_UNSUPPORTED. */
    unsigned long long options;
    /* (2) MOE_ESTIMATOR_* flags. */
    unsigned int flags;
    /* (2) Forget what partial_fit accumulated: moe_fitter_reset, and before
       every moe_fitter_fit. NULL when there is nothing to forget. */
    moe_status (*reset)(void *state);
    /* (2) Combine the context's models (moe_context_models) into the working
       model: moe_fitter_aggregate. NULL if unsupported. */
    moe_status (*aggregate)(void *state, moe_fit_context *context);
    /* (2) The state a streaming session needs to go on elsewhere, for
       moe_fitter_save_state: the buffer convention of moe/common.h (NULL
       buffer and capacity 0 ask for the size). NULL when the state holds
       nothing between calls. */
    moe_status (*save_state)(const void *state, void *buffer, size_t capacity,
                             size_t *written);
    /* (2) Restore what save_state wrote (moe_fitter_load_state); MOE_ERR_FORMAT
       for bytes it did not write. Required with save_state. */
    moe_status (*load_state)(void *state, const void *buffer, size_t size);
} moe_estimator_ops;

/* Option text as moe_fitter_set_option reads the library's own (decimal notation only, in
   the C locale whatever the process's; integers without a fraction or exponent), for an
   estimator's set_option. MOE_ERR_INVALID_ARGUMENT with a message (moe_last_error) saying
   why, the value untouched, for anything else. */
MOE_API moe_status moe_option_parse_real(const char *text, double *value);
MOE_API moe_status moe_option_parse_integer(const char *text, long long *value);

/* A fitter running a caller's estimator. ops is validated and copied (the
   fields of its version); the strings it points to must outlive the fitter. */
MOE_API moe_status moe_fitter_create_custom(moe_fitter_t **out, const moe_estimator_ops *ops);

/* The working model the estimator fits. */
MOE_API moe_model_t *moe_context_model(moe_fit_context *context);

/* Which call the estimator is serving. */
typedef enum moe_fit_call {
    MOE_CALL_FIT = 1,         /* moe_fitter_fit */
    MOE_CALL_PARTIAL_FIT = 2, /* moe_fitter_partial_fit: one batch of a session */
    MOE_CALL_AGGREGATE = 3    /* moe_fitter_aggregate */
} moe_fit_call;
MOE_API moe_fit_call moe_context_call(const moe_fit_context *context);

/* The context's rows (moe_rows, moe/fitter.h) are validated; an estimator may also make
   rows of its own from them (a mini-batch) and pass those to the kernels below, which then
   validate them. */
/* The rows of this call (for an aggregation: the support rows, maybe none). */
MOE_API moe_status moe_context_rows(const moe_fit_context *context, moe_rows *rows);
/* The data of this call (any out-pointer may be NULL). */
MOE_API moe_status moe_context_data(const moe_fit_context *context, size_t *n, const double **X,
                                    size_t *ldx, const double **y, const double **weights);
/* The fitter's option values. */
MOE_API moe_status moe_context_get_int(const moe_fit_context *context, moe_option option,
                                       long long *value);
MOE_API moe_status moe_context_get_double(const moe_fit_context *context, moe_option option,
                                          double *value);
/*
 * Record one finished iteration (trace, report, progress callback).
 * Iteration 0 records the starting point and does not call the callback.
 * restart must be below the n_init option (MOE_ERR_INVALID_ARGUMENT if not),
 * and loglik finite (MOE_ERR_NUMERICAL, nothing recorded, if not).
 * Returns MOE_ERR_CANCELLED if the callback asked to stop; the estimator
 * should then return that status promptly.
 */
MOE_API moe_status moe_context_iteration(moe_fit_context *context, size_t restart,
                                         size_t iteration, double loglik);
/*
 * Record the outcome: which restart's parameters the working model holds
 * and whether it met the tolerance. The report's iterations and loglik are
 * taken from that restart's recorded iterations, so it must have recorded
 * at least one (MOE_ERR_INVALID_ARGUMENT if not). When an estimator returns
 * MOE_OK without naming a result (and recorded other than exactly one
 * restart), the fitter evaluates the working model's log-likelihood for the
 * report itself; a fit that fails never reports converged. A fit that
 * leaves a non-finite parameter in the working model fails with
 * MOE_ERR_NUMERICAL.
 */
MOE_API moe_status moe_context_set_result(moe_fit_context *context, size_t best_restart,
                                          int converged);
/* Attach a message to the fitter for the status the estimator returns. */
MOE_API moe_status moe_context_fail(moe_fit_context *context, moe_status status,
                                    const char *message);

/*
 * The streaming session before this call: rows (of positive weight or not)
 * and batches that earlier partial_fit calls of the session processed
 * successfully. Both are 0 in a fit, an aggregation and the first batch.
 */
MOE_API moe_status moe_context_session(const moe_fit_context *context, size_t *samples_seen,
                                       size_t *batches);

/*
 * An aggregation's input: `count` fitted models (same family, features,
 * intercept and classes as the working model; any number of experts) and
 * their weights (non-negative, summing to 1: the fitter normalises what the
 * caller gave, equal weights when it gave none). MOE_ERR_UNSUPPORTED outside
 * an aggregation.
 */
MOE_API moe_status moe_context_models(const moe_fit_context *context, size_t *count,
                                      const moe_model_t *const **models,
                                      const double **weights);

/* Report counters an estimator adds to (the moe_fit_report fields of the same name). */
typedef enum moe_counter {
    MOE_COUNTER_INNER_ITERATIONS = 1,
    MOE_COUNTER_GRADIENT_EVALUATIONS = 2,
    MOE_COUNTER_DEGENERATE_EVENTS = 3,
    MOE_COUNTER_RIDGE_FALLBACKS = 4,
    MOE_COUNTER_LINE_SEARCH_FAILURES = 5,
    MOE_COUNTER_FLOORED_VARIANCES = 6,
    MOE_COUNTER_SEPARATION_EVENTS = 7,
    MOE_COUNTER_MONOTONICITY_VIOLATIONS = 8,
    MOE_COUNTER_SEARCH_RUNS = 9,       /* (report version 6) an estimator that fits with
                                          inner fitters passes on their search's counts */
    MOE_COUNTER_SEARCH_ITERATIONS = 10,
    MOE_COUNTER_STREAM_ROWS = 11       /* a partial fit's rows scored by its steps: with it,
                                          every moe_context_iteration of a partial fit is one
                                          step and its loglik the batch's before the step
                                          (the report's stream_* fields) */
} moe_counter;
MOE_API moe_status moe_context_count(moe_fit_context *context, moe_counter counter,
                                     size_t increment);
/* A decrease of the objective by `relative` (of N + |objective|): counts a
   monotonicity violation and keeps the worst relative decrease. */
MOE_API moe_status moe_context_note_decrease(moe_fit_context *context, double relative);
/* Add MOE_STAGE_* flags to the report's stages: what the fit ran. */
MOE_API moe_status moe_context_add_stages(moe_fit_context *context, unsigned int stages);
/* Add wall time to one stage's report.stage_seconds (stage: one MOE_STAGE_* flag). */
MOE_API moe_status moe_context_add_stage_seconds(moe_fit_context *context, unsigned int stage,
                                                 double seconds);
/* The step sizes last used (the report's step and gate_step); NAN leaves one as it is. */
MOE_API moe_status moe_context_set_steps(moe_fit_context *context, double step,
                                         double gate_step);

/* ======================================================================== */
/* Kernels: what the built-in estimators are made of                        */
/* ======================================================================== */
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

/* Rows' total weight N: the sum of the weights, n without weights. */
MOE_API moe_status moe_context_total_weight(const moe_fit_context *context, const moe_rows *rows,
                                            double *total);

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
   log-variances (K; none when fixed or absent): the buffer convention of moe/common.h.
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

/* ---- Starting points and the iterative loop ----------------------------------------------- */

/*
 * Restart `restart`'s starting point into `model`, as the init option says: the caller's
 * model (init = model, restart 0), the caller's start function (init = custom,
 * moe_fitter_set_start), the tensor method's (init = tensor), a partition of the rows
 * (k-means++ on the standardised [x, y], or random labels, from the seed option and the
 * restart as the stream) turned into parameters by one M-step of the experts (skipped when
 * update_experts is 0) and a short Newton fit of the gate, or (init = mixed, the default)
 * the restart-th best distinct end point of a search over short EM runs from such
 * partitions (on all of the call's rows, the best of them then improved by a local search
 * over its gate), which runs on the first call for a set of rows; restarts beyond the end
 * points found take them again in turn.
 */
MOE_API moe_status moe_context_start(moe_fit_context *context, moe_model_t *model,
                                     size_t restart);
/* The same from other rows (a streaming estimator's first rows, say; NULL: the call's). The
   partition, its M-steps and the model start use them; init = custom and init = tensor still
   see the call's rows. */
MOE_API moe_status moe_context_start_rows(moe_fit_context *context, moe_model_t *model,
                                          size_t restart, const moe_rows *rows);

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

/* The options the loop and the kernels read, for an estimator's option mask. */
#define MOE_ITERATION_OPTIONS                                                                  \
    (MOE_OPTION_BIT(MOE_OPT_MAX_ITER) | MOE_OPTION_BIT(MOE_OPT_TOLERANCE) |                    \
     MOE_OPTION_BIT(MOE_OPT_N_INIT) | MOE_OPTION_BIT(MOE_OPT_SEED) |                           \
     MOE_OPTION_BIT(MOE_OPT_INIT) | MOE_OPTION_BIT(MOE_OPT_GATE_L2) |                          \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_RIDGE) | MOE_OPTION_BIT(MOE_OPT_VARIANCE_FLOOR) |           \
     MOE_OPTION_BIT(MOE_OPT_GATE_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_GATE_TOLERANCE) |        \
     MOE_OPTION_BIT(MOE_OPT_MIN_EXPERT_WEIGHT) | MOE_OPTION_BIT(MOE_OPT_UPDATE_VARIANCE) |     \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_EXPERT_TOLERANCE) |    \
     MOE_OPTION_BIT(MOE_OPT_THREADS) | MOE_OPTION_BIT(MOE_OPT_UPDATE_EXPERTS))

MOE_API moe_status moe_context_iterate(moe_fit_context *context, const moe_iteration_ops *ops,
                                       void *state);

#ifdef __cplusplus
}
#endif

#endif /* MOE_ESTIMATOR_H */
