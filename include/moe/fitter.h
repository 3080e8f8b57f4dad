/*
 * libmoe: fitters.
 *
 * A moe_fitter_t is one estimator plus its options. It fits a moe_model_t
 * in place: the model supplies the structure (family, K, d, intercept) and,
 * with init = "model", the starting parameters.
 *
 *   moe_fitter_t *f;
 *   moe_fitter_create(&f, "em");
 *   moe_fitter_set_int(f, MOE_OPT_N_INIT, 10);
 *   moe_fitter_set_option(f, "tol", "1e-10");
 *   moe_fitter_fit(f, model, n, X, d, y, NULL);
 *
 * A fitter is not thread-safe; use one per thread. Several fitters may fit
 * distinct models at once. The `threads` option runs one fit's passes over
 * the data on OpenMP threads. OpenBLAS runs its own threads; libmoe does not
 * change that global setting (set OPENBLAS_NUM_THREADS=1 when fitting in
 * several threads at once).
 *
 * Reproducibility: the same data, options and seed give the same fit bit for
 * bit for any value of `threads` (the passes sum their blocks in a fixed
 * order). Across machines the result is the same only with the same
 * instruction set (libmoe picks SIMD code at run time) and the same BLAS; a
 * different one can change the last bits and, through them, which of two
 * nearly equal optima a search keeps.
 */
#ifndef MOE_FITTER_H
#define MOE_FITTER_H

#include <stddef.h>
#include "common.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Options with pinned numbers (part of the ABI). The string name is in
 * brackets; moe_fitter_option_info reports each range.
 */
typedef enum moe_option {
    MOE_OPT_MAX_ITER = 1,          /* [max_iter] int >= 1, default 500 */
    MOE_OPT_TOLERANCE = 2,         /* [tol] stop when |dL| <= tol * (N + |L|), default 1e-8 */
    MOE_OPT_N_INIT = 3,            /* [n_init] restarts, best log-likelihood kept, default 5 */
    MOE_OPT_SEED = 4,              /* [seed] PRNG seed in [0, 2^53), default 0 */
    MOE_OPT_INIT = 5,              /* [init] a moe_init_strategy, default MOE_INIT_MIXED */
    MOE_OPT_GATE_L2 = 6,           /* [gate_l2] gate penalty, see below, default 0 */
    MOE_OPT_EXPERT_RIDGE = 7,      /* [expert_ridge] expert penalty, see below, default 0 */
    MOE_OPT_VARIANCE_FLOOR = 8,    /* [variance_floor] relative to var(y), default 1e-6 */
    MOE_OPT_GATE_MAX_NEWTON = 9,   /* [gate_max_newton] Newton steps per gate M-step, default 25 */
    MOE_OPT_GATE_TOLERANCE = 10,   /* [gate_tol] Newton decrement stop, relative, default 1e-10 */
    MOE_OPT_MIN_EXPERT_WEIGHT = 11,/* [min_expert_weight] degenerate below this share of n, default 1e-6 */
    MOE_OPT_THREADS = 12,          /* [threads] worker threads for passes over the data
                                      (every built-in estimator), 0 = as many as OpenMP
                                      offers, default 1; results are bit-identical for any
                                      value */
    MOE_OPT_STEP = 13,             /* [step] gradient step size; gem: the experts' step; em: the
                                      experts' inner step; 0 = the safe step, default 0 */
    MOE_OPT_GATE_STEP = 14,        /* [gate_step] gem: the gate's step; em: the gate's inner
                                      step; 0 = the safe step, default 0 */
    MOE_OPT_BATCH_SIZE = 15,       /* [batch_size] gd mini-batch rows, 0 = full batch, default 0;
                                      ismm: the rows of a step (0: a partial_fit call is one),
                                      fixed for a streaming session at its first call: another
                                      value is MOE_ERR_INVALID_ARGUMENT until moe_fitter_reset */
    MOE_OPT_LINE_SEARCH = 16,      /* [line_search] gd: 0 none, 1 Armijo backtracking, default 0 */
    MOE_OPT_INNER_STEPS = 17,      /* [inner_steps] em: 0 = Newton M-steps for the gate (as
                                      gate_solver says) and classification experts, else that
                                      many gradient steps per block per iteration, default 0 */
    MOE_OPT_UPDATE_VARIANCE = 18,  /* [update_variance] 0 keeps the model's variances, default 1 */
    MOE_OPT_EXPERT_MAX_NEWTON = 19,/* [expert_max_newton] Newton steps per classification-expert
                                      M-step, and Gauss-Newton steps per M-step of a Gaussian
                                      expert with a sigmoid or ReLU link, default 25 */
    MOE_OPT_EXPERT_TOLERANCE = 20, /* [expert_tol] their decrement stop, default 1e-10 */
    MOE_OPT_GATE_SOLVER = 21,      /* [gate_solver] em's gate M-step: 0 newton (exact: Newton
                                      with step halving to gate_tol), 1 bound (one majorise-
                                      minimise step with Boehning's fixed curvature: no Hessian,
                                      monotone), 2 newton_step (one Newton step per iteration,
                                      halved until it decreases the gate objective: a monotone
                                      generalised EM with exact EM's fixed points, one pass over
                                      X per iteration), 3 hessian_free (the same one checked
                                      Newton step, its direction by conjugate gradients on
                                      Hessian-vector products preconditioned by the bound: the
                                      Hessian is never formed, about 4 (K - 1) p flops a row
                                      per product instead of K^2 p^2 / 2 a row for the
                                      Hessian; no limit on the gate's size), 4 auto
                                      (hessian_free when K p > 104, p the gate's inputs, where
                                      the Hessian costs more than a Hessian-free step, or
                                      when (K - 1) p exceeds MOE_NEWTON_MAX_UNKNOWNS; else
                                      newton_step; the start search's and the starts' gate
                                      Newton steps follow the choice), default 4 */
    MOE_OPT_UPDATE_EXPERTS = 22,   /* [update_experts] 0 holds the experts (coefficients and
                                      variances) as the model has them and fits the gate alone
                                      (em, gem, gd; restarts start the gate from a partition
                                      of the data), default 1 */
    MOE_OPT_OPTIMIZER = 23,        /* [optimizer] gd's update: 0 sgd (the gradient, default),
                                      1 momentum, 2 adam, 3 adamw, 4 rmsprop; with an adaptive
                                      one, step 0 means 0.001 */
    MOE_OPT_BETA1 = 24,            /* [beta1] momentum's and Adam's first-moment decay,
                                      default 0.9 */
    MOE_OPT_BETA2 = 25,            /* [beta2] the squared gradient's decay (Adam, AdamW,
                                      RMSProp), default 0.999 */
    MOE_OPT_OPTIMIZER_EPS = 26,    /* [optimizer_eps] added to the root of the squared-gradient
                                      average, default 1e-8 */
    MOE_OPT_WEIGHT_DECAY = 27,     /* [weight_decay] AdamW's decoupled decay of the coefficients
                                      (not the log-variances), default 0.01 */
    MOE_OPT_UPDATE_DEGREES = 28,   /* since 1.1: [update_degrees] em, gem, gd: 0 keeps the t
                                      experts' degrees of freedom as the model has them
                                      (moe_model_set_degrees), 1 estimates them, default 1 */
    MOE_OPT_SEARCH_SHARDS = 29     /* since 1.2: [search_shards] int, em, gem, gd and ot: the
                                      start search of init = mixed for a fit of one of this
                                      many shards of the rows: 1 / this of a full search's
                                      budget, and one restart (its best end point) whatever
                                      n_init; 0 (the default): a full search (ot: by the
                                      shard's rows); -1: a shard of unknown count, its
                                      budget by its rows (about ten EM iterations on them, at
                                      most half a full search; what ot gives its local
                                      fits). A fit on 1/M of the rows then costs about 1/M
                                      of one on all of them (docs/ARCHITECTURE.md) */
} moe_option;

