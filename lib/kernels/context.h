/*
 * The fit context behind moe_fit_context (moe/estimator.h, moe/kernels.h): everything one
 * call of an estimator sees and the kernels work with. The kernels own it: the fitter
 * describes the call (moe_context_setup), creates the context, hands it to the estimator and
 * reads the outcome from it, then releases it. The context holds copies of what it needs
 * (the option values, the hooks, the session's counts) and pointers to where its results go
 * (the report and the message of the fitter that made it), so that no kernel reads the
 * fitter itself.
 */
#ifndef MOE_LIB_CONTEXT_H
#define MOE_LIB_CONTEXT_H

#include "moe/estimator.h"
#include "moe/kernels.h"
#include "common/data.h"
#include "common/error.h"
#include "kernels/options.h"
#include "model/model_impl.h"

/*
 * Run a built-in estimator, found by name, on a context the kernels made: what init = tensor
 * does with "cqt". options are the estimator's own, "name", "value" pairs ending in NULL. The
 * estimator writes the context's working model; its status is returned, its message in the
 * context's. The fitter, which keeps the table of built-in estimators, provides it.
 */
typedef moe_status (*moe_estimator_runner)(const char *estimator, const char *const *options,
                                           moe_fit_context *context);

/* What the fitter tells about a call when it creates its context. */
typedef struct moe_context_setup {
    moe_fit_call call;
    moe_data data;                /* the call's rows, validated */
    const struct moe_model *model; /* the caller's: the working model and the start copy it */
    /* an aggregation's models and their weights as the caller gave them (NULL: equal) */
    const moe_model_t *const *models;
    const double *model_weights;
    size_t n_models;
    moe_option_values options;     /* the pinned options' values */
    unsigned long long option_mask; /* the pinned options the estimator reads */
    moe_start_fn start;            /* init = custom */
    void *start_data;
    moe_progress_fn progress;
    void *progress_data;
    moe_estimator_runner run_estimator;
    size_t samples_seen, batches;  /* the streaming session before this call */
    double search_cost;            /* the last start search's cost, kept until a search runs */
    moe_fit_report *report;        /* the report the kernels add counters to */
    char *message;                 /* MOE_MESSAGE_SIZE bytes: the message of a failure */
} moe_context_setup;

typedef struct moe_trace {
    double *values;
    size_t length;
    size_t capacity;
} moe_trace;

struct moe_fit_context {
    moe_fit_call call;
    struct moe_model *model; /* working copy */
    moe_data data;
    /* an aggregation's models and their normalised weights */
    const moe_model_t *const *models;
    double *model_weights;
    size_t n_models;
    moe_option_values options;
    unsigned long long option_mask;
    moe_start_fn start_function;
    void *start_data;
    moe_progress_fn progress;
    void *progress_data;
    moe_estimator_runner run_estimator;
    size_t samples_seen, batches;
    moe_fit_report *report;
    char *message;
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
       (kernels/start_search.c); rows times EM iterations of the last search (for tests) */
    struct moe_model **start_candidates;
    size_t n_start_candidates;
    int start_searched;
    moe_data start_rows;
    double search_cost;
};

/*
 * A context for the call `setup` describes: the working model and the start are copies of
 * setup->model, an aggregation's weights are normalised to sum to one. On failure (memory)
 * *out is NULL and setup->message says why.
 */
moe_status moe_context_create(moe_fit_context **out, const moe_context_setup *setup);

/* Free the context and all it holds; NULL is a no-op. */
void moe_context_release(moe_fit_context *context);

#endif
