/* Layout of the fitter handle and the fit context, shared by the built-in estimators. */
#ifndef MOE_LIB_FITTER_IMPL_H
#define MOE_LIB_FITTER_IMPL_H

#include "moe/estimator.h"
#include "common/data.h"
#include "common/error.h"
#include "estimators/options.h"
#include "model/model_impl.h"

/* A built-in estimator: its table and the pinned options it reads. */
typedef struct moe_builtin_estimator {
    const moe_estimator_ops *ops;
    unsigned long long option_mask;
} moe_builtin_estimator;

/* NULL for an unknown name. */
const moe_builtin_estimator *moe_builtin_find(const char *name);

extern const moe_estimator_ops moe_estimator_em;
extern const moe_estimator_ops moe_estimator_gem;
extern const moe_estimator_ops moe_estimator_gd;

struct moe_fitter {
    const moe_estimator_ops *ops;
    const moe_builtin_estimator *builtin; /* NULL for a custom estimator */
    void *state;
    moe_option_values options;
    moe_progress_fn progress;
    void *progress_data;
    moe_fit_report report;
    double *trace;       /* winning restart's trace */
    size_t trace_length;
    char message[MOE_MESSAGE_SIZE];
};

typedef struct moe_trace {
    double *values;
    size_t length;
    size_t capacity;
} moe_trace;

struct moe_fit_context {
    struct moe_fitter *fitter;
    struct moe_model *model; /* working copy */
    moe_data data;
    moe_trace *traces;       /* one per restart seen */
    size_t n_traces;
    size_t best_restart;
    int converged;
    int result_set;
    /* The fitted model's log-likelihood, evaluated by the fitter when the estimator named no
       result restart (moe_context_set_result) that the report could take it from. */
    double unrecorded_loglik;
    int loglik_evaluated;
};

#endif