/* Values of MOE_OPT_OPTIMIZER (string form in brackets). */
typedef enum moe_optimizer {
    MOE_OPTIMIZER_SGD = 0,      /* [sgd] */
    MOE_OPTIMIZER_MOMENTUM = 1, /* [momentum] v = beta1 v + g, step along v */
    MOE_OPTIMIZER_ADAM = 2,     /* [adam] bias-corrected moments, m / (sqrt(v) + eps) */
    MOE_OPTIMIZER_ADAMW = 3,    /* [adamw] adam plus weight_decay times the coefficients */
    MOE_OPTIMIZER_RMSPROP = 4   /* [rmsprop] g / (sqrt(v) + eps), v with beta2 */
} moe_optimizer;

/* The bit of an option in a mask of options (moe_estimator_ops.options), and
   the mask of an estimator that reads every pinned option (one that passes
   them on to a built-in estimator, say). */
#define MOE_OPTION_BIT(option) (1ull << (unsigned)(option))
#define MOE_OPTIONS_ALL (~0ull)

/*
 * The objective. With N the total weight (n without weights) and L the
 * log-likelihood (a sum over observations), fitters maximise
 *
 *   L - N * [ gate_l2/2 * sum_k ||w_k - mean_k w_k||^2
 *           + expert_ridge/2 * sum_k ||beta_k||^2 ]
 *
 * where w_k are the gate weights and beta_k the expert coefficients, both
 * without intercepts. Centring the gate weights over experts makes the
 * penalty independent of which expert is the reference. Convergence and the
 * monotonicity check are judged per unit weight: |dL| against tol*(N + |L|).
 * The trace and moe_fit_report.loglik hold the plain log-likelihood.
 */

