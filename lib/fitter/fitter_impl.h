/*
 * The fitter handle. Only the fitter's own files include this: the kernels see a call
 * through its fit context (kernels/context.h), which the fitter creates, and estimators see
 * both through the public headers alone.
 */
#ifndef MOE_LIB_FITTER_IMPL_H
#define MOE_LIB_FITTER_IMPL_H

#include "moe/kernels.h"
#include "common/data.h"
#include "common/error.h"
#include "kernels/context.h"
#include "kernels/options.h"
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
    /* init = mixed: rows times EM iterations the last start search ran (its cost, for the
       tests), which each call's context carries and hands back. */
    double search_cost;
    char message[MOE_MESSAGE_SIZE];
};

/* The runner a fitter gives its contexts (moe_estimator_runner, kernels/context.h). */
moe_status moe_fitter_run_builtin(const char *estimator, const char *const *options,
                                  moe_fit_context *context);

/* MOE_OK when the estimator's option table is one the fitter can use; else why not. */
moe_status moe_option_table_check(const moe_estimator_ops *ops);

#endif
