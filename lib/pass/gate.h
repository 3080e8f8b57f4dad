/*
 * The softmax gate: logits, probabilities, and its M-step, a Newton (IRLS)
 * solve of the soft-label multinomial logistic problem. Every estimator that
 * updates the gate by Newton calls moe_gate_newton.
 */
#ifndef MOE_LIB_GATE_H
#define MOE_LIB_GATE_H

#include "common/data.h"
#include "model/model_impl.h"
#include "pass/softmax.h"

/* logits (rows x K) = block (rows x p) * gate' */
void moe_gate_logits(const struct moe_model *model, size_t rows, const double *block,
                     double *logits);

/* log pi (rows x K) for a block, in place of the logits. */
void moe_gate_log_proba(const struct moe_model *model, size_t rows, const double *block,
                        double *log_proba);

typedef struct moe_gate_options {
    double l2;          /* penalty on non-intercept weights, mean scale; see moe_gate_penalty */
    size_t max_newton;  /* Newton steps at most */
    double tolerance;   /* stop when the Newton decrement / 2 <= tolerance * (1 + |Q|) */
    size_t threads;     /* for the passes (common/parallel.h; 0: automatic) */
    /* NULL, or the Newton directions are Hessian-free, preconditioned by this p x p bound
       (moe_softmax_problem's curvature). */
    const double *curvature;
} moe_gate_options;

/* The gate_solver option's values (moe/fitter.h). */
enum {
    MOE_GATE_SOLVER_NEWTON = 0,
    MOE_GATE_SOLVER_BOUND = 1,
    MOE_GATE_SOLVER_NEWTON_STEP = 2,
    MOE_GATE_SOLVER_HESSIAN_FREE = 3,
    MOE_GATE_SOLVER_AUTO = 4
};

/* The solver gate_solver = `solver` means for K experts, p inputs and n rows: auto
   resolved by the measured cost of a step per unit of progress (bench/RESULTS.md), any
   other value itself. */
int moe_gate_solver_resolve(int solver, size_t K, size_t p, size_t n);

typedef struct moe_gate_report {
    size_t newton_steps;
    size_t ridge_fallbacks;       /* Hessian solved with an added ridge */
    size_t line_search_failures;  /* no step decreased the objective */
    size_t separations;           /* unpenalised responsibilities fitted perfectly */
} moe_gate_report;

#define MOE_GATE_REPORT_INIT { 0, 0, 0, 0 }

/*
 * Minimise Q(W) = (1/N) sum_i w_i [LSE_k(x_i' w_k) - sum_k r_ik x_i' w_k]
 *                + moe_gate_penalty(W, l2)
 * over the non-reference gate rows, starting from the model's gate, by
 * Newton steps with backtracking (pass/softmax.c). Q never increases beyond
 * rounding. resp is n x K; each row sums to one.
 */
moe_status moe_gate_newton(struct moe_model *model, const moe_data *data, const double *resp,
                           const moe_gate_options *options, moe_gate_report *report,
                           char *message);

/* `steps` gradient steps of size step_size on the same Q (the inexact M-step). `threads`,
   here and below, as for the passes of common/parallel.h. */
moe_status moe_gate_gradient_steps(struct moe_model *model, const moe_data *data,
                                   const double *resp, double l2, size_t threads, size_t steps,
                                   double step_size, char *message);

/* Gradient of Q at the model's gate over the free rows ((K - 1) x p values). With resp the
   posterior at the model, this is the gradient of the mean negative log-likelihood (plus the
   penalty's) with respect to the gate (Fisher identity). */
moe_status moe_gate_gradient(const struct moe_model *model, const moe_data *data,
                             const double *resp, double l2, size_t threads, double *gradient,
                             char *message);

/*
 * One majorise-minimise step on the same Q with Boehning's fixed curvature bound
 *   Hessian <= (I - 11'/K) (x) M,   M = E_w[x x'] / 2 + l2 D
 * (D: identity without the intercept), which holds over the K - 1 free rows for any
 * gate: W <- W - ((I + 11') (x) M^-1) gradient. Q never increases, no line search is
 * needed, and M is the same for every step of a fit, so a step costs one gradient pass
 * instead of a Hessian assembly. curvature holds M (p x p); work p (p + 2) doubles.
 */
moe_status moe_gate_bound_step(struct moe_model *model, const moe_data *data, const double *resp,
                               double l2, size_t threads, const double *curvature, double *work,
                               char *message);

/* The same step from the gradient of Q at the model's gate ((K - 1) x p, overwritten). */
moe_status moe_gate_bound_apply(struct moe_model *model, double *gradient,
                                const double *curvature, double *work, char *message);

/* The gate M-step as a softmax-regression problem (pass/softmax.h): targets resp. */
moe_softmax_problem moe_gate_problem(const struct moe_model *model, const moe_data *data,
                                     const double *resp, double l2);

/* The gate penalty (l2/2) sum_k ||w_k - mean_w||^2 over non-intercept inputs, at the
   model's gate: invariant to which expert is the reference. */
double moe_gate_penalty(const struct moe_model *model, double l2);

#endif