/* Values of MOE_OPT_INIT (string form in brackets). */
typedef enum moe_init_strategy {
    MOE_INIT_RANDOM = 0, /* [random] uniformly random hard labels, then one M-step */
    MOE_INIT_KMEANS = 1, /* [kmeans] weighted k-means++ and Lloyd on standardised [x, y]
                            (on a sample of at most 5000 rows), then one M-step */
    MOE_INIT_MODEL = 2,  /* [model] the model's current parameters (restart 0);
                            further restarts use kmeans */
    MOE_INIT_CUSTOM = 3, /* [custom] the caller's start function for every restart
                            (moe_fitter_set_start) */
    MOE_INIT_TENSOR = 4, /* [tensor] the tensor method's experts and gate (cqt's two stages,
                            its default options; restart r draws the gate's start from
                            stream r): Gaussian experts, no intercept, K <= d */
    MOE_INIT_MIXED = 5   /* [mixed] a search: many short EM runs on (a sample of 2000, or
                            25 per free parameter, of) the rows from a mix of starts (random
                            regression lines, random labels, k-means++ on [x, y] and on x,
                            k-means++ seed cells on x), the best continued on that sample,
                            the best of all then (when the sample is all rows) moved along
                            its gate (sharpened, one region's border shifted by some rows)
                            while that finds a better optimum; the n_init best distinct end
                            points are the restarts (fewer when fewer are distinct); the
                            search does not call the progress callback. docs/ARCHITECTURE.md,
                            "Default starts", says why */
} moe_init_strategy;

typedef struct moe_fitter moe_fitter_t;

/*
 * Rows of data as estimators and start functions see them: n rows of
 * n_features values, row i at X[i * ldx] (X is NULL when there are no
 * features); y holds n values (NULL only for an aggregation's support rows
 * given without responses); weights n values or NULL for all ones.
 */
typedef struct moe_rows {
    size_t n;
    const double *X;
    size_t ldx;
    const double *y;
    const double *weights;
} moe_rows;

/*
 * The caller's starting points for the iterative estimators (em, gem, gd):
 * with init = custom, called for every restart with `model` holding the
 * caller's model's parameters; it writes the start through the model
 * setters (from another fitter's result, a tensor method's experts, ...).
 * rows are the fit's, validated. Any status but MOE_OK ends that restart
 * (the fit goes on with the others, as for a numerical failure).
 */
typedef moe_status (*moe_start_fn)(void *user_data, moe_model_t *model, size_t restart,
                                   const moe_rows *rows);
/* Set the start function and init = custom; NULL removes it (init = custom
   then goes back to kmeans). */
MOE_API moe_status moe_fitter_set_start(moe_fitter_t *fitter, moe_start_fn start,
                                        void *user_data);

/* Name of a pinned option ("max_iter"), NULL if unknown. */
MOE_API const char *moe_option_name(moe_option option);

/*
 * What a fitter's options are, for tools and bindings that list, check or show them
 * without hard-coding them. A fitter's options are the pinned options its estimator reads
 * (in number order) followed by the estimator's own (in the order of its table); every one
 * is set by name with moe_fitter_set_option and read back with moe_fitter_get_option.
 */
typedef enum moe_option_type {
    MOE_OPTION_INTEGER = 0, /* a whole number in [lower, upper] */
    MOE_OPTION_REAL = 1,    /* a finite number in [lower, upper] (see the flags) */
    MOE_OPTION_KEYWORD = 2  /* one of `keywords`; its value is the keyword's index */
} moe_option_type;

/* moe_option_info.flags: the bound is excluded (step_decay in (0.5, 1], say). */
#define MOE_OPTION_LOWER_OPEN 0x1u
#define MOE_OPTION_UPPER_OPEN 0x2u

#define MOE_OPTION_INFO_VERSION 1
typedef struct moe_option_info {
    unsigned int version;        /* MOE_OPTION_INFO_VERSION */
    const char *name;            /* what moe_fitter_set_option takes */
    moe_option_type type;
    unsigned int flags;          /* MOE_OPTION_LOWER_OPEN, MOE_OPTION_UPPER_OPEN */
    double lower, upper;         /* bounds of the value (keywords: 0 and their count - 1) */
    double default_value;        /* keywords: the default keyword's index */
    const char *const *keywords; /* keyword options: names of values 0, 1, ..., then NULL;
                                    NULL for other types */
    const char *description;     /* one line */
    int number;                  /* the moe_option of a pinned option; 0 for an estimator's
                                    own */
} moe_option_info;
/* *info zeroed with the given version (1 .. MOE_OPTION_INFO_VERSION). */
MOE_API moe_status moe_option_info_init(moe_option_info *info, unsigned int version);

/* How many options the fitter takes (0 for a NULL fitter). */
MOE_API size_t moe_fitter_option_count(const moe_fitter_t *fitter);
/* Option `index` (0 .. count - 1) into *info, whose version the caller set (the fields of
   that version are written). The strings belong to the library or the estimator's table
   and live as long as the fitter. MOE_ERR_NOT_FOUND for an index out of range. */
MOE_API moe_status moe_fitter_option_info(const moe_fitter_t *fitter, size_t index,
                                          moe_option_info *info);
/* The current value of an option by name (a keyword option: its index); MOE_ERR_NOT_FOUND
   for a name the fitter does not take. */
MOE_API moe_status moe_fitter_get_option(const moe_fitter_t *fitter, const char *name,
                                         double *value);

