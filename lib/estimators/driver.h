/*
 * The outer loop every iterative estimator (em, gem, gd) shares: settings
 * read from the options, restarts and their starting points, the E-step
 * after each iteration, the trace, the monotonicity check and convergence.
 * An estimator supplies only what one iteration does.
 */
#ifndef MOE_LIB_DRIVER_H
#define MOE_LIB_DRIVER_H

#include "estimators/fitter_impl.h"
#include "model/family.h"
#include "model/gate.h"
#include "model/posterior.h"

#include <stdint.h>

/* The pinned options the shared loop and the kernels read. */
#define MOE_ITERATION_OPTIONS                                                               \
    (MOE_OPTION_BIT(MOE_OPT_MAX_ITER) | MOE_OPTION_BIT(MOE_OPT_TOLERANCE) |                 \
     MOE_OPTION_BIT(MOE_OPT_N_INIT) | MOE_OPTION_BIT(MOE_OPT_SEED) |                        \
     MOE_OPTION_BIT(MOE_OPT_INIT) | MOE_OPTION_BIT(MOE_OPT_GATE_L2) |                       \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_RIDGE) | MOE_OPTION_BIT(MOE_OPT_VARIANCE_FLOOR) |        \
     MOE_OPTION_BIT(MOE_OPT_GATE_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_GATE_TOLERANCE) |     \
     MOE_OPTION_BIT(MOE_OPT_MIN_EXPERT_WEIGHT) | MOE_OPTION_BIT(MOE_OPT_UPDATE_VARIANCE) |  \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_EXPERT_TOLERANCE) |   \
     MOE_OPTION_BIT(MOE_OPT_THREADS) | MOE_OPTION_BIT(MOE_OPT_UPDATE_EXPERTS))

typedef struct moe_fit_settings {
    size_t max_iter;
    double tolerance;
    size_t n_init;
    uint64_t seed;
    moe_init_strategy init;
    double total_weight; /* N, the sum of the weights */
    moe_gate_options gate;
    moe_expert_mstep_options experts;
    size_t inner_steps;  /* em's inexact M-step */
    double step;         /* as requested; 0 means the safe step */
    double gate_step;    /* as requested; 0 means the safe step */
    size_t batch_size;   /* gd; 0 is full batch */
    int line_search;     /* gd; 1 is Armijo */
    size_t threads;      /* for passes over the data; 0 is automatic */
    double lambda;       /* lambda_max(E_w[x~ x~']) when the method takes gradient steps */
    int update_experts;  /* 0: the experts stay as the model has them (a gate-only fit) */
} moe_fit_settings;

typedef struct moe_iterative_method {
    int needs_safe_steps; /* compute settings.lambda before the first restart */
    /*
     * One outer iteration. On entry resp (n x K) holds the posterior at the
     * current model and objective its penalised objective (sum scale); the
     * method may overwrite resp. The driver then runs the E-step at the new
     * parameters.
     */
    moe_status (*iterate)(void *state, struct moe_fit_context *context,
                          const moe_fit_settings *settings, double *resp, double objective,
                          size_t restart, size_t iteration);
    /*
     * Optional: the E-step at the current model in place of the driver's
     * moe_posterior_pass (the same contract: resp and the posterior at the
     * model), at the start of a restart (iteration 0) and after each iteration.
     */
    moe_status (*evaluate)(void *state, struct moe_fit_context *context,
                           const moe_fit_settings *settings, double *resp, size_t iteration,
                           moe_posterior_result *posterior);
    void *state;
} moe_iterative_method;

moe_status moe_iterative_fit(struct moe_fit_context *context, const moe_iterative_method *method);

/* The gate and expert penalties on the mean scale. */
double moe_fit_penalty(const struct moe_model *model, const moe_fit_settings *settings);

/* The penalised objective on the sum scale: loglik - N * penalty, N = settings->total_weight. */
double moe_fit_objective(const struct moe_model *model, const moe_fit_settings *settings,
                         double loglik);

/* Fold an expert M-step's or a gate step's counters into the fit report. */
void moe_report_expert_mstep(moe_fit_report *report, const moe_expert_mstep_report *experts);
void moe_report_gate(moe_fit_report *report, const moe_gate_report *gate);

#endif
