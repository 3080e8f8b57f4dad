/*
 * libmoe: the estimator interface, for writing estimators outside libmoe.
 *
 * Every estimator, built-in or not, is a moe_estimator_ops table: em, gem and
 * gd are written against exactly this header, and a copy of any of them
 * compiled outside libmoe behaves bit for bit like the built-in. A custom
 * table goes through moe_fitter_create_custom; libmoe keeps no global
 * registry. docs/ARCHITECTURE.md draws the contract. This header is stable
 * (covered by the 1.x promise); the numerical kernels the built-in
 * estimators are made of are in moe/kernels.h, which is experimental.
 * moe/moe.h does not include either: an application never needs them.
 *
 * What the fitter does around an estimator's call:
 *   1. validates the data (finite, weights >= 0, labels valid for the family,
 *      sizes consistent) and, for fit, that there are at least as many rows
 *      of positive weight as free parameters;
 *   2. gives the estimator a private working copy of the caller's model;
 *   3. calls fit, partial_fit or aggregate with a moe_fit_context, through
 *      which the estimator reads the data, options and session, records
 *      iterations and counters, and calls the library's kernels (moe/kernels.h);
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
 * The table's version. A table says which version of this header it was compiled
 * against; libmoe reads the fields that version has, so a table compiled against an older
 * header keeps working when later releases append fields. moe_estimator_ops_init fills a
 * table of a given version with zeros for bindings that cannot use the macro.
 */
#define MOE_ESTIMATOR_ABI_VERSION 1

/* Flags (ops->flags). */
/* partial_fit accepts batches with fewer rows than the model has free parameters
   (a streaming estimator that accumulates statistics over batches). */
#define MOE_ESTIMATOR_SMALL_BATCHES 0x1u
/* partial_fit keeps the experts in the order of the session: the working model
   is not put in canonical order between calls, so per-expert statistics the
   estimator carries from call to call stay with their expert. */
#define MOE_ESTIMATOR_KEEPS_ORDER 0x2u
/* Since 1.2. The values the estimator records (moe_context_iteration) are its own
   objective, not the log-likelihood (ot records the negated transport cost): the trace
   keeps them, and the fitter evaluates the returned model's log-likelihood on the call's
   rows for moe_fit_report.loglik (NaN when the rows have no responses, as in an
   aggregation without y). */
#define MOE_ESTIMATOR_OWN_OBJECTIVE 0x4u
/* Since 1.2. Every sum the estimator's fit makes over the call's rows goes through the
   kernels of moe/kernels.h (moe_context_parallel for its own), and it reads no row
   directly: with the fitter's combine function (moe_fitter_set_combine) each worker of a
   combined fit then computes the same iterate. em has it. */
#define MOE_ESTIMATOR_COMBINES 0x8u

typedef struct moe_fit_context moe_fit_context;

typedef struct moe_estimator_ops {
    unsigned int abi_version; /* MOE_ESTIMATOR_ABI_VERSION */
    const char *name;         /* non-empty; must outlive the fitters */
    /* Allocate per-fitter state (may set *state to NULL). Required. */
    moe_status (*create)(void **state);
    /* Release the state. Required. */
    void (*destroy)(void *state);
    /* Batch fit. Required. */
    moe_status (*fit)(void *state, moe_fit_context *context);
    /* Streaming update (moe_fitter_partial_fit); NULL if unsupported. */
    moe_status (*partial_fit)(void *state, moe_fit_context *context);
    /* Forget what partial_fit accumulated: moe_fitter_reset, and before every
       moe_fitter_fit. NULL when there is nothing to forget. */
    moe_status (*reset)(void *state);
    /* Combine the context's models (moe_context_models) into the working model:
       moe_fitter_aggregate. NULL if unsupported. */
    moe_status (*aggregate)(void *state, moe_fit_context *context);
    /* The state a streaming session needs to go on elsewhere, for
       moe_fitter_save_state: the buffer convention of moe/common.h (NULL buffer
       and capacity 0 ask for the size). NULL when the state holds nothing
       between calls. */
    moe_status (*save_state)(const void *state, void *buffer, size_t capacity,
                             size_t *written);
    /* Restore what save_state wrote (moe_fitter_load_state); MOE_ERR_FORMAT for
       bytes it did not write. Required with save_state. */
    moe_status (*load_state)(void *state, const void *buffer, size_t size);
    /* MOE_OPTION_BIT of every pinned option the estimator reads; setting any
       other on its fitter is MOE_ERR_UNSUPPORTED. */
    unsigned long long options;
    /* MOE_ESTIMATOR_* flags. */
    unsigned int flags;
    /*
     * The estimator's own options, declared once: option_count entries (version
     * MOE_OPTION_INFO_VERSION, number 0, names unlike the pinned options' and each
     * other's, the default within the bounds; keyword options list their keywords,
     * their bounds and flags are ignored). A name is a letter followed by letters,
     * digits or '_', a keyword the same or '-' (ASCII, at most 63 bytes, each keyword
     * once), so that `name=value` on a command line can set it (since 1.2; other tables
     * are refused with MOE_ERR_INVALID_ARGUMENT). The table must outlive the fitters.
     * The fitter parses moe_fitter_set_option's text against the entry (type,
     * bounds, keywords) and passes the value to set_option: entry `index`, the value
     * integral for integer and keyword options. At creation it sets every default
     * this way, so the table is the only place a default is written. set_option may
     * still refuse a valid value (MOE_ERR_INVALID_ARGUMENT: a setting that cannot
     * change in the middle of a streaming session, say) and must then keep the old
     * one; get_option reads a value back. Both are required with a table.
     */
    const moe_option_info *option_table;
    size_t option_count;
    moe_status (*set_option)(void *state, size_t index, double value);
    moe_status (*get_option)(const void *state, size_t index, double *value);
} moe_estimator_ops;
/* *ops zeroed with the given version (1 .. MOE_ESTIMATOR_ABI_VERSION). */
MOE_API moe_status moe_estimator_ops_init(moe_estimator_ops *ops, unsigned int version);

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
   rows of its own from them (a mini-batch) and pass those to the kernels (moe/kernels.h),
   which then validate them. */
/* The rows of this call (for an aggregation: the support rows, maybe none). */
MOE_API moe_status moe_context_rows(const moe_fit_context *context, moe_rows *rows);
/* The data of this call (any out-pointer may be NULL). */
MOE_API moe_status moe_context_data(const moe_fit_context *context, size_t *n, const double **X,
                                    size_t *ldx, const double **y, const double **weights);
/* The fitter's option values (gate_solver auto reads as the solver it resolves to for the
   call's shape: newton_step or hessian_free, moe/fitter.h). */
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
    MOE_COUNTER_SEARCH_RUNS = 9,       /* an estimator that fits with
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

/* Rows' total weight N: the sum of the weights, n without weights. */
MOE_API moe_status moe_context_total_weight(const moe_fit_context *context, const moe_rows *rows,
                                            double *total);

/* ---- Starting points -------------------------------------------------------------------- */

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

#ifdef __cplusplus
}
#endif

#endif /* MOE_ESTIMATOR_H */