/*
 * Built-in estimators by name. Unknown name: MOE_ERR_NOT_FOUND.
 *
 *   "em"   Expectation-maximisation. The experts' M-steps are exact
 *          (weighted least squares for Gaussian experts, Newton with step
 *          halving for classification experts). The gate's M-step is what
 *          gate_solver says: by default (auto) one Newton step per
 *          iteration, halved until it lowers the gate objective, a
 *          generalised EM with exact EM's fixed points, its direction from
 *          the Hessian for small gates (newton_step) or by conjugate gradients
 *          without one for large ones (hessian_free); newton solves it to
 *          gate_tol (the exact M-step, textbook EM); bound takes one
 *          fixed-curvature step. Every choice increases the EM surrogate, so
 *          the objective never decreases. With inner_steps > 0 the gate and
 *          classification experts take that many gradient steps per
 *          iteration instead (the inexact variant).
 *   "gem"  Gradient EM: one gradient step per block (gate, experts) on the EM
 *          surrogate per iteration, with per-block step sizes (step,
 *          gate_step).
 *   "gd"   Gradient descent on the mean negative log-likelihood (plus
 *          penalties) with one step size; full batch by default, shuffled
 *          seeded mini-batches with batch_size (an iteration is then one
 *          pass over the data), optional Armijo backtracking.
 *   "cqt"  The tensor method (Makkuva et al.): the experts' directions from
 *          the cross moments of x with cubic and quadratic transforms of y,
 *          then the gate by EM with those experts held. Gaussian experts
 *          (any link) without intercepts, K <= d, x roughly Gaussian and
 *          centred; data that break this are an error with a message. No
 *          start to choose, so no local optimum of the experts; slower and
 *          less accurate than em where em finds the optimum.
 *   "ismm" Incremental stochastic majorisation-minimisation (streaming):
 *          moe_fitter_partial_fit on batches of any size, memory independent
 *          of the stream's length, a session saved and resumed with
 *          moe_fitter_save_state; moe_fitter_fit runs epochs over the rows.
 *   "ot"   Distributed learning by optimal-transport aggregation: fit splits
 *          the rows into shards fitted by local em runs and reduces their
 *          models into one; moe_fitter_aggregate reduces models fitted
 *          elsewhere (libmoe_mpi does this across ranks). Gaussian experts
 *          with the identity link and (since 1.1) Poisson experts; other
 *          families are MOE_ERR_UNSUPPORTED.
 * Their own options (schedules, shards, the tensor's restarts, ...) are
 * listed with type, default, bounds and a line each by
 * moe_fitter_option_info (on the command line: moe options ESTIMATOR).
 *
 * Safe steps. With lambda = the largest eigenvalue of E_w[x~ x~'] (computed
 * once per fit), the default step of a block is 1 / (c lambda + penalty),
 * where c bounds the block's curvature: gate 1/4 for two experts, else 1/2;
 * Gaussian experts 1/sigma^2_min (current variances); logistic experts 1/4;
 * multinomial experts 1/2. gd takes the smallest of its blocks. Gaussian
 * log-variances (unless update_variance is 0) take a gradient step of size
 * one on the mean scale, each change clamped to [-1, 1].
 *
 * t experts (since 1.1): gem and gd take nu as one more parameter, stepped in
 * log nu like the log-variances (size one, clamped to [-1, 1], nu kept in
 * [MOE_DEGREES_MIN, MOE_DEGREES_MAX]) unless update_degrees is 0; coefficients
 * take the safe step with c = max_k (nu_k + 1) / (nu_k sigma_k^2), and their
 * squared scales step like Gaussian log-variances. Like the log-variances,
 * the nu step is outside the safe steps' guarantee (hold both for a monotone
 * gem or gd, or use gd's line_search = armijo). The gradient in log nu falls
 * like 1/nu^2 for large nu, so on nearly Gaussian data gem and gd move nu
 * slowly where em's one-dimensional Newton solve jumps to it: fit such data with
 * em, or hold nu.
 */
MOE_API moe_status moe_fitter_create(moe_fitter_t **out, const char *estimator);
/* The built-in estimators, for tools and bindings that list them: indices 0 ..
   moe_estimator_count() - 1 in a fixed order (em, gem, gd, cqt, ismm, ot in
   1.0; later releases append). Name and one-line description; NULL for an
   index out of range. */
MOE_API size_t moe_estimator_count(void);
MOE_API const char *moe_estimator_name(size_t index);
MOE_API const char *moe_estimator_description(size_t index);
/* Free a fitter; NULL is a no-op. */
MOE_API void moe_fitter_free(moe_fitter_t *fitter);
/* Name of the fitter's estimator; NULL for a NULL fitter. */
MOE_API const char *moe_fitter_estimator_name(const moe_fitter_t *fitter);
/* Message of the last failing call on this fitter, including a failed fit
   (which leaves the model and its message untouched); "" if none. */
MOE_API const char *moe_fitter_last_error(const moe_fitter_t *fitter);

/*
 * Numeric options. Out-of-range values and options the estimator does not
 * use are rejected (MOE_ERR_INVALID_ARGUMENT / MOE_ERR_UNSUPPORTED) with a
 * message, and leave the fitter unchanged. set_int on a real-valued option
 * and set_double on an integer option with an integral value both work.
 */
