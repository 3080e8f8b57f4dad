/*
 * The fitter handle and the fit context. Only the fitter's own files (fitter*.c, context.c,
 * the kernels behind moe/estimator.h) include this: estimators see the context through the
 * public header alone.
 */
#ifndef MOE_LIB_FITTER_IMPL_H
#define MOE_LIB_FITTER_IMPL_H

#include "moe/kernels.h"
#include "common/data.h"
#include "common/error.h"
#include "fitter/options.h"
#include "model/model_impl.h"

/* The built-in estimators' tables, found by name (registry.c); NULL for an unknown name. */
const moe_estimator_ops *moe_builtin_find(const char *name);

extern const moe_estimator_ops moe_estimator_em;
extern const moe_estimator_ops moe_estimator_cqt;
extern const moe_estimator_ops moe_estimator_ismm;
extern const moe_estimator_ops moe_estimator_ot;
extern const moe_estimator_ops moe_estimator_gem;
extern const moe_estimator_ops moe_estimator_gd;

/* The streaming session partial_fit calls build up (moe_fitter_partial_fit). */
typedef struct moe_session {
    int active;
    size_t samples_seen;
    size_t batches;
    /* the report's stream_steps, stream_rows and stream_loglik (moe/fitter.h) */
    size_t steps;
    size_t scored_rows;
    double scored_loglik;
} moe_session;

struct moe_fitter {
    /* The estimator's table (version 1, the only one so far, is copied whole). */
    moe_estimator_ops ops;
    unsigned long long option_mask; /* pinned options the estimator reads */
    void *state;
    moe_option_values options;
    moe_progress_fn progress;
    void *progress_data;
    moe_start_fn start;
    void *start_data;
    moe_combine_fn combine; /* a combined fit (common/combine.h) */
    void *combine_data;
    moe_fit_report report; /* version 0 until a call has run */
    double *trace;         /* winning restart's trace (a session: every call's) */
    size_t trace_length;
    moe_session session;
    /* init = mixed: the start search's budget as a share of a full fit's (0: all of it;
       ot's local fits take their share of the rows, kernels/start_search.c), and the
       rows times EM iterations the last search ran (its cost, for the tests). */
    double search_share;
    double search_cost;
    char message[MOE_MESSAGE_SIZE];
};

typedef struct moe_trace {
    double *values;
    size_t length;
    size_t capacity;
} moe_trace;

struct moe_fit_context {
    struct moe_fitter *fitter;
    moe_fit_call call;
    struct moe_model *model; /* working copy */
    moe_data data;
    /* an aggregation's models and their normalised weights */
    const moe_model_t *const *models;
    double *model_weights;
    size_t n_models;
    moe_trace *traces; /* one per restart seen */
    size_t n_traces;
    size_t best_restart;
    int converged;
    int result_set;
    /* The fitted model's log-likelihood, evaluated by the fitter when the estimator named no
       result restart (moe_context_set_result) that the report could take it from. */
    double unrecorded_loglik;
    int loglik_evaluated;
    /* the caller's model as the call found it: init = model starts from it */
    struct moe_model *start;
    /* caches of the kernels (kernels/kernels.h), filled on first use */
    struct moe_fit_settings *settings;
    double lambda; /* lambda_max(E_w[x~ x~']) of the call's rows */
    int lambda_ready;
    double *gate_curvature; /* p x p: E_w[x~ x~'] / 2 + gate_l2 off the intercept */
    /* init = mixed: the search's end points, best first, and the rows they were found on
       (kernels/start_search.c) */
    struct moe_model **start_candidates;
    size_t n_start_candidates;
    int start_searched;
    moe_data start_rows;
};

/* Release what the kernels cached in a context. */
void moe_context_release(struct moe_fit_context *context);

/* MOE_OK when the estimator's option table is one the fitter can use; else why not. */
moe_status moe_option_table_check(const moe_estimator_ops *ops);

#endif
