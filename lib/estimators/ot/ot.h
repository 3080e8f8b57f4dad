/*
 * The distributed estimator ot (docs/ARCHITECTURE.md, "Distributed learning"), in pieces:
 *   ot_reduce.c  the reduction of several fitted mixtures into one with K experts: the
 *                transport MM on a supporting sample, the reduced gate by soft-label softmax
 *                regression, and the paper's two baselines (middle model, weighted average)
 *   ot.c         the estimator: shards, local fits on the threads, the reduction; and
 *                moe_fitter_aggregate's operation
 * Both reach models and data through the public headers only.
 */
#ifndef MOE_LIB_OT_H
#define MOE_LIB_OT_H

#include "moe/kernels.h"

typedef enum ot_method {
    OT_TRANSPORT = 0, /* the reduction estimator R: transport MM, then the gate */
    OT_MIDDLE = 1,    /* Mid: the local model closest to all the others */
    OT_AVERAGE = 2    /* W: the component-wise weighted average of canonically ordered models */
} ot_method;

typedef enum ot_gate_targets {
    OT_GATE_PLAN = 0,     /* the plan's marginals a_sk (the paper) */
    OT_GATE_POSTERIOR = 1 /* a_sk N(y_s; mu_k, v_k), normalised (the authors' code) */
} ot_gate_targets;

typedef struct ot_options {
    ot_method method;
    ot_gate_targets gate_targets;
    size_t max_iter, restarts;
    double tolerance;
    double screen; /* nats per row: local models this far below the best are left out (0: none) */
    uint64_t seed;
} ot_options;

/*
 * Reduce `count` models (weights summing to 1) into `target` (its K, its structure) on the
 * support rows (the transport method needs them; y for posterior gate targets and for
 * options->screen, which leaves out the local models that far below the best).
 * Records the negated transport objective per MM iteration on restart r's trace.
 */
/* MOE_ERR_UNSUPPORTED, with a message, for a family the reduction is not derived for: a fit
   refuses it whatever its number of shards, so that one shard does not fit what several
   cannot. */
moe_status ot_check_family(moe_fit_context *context, const moe_model_t *model);

/* ot_baselines.c: MOE_ERR_DIMENSION unless every model has the target's K; W, the
   component-wise average of the canonically ordered models; and the screen, which keeps in
   `kept` (and their renormalised weights) the models within `gap` nats per support row of
   the best (every model without the support's responses or with gap 0). */
moe_status ot_same_k(moe_fit_context *context, const moe_model_t *target, size_t count,
                     const moe_model_t *const *models);
moe_status ot_average(moe_fit_context *context, moe_model_t *target, size_t count,
                      const moe_model_t *const *models, const double *weights);
moe_status ot_screen(moe_fit_context *context, size_t count, const moe_model_t *const *models,
                     const double *weights, const moe_rows *support, double gap,
                     const moe_model_t **kept, double *kept_weights, size_t *n_kept);

moe_status ot_reduce(moe_fit_context *context, moe_model_t *target, size_t count,
                     const moe_model_t *const *models, const double *weights,
                     const moe_rows *support, const ot_options *options);

#endif