MOE_API moe_status moe_fitter_set_int(moe_fitter_t *fitter, moe_option option, long long value);
MOE_API moe_status moe_fitter_set_double(moe_fitter_t *fitter, moe_option option, double value);
MOE_API moe_status moe_fitter_get_int(const moe_fitter_t *fitter, moe_option option,
                                      long long *value);
MOE_API moe_status moe_fitter_get_double(const moe_fitter_t *fitter, moe_option option,
                                         double *value);
/*
 * String form for command lines and bindings: the option's name and its
 * value in the C locale ("1e-8", "500", "kmeans"). Integer options take
 * decimal integers only ("500", not "5e2" or "0x1f4"); real options take
 * decimal numbers (sign, digits, optional fraction and exponent), not
 * hexadecimal, "inf" or "nan", and no surrounding spaces. A value that
 * overflows, or a nonzero value that underflows below the smallest normal
 * double, is MOE_ERR_INVALID_ARGUMENT with a message saying which. Names
 * the library does not pin are passed to the estimator's own set_option.
 */
MOE_API moe_status moe_fitter_set_option(moe_fitter_t *fitter, const char *name,
                                         const char *value);

/* Progress, passed to the callback after every iteration. */
#define MOE_PROGRESS_VERSION 1
typedef struct moe_progress {
    unsigned int version; /* MOE_PROGRESS_VERSION */
    size_t restart;       /* 0-based */
    size_t n_restarts;    /* restarts planned (the n_init option) */
    size_t iteration;     /* 1-based within the restart */
    double loglik;        /* log-likelihood after the iteration */
} moe_progress;

/* Return nonzero to cancel the fit (moe_fitter_fit then returns MOE_ERR_CANCELLED). */
typedef int (*moe_progress_fn)(const moe_progress *progress, void *user_data);
MOE_API moe_status moe_fitter_set_progress(moe_fitter_t *fitter, moe_progress_fn callback,
                                           void *user_data);

/*
 * Sums that travel (since 1.2): a fit whose rows are spread over several workers (MPI
 * ranks, Dask workers, threads) and gives the one-process fit of all their rows.
 *
 * Every pass the fit makes over its rows ends in sums that add across row sets (the
 * log-likelihood, the total weight, the gate's objective, gradient and Hessian, the
 * experts' statistics and Newton sums). With a combine function set, the fitter hands
 * each pass's sums of this worker's rows to it before using them; the function replaces
 * them with the sums over all workers' rows, the same bits on every worker (add in a
 * fixed order, or reduce on one worker and broadcast), so that every worker computes the
 * same iterate. Each worker calls moe_fitter_fit on its own rows with the same model,
 * options and start; the calls make the same sequence of combines.
 *
 * The request also carries the worker's outcome, so that a failure on one worker (a row
 * whose likelihood vanishes, memory, a bad value) becomes every worker's: the function
 * returns the same status and message on every worker. A request with `final` set is the
 * fit's last (count 0), made on every worker at the end of moe_fitter_fit whatever its
 * outcome; a worker that fails between passes sends its final request early, and the
 * others, then inside a pass, receive its failure (the function must tell a final request
 * from a pass's by the flag, not by the count). Once any request's outcome is a final
 * failure the fitter makes no further requests in that call.
 *
 * What a combined fit needs: estimator em (others: MOE_ERR_UNSUPPORTED), a start every
 * worker holds alike (init = model with n_init = 1, or init = custom with a start function
 * that does not read the rows: MOE_ERR_INVALID_ARGUMENT otherwise; libmoe_mpi's
 * moe_mpi_fit searches a start on a sample drawn from every rank), and at least one row
 * on each worker. The constant-response refusal of moe_fitter_fit is not made (it would
 * need every worker's rows). The separated-gate check and the report's log-likelihood are
 * over all rows. NULL removes the function: the fit is the one-process fit, bit for bit.
 */
#define MOE_COMBINE_VERSION 1
#define MOE_COMBINE_MESSAGE_SIZE 256
typedef struct moe_combine_request {
    unsigned int version; /* MOE_COMBINE_VERSION */
    double *values;       /* count sums: in, this worker's; out, all workers' */
    size_t count;
    moe_status status;    /* in: this worker's outcome so far; out: the one all return */
    int has_row;          /* a row failure: failed_row names the row */
    size_t failed_row;    /* in: the row in this worker's rows; out: in all rows, the
                             workers' rows taken in worker order */
    int final;            /* the fit's last request (values empty) */
    char *message;        /* MOE_COMBINE_MESSAGE_SIZE bytes: in, this worker's message when status
                             is a failure without a row; out, the message all return
                             (empty with a row failure: the fitter says what failed) */
} moe_combine_request;

/* Return MOE_OK after filling the request's outputs, or a status of the transport itself
   (the fit then fails with it and the function's message, if it wrote one). */
typedef moe_status (*moe_combine_fn)(void *user_data, moe_combine_request *request);
MOE_API moe_status moe_fitter_set_combine(moe_fitter_t *fitter, moe_combine_fn combine,
                                          void *user_data);

/*
 * Fit `model` to the data. On MOE_OK the model holds the best restart's
 * parameters in canonical order. On MOE_ERR_CANCELLED it holds the best
 * parameters reached before the cancel (if any iteration finished). On any
 * other error the model is unchanged. The report is filled in every case.
 * Gaussian or t experts and a response that is one constant over the rows of
 * positive weight, which an expert's mean can equal (a free intercept, no
 * offset, the constant inside the link's range): MOE_ERR_INVALID_ARGUMENT,
 * "the response is constant ..." (the variances would shrink to zero and the
 * likelihood grow without bound; since 1.2).
 */
MOE_API moe_status moe_fitter_fit(moe_fitter_t *fitter, moe_model_t *model, size_t n,
                                  const double *X, size_t ldx, const double *y,
                                  const double *weights);
/*
 * Streaming update for estimators that support it (others:
 * MOE_ERR_UNSUPPORTED). Consecutive calls form a session, which
 * moe_fitter_fit and moe_fitter_reset end: the report then covers the whole
 * session (counters and iterations add up; samples_seen and batches count
 * what the session processed; stages has MOE_STAGE_STREAM once the estimator
 * fitted anything, for ismm from its warm start on; stream_steps, stream_rows
 * and stream_loglik give its prequential log-likelihood; loglik and converged
 * are the last call's and mean little for a stream) and the trace is the
 * concatenation of every call's. Estimators declare
 * whether they take batches smaller than the number of free parameters and
 * whether the model keeps its expert order between calls (moe/estimator.h);
 * a failed call leaves the model and the session as they were. A cancelled
 * call (MOE_ERR_CANCELLED) is a failed call: samples_seen does not count its
 * rows, and the built-in ismm consumes none of them, so a stream resumed from
 * samples_seen gives the model of the stream in one go.
 */
MOE_API moe_status moe_fitter_partial_fit(moe_fitter_t *fitter, moe_model_t *model, size_t n,
                                          const double *X, size_t ldx, const double *y,
                                          const double *weights);
/* End the streaming session: the estimator forgets what it accumulated. */
MOE_API moe_status moe_fitter_reset(moe_fitter_t *fitter);

/*
 * Combine `count` fitted models into `model` (estimators that support it,
 * such as a distributed reduction; others: MOE_ERR_UNSUPPORTED). The models
 * must have model's family, link, features, intercept, classes and the inputs
 * its gate and experts see (masks and offset; MOE_ERR_DIMENSION otherwise),
 * each with any number of experts; model_weights (count values >= 0, not all 0) weigh
 * them, NULL for equal weights. Optional support rows (n may be 0, then X,
 * y and weights are ignored; y may be NULL) are the data the combination is
 * judged on. model receives the result as from moe_fitter_fit.
 */
MOE_API moe_status moe_fitter_aggregate(moe_fitter_t *fitter, moe_model_t *model, size_t count,
                                        const moe_model_t *const *models,
                                        const double *model_weights, size_t n, const double *X,
                                        size_t ldx, const double *y, const double *weights);

/*
 * Since 1.3: what a fit's summary needs from its rows, on the fitter's threads
 * (MOE_OPT_THREADS; the same bits for any number), at the model (usually the one this
 * fitter just fitted to these rows):
 *   criteria    as moe_model_criteria (set its version first), or NULL;
 *   mean_gate   each expert's mean gate probability, sum_i w_i pi_k(x_i) / sum_i w_i
 *               (mean_gate_length >= K values), or NULL;
 *   covariance  as moe_model_vcov_penalized with the fitter's gate_l2 and expert_ridge
 *               (the Laplace covariance of the objective this fitter maximises; without
 *               penalties moe_model_vcov's), covariance_length values, or NULL.
 * The covariance and the mean gate come from one pass, the criteria from the E-step's (the
 * same bits as moe_model_criteria): about as much as moe_model_information alone, where
 * the separate calls read the rows three times. A covariance that does not exist does not fail the summary:
 * *covariance_status (not NULL when covariance is not) receives MOE_ERR_NUMERICAL (the
 * information is not positive definite: separation, an empty expert, not a maximum) or
 * MOE_ERR_UNSUPPORTED (a link without the information), the covariance is left
 * unspecified and moe_fitter_last_error says why; the return is MOE_OK with the criteria
 * and mean gate written. The return is an error for what fails the pass: NULL pointers,
 * sizes, data the model refuses (as moe_model_criteria), a row of zero likelihood.
 */
MOE_API moe_status moe_fitter_summarize(moe_fitter_t *fitter, const moe_model_t *model, size_t n,
                                        const double *X, size_t ldx, const double *y,
                                        const double *weights, moe_criteria *criteria,
                                        double *mean_gate, size_t mean_gate_length,
                                        double *covariance, size_t covariance_length,
                                        moe_status *covariance_status);

/*
 * A fitter's state, so that a streaming session can go on in another
 * process: the estimator's name, every option, the session's counters and
 * what the estimator keeps between calls. Versioned and checksummed like a
 * model file; the buffer functions follow the buffer convention of
 * moe/common.h. Loading needs a fitter of the same estimator
 * (MOE_ERR_INVALID_ARGUMENT otherwise) and rejects damaged bytes with
 * MOE_ERR_FORMAT, leaving the fitter as it was. Saving a file replaces it
 * as moe_model_save does.
 */
MOE_API moe_status moe_fitter_save_state(const moe_fitter_t *fitter, const char *path);
MOE_API moe_status moe_fitter_load_state(moe_fitter_t *fitter, const char *path);
MOE_API moe_status moe_fitter_save_state_buffer(const moe_fitter_t *fitter, void *buffer,
                                                size_t capacity, size_t *written);
MOE_API moe_status moe_fitter_load_state_buffer(moe_fitter_t *fitter, const void *buffer,
                                                size_t size);

/*
 * Report of the last fit. Set version before the call (MOE_FIT_REPORT_INIT, or
 * moe_fit_report_init below): later releases only append fields and fill no
 * more than the caller's version has, so a program built against this header
 * keeps working.
 *
 * Every fit or partial fit leaves a report, even one that failed (its
 * status field says how). Before the fitter's first fit there is none:
 * moe_fitter_get_report and moe_fitter_get_trace return
 * MOE_ERR_INVALID_ARGUMENT ("no fit has run"); the report's fields are then
 * zero, with loglik NaN and status MOE_ERR_INVALID_ARGUMENT, and the trace
 * length is 0.
 */
#define MOE_FIT_REPORT_VERSION 1
typedef struct moe_fit_report {
    unsigned int version;          /* set to MOE_FIT_REPORT_VERSION before the call */
    moe_status status;             /* what moe_fitter_fit returned */
    size_t iterations;             /* of the winning restart */
    size_t total_iterations;       /* over all restarts */
    double loglik;                 /* final log-likelihood (unpenalised) of the winning restart:
                                      the returned model's on the fit's rows (ot: evaluated
                                      after the reduction, whose trace is the negated
                                      transport cost; NaN for an aggregation without y) */
    int converged;                 /* winning restart met the tolerance */
    size_t n_restarts;             /* restarts run */
    size_t best_restart;           /* 0-based index of the winner */
    double seconds;                /* wall time of the whole fit */
    size_t monotonicity_violations;/* iterations that lowered the penalised objective by more
                                      than 1e-10 (N + |objective|), N the total weight */
    double worst_relative_decrease;/* largest such decrease / (N + |objective|), 0 if none */
    size_t degenerate_events;      /* expert updates skipped for vanishing weight */
    size_t inner_iterations;       /* Newton steps of the gate and classification experts, inner
                                      gradient steps, Armijo objective evaluations; all
                                      restarts */
    size_t gradient_evaluations;   /* full-data gradient evaluations, all restarts (gem, gd:
                                      one per iteration, an epoch for mini-batches; em:
                                      inner_steps per iteration; 0 for exact em) */
    size_t ridge_fallbacks;        /* singular systems solved with an added ridge */
    size_t line_search_failures;   /* gate Newton steps that found no decrease */
    size_t floored_variances;      /* variance updates raised to the floor */
    size_t separation_events;      /* unpenalised M-steps (gate or expert) whose weighted
                                      data were fitted perfectly: the optimum is at infinity and
                                      the weights grow until the Newton limit; set gate_l2 or
                                      expert_ridge */
    double step;                   /* last step size used (gd: after Armijo backtracking;
                                      gem and em: the experts') */
    double gate_step;              /* last gate step size used (gem, em with inner steps) */
    size_t samples_seen;           /* rows the streaming session has processed (partial
                                      fits; the rows of the data for a fit) */
    size_t batches;                /* partial_fit calls of the session (1 for a fit) */
    unsigned int stages;           /* MOE_STAGE_* flags: what the fit ran; 0 after partial
                                      fits that fitted nothing yet (ismm collecting the rows of
                                      its warm start: the model is the caller's, unchanged) */
    double stage_seconds[3];       /* wall time in each stage: [0] tensor, [1] gate,
                                      [2] joint (em, gem and gd count their whole loop, starts
                                      included, as [2], or [1] with update_experts = 0) */
    /* The start search of init = mixed (em, gem, gd; ot's local fits; ismm's warm start)
       does most of a default fit's work before the restarts' iterations begin: iterations
       and total_iterations count the restarts only, these count the search. */
    size_t search_runs;            /* EM runs of the search: one per start drawn, one per
                                      end point continued to convergence, one per move of
                                      the gate search; 0 when no search ran */
    size_t search_iterations;      /* EM iterations over those runs (on the search's
                                      sample of the rows, at most 2000 or 25 per free
                                      parameter) */
    /* A streaming session (partial fits, report.stages has MOE_STAGE_STREAM): its steps and
       its prequential log-likelihood. Each step scores its batch under the parameters
       before the step (rows the model has not yet learnt from), so
         stream_loglik / stream_rows
       is the session's average log-likelihood per row on unseen rows: it rises as the
       model learns, and it is the same however the stream is cut into calls or saved and
       resumed. The warm start's rows are not scored (there is no model before them), nor
       rows waiting for their batch; both are in samples_seen. After moe_fitter_fit these
       are 0; loglik, iterations and converged mean nothing for a session. */
    size_t stream_steps;           /* steps (batches stepped) of the session */
    size_t stream_rows;            /* rows scored by those steps */
    double stream_loglik;          /* sum of the steps' batch log-likelihoods, each under
                                      the parameters before its step (weighted rows count
                                      their weight in the sum, one row in stream_rows) */
    unsigned int warnings;         /* MOE_WARNING_* flags about the fitted model */
    double gate_transition;        /* the gate's smallest transition mass over experts:
                                      min_k sum_i w_i g_ik (1 - g_ik) / (N / n), in rows, on
                                      the fit's rows, after moe_fitter_fit with K > 1 (else
                                      NaN); see MOE_WARNING_GATE_SEPARATED */
} moe_fit_report;

/* Values of moe_fit_report.stages. */
#define MOE_STAGE_TENSOR 0x1u /* experts from the cross-moment tensor (cqt, init = tensor) */
#define MOE_STAGE_GATE 0x2u   /* the gate fitted with the experts held (cqt; update_experts = 0) */
#define MOE_STAGE_JOINT 0x4u  /* iterations on all parameters (em, gem, gd; cqt's refine) */
#define MOE_STAGE_STREAM 0x8u /* a streaming session (partial fits): read stream_steps,
                                 stream_rows and stream_loglik, not iterations or converged */

/*
 * Values of moe_fit_report.warnings.
 *
 * MOE_WARNING_GATE_SEPARATED: the gate separates the rows, so its maximum likelihood lies
 * at infinity. Expert k's gate logit moves the likelihood only through the rows in its
 * transitions, and the observed information of its coefficients is about
 * sum_i w_i g_ik (1 - g_ik) x_i x_i' (the gate's softmax curvature). When for some expert
 * that transition mass, in rows, is below MOE_GATE_SEPARATED_ROWS, no row lies in one of
 * its borders: sharpening the gate (its coefficients times c > 1) moves no row's
 * likelihood, the likelihood is flat towards infinity, the coefficients are where the
 * iterations stopped (in the thousands on mcycle with K = 3 or 4), and their standard
 * errors (1e5 and more) and p-values mean nothing; the experts' estimates and the gate's
 * borders (where its regions meet) are still fine. A finite optimum in which the gate
 * is merely steep keeps rows in its transitions (at least about one with overlapping
 * classes), and an ordinary fit's transition mass is a few rows or more: measured, 1.8
 * on mcycle with K = 2 (a steep but finite gate), 3.7 and more on faithful and NPreg, 8 to
 * 200 on simulated fits of K = 2 to 4, against 2e-6 (K = 3 and 4) and 1e-11 (K = 5) on
 * mcycle, whose gates run away. The bound lies orders of magnitude from both.
 * separation_events does not see this: the gate's M-step fits soft responsibilities,
 * which no finite gate matches exactly, and it stopped at 0 on mcycle; nor does the Newton
 * limit, which the gate's one step per iteration (gate_solver newton_step) never reaches.
 * The remedy is the gate_l2 option (a small penalty, 1e-4 say, gives a finite optimum and
 * penalised standard errors). Set after moe_fitter_fit with K > 1 and gate_l2 = 0 (a
 * penalised gate's optimum is finite); one pass over the rows.
 */
#define MOE_WARNING_GATE_SEPARATED 0x1u
#define MOE_GATE_SEPARATED_ROWS 0.01

#define MOE_FIT_REPORT_INIT                                                                   \
    { MOE_FIT_REPORT_VERSION, MOE_OK, 0, 0, 0.0, 0, 0, 0, 0.0, 0, 0.0, 0, 0, 0, 0, 0, 0, 0,    \
      0.0, 0.0, 0, 0, 0, { 0.0, 0.0, 0.0 }, 0, 0, 0, 0, 0.0, 0, 0.0 }
/* The same for bindings that cannot use macros: *report zeroed with the given version
   (1 .. MOE_FIT_REPORT_VERSION; MOE_ERR_UNSUPPORTED otherwise). */
MOE_API moe_status moe_fit_report_init(moe_fit_report *report, unsigned int version);

MOE_API moe_status moe_fitter_get_report(const moe_fitter_t *fitter, moe_fit_report *report);
/*
 * Log-likelihood after each iteration of the winning restart (entry 0 is the
 * starting point). Follows the buffer convention of moe/common.h: *length
 * receives the trace length; trace NULL with capacity 0 asks for it (MOE_OK);
 * a capacity below it is MOE_ERR_BUFFER_TOO_SMALL and copies nothing.
 */
MOE_API moe_status moe_fitter_get_trace(const moe_fitter_t *fitter, double *trace,
                                        size_t capacity, size_t *length);

#ifdef __cplusplus
}
#endif

#endif /* MOE_FITTER_H */
