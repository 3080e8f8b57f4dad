/*
 * The streaming estimator ismm (docs/ARCHITECTURE.md, "The streaming estimator"), in pieces:
 *   ismm_statistics.c  the surrogate's per-sample statistics summed over a batch, and the
 *                      closed-form M-step (the gate's Kronecker fast path and dense solve)
 *   ismm.c             the estimator: options, the step schedule, the warm start, sessions
 *                      over partial_fit, epochs for fit, Polyak averaging, saved states
 * Both reach the data and the model through moe/estimator.h only.
 */
#ifndef MOE_LIB_ISMM_H
#define MOE_LIB_ISMM_H

#include "moe/kernels.h"

#include <stddef.h>

/* The quadratic bound on the log-sum-exp's Hessian diag(p) - p p' over m free classes:
   A = a1 (I - J/m) + a2 J/m. The local bound is Jaakkola and Jordan's on a two-expert gate
   (ismm_statistics.c): its curvature is each row's, at the row's current logit, and lives in
   the statistics; elsewhere (more experts, classification experts) it is Boehning's. */
typedef enum ismm_bound {
    ISMM_BOUND_PAPER = 0,
    ISMM_BOUND_BOHNING = 1,
    ISMM_BOUND_LOCAL = 2
} ismm_bound;
void ismm_bound_coefficients(ismm_bound bound, size_t m, double *a1, double *a2);
/* The gate's A over its m free rows: with the local bound on two experts a1 = a2 = 1, the
   rows' curvatures being in gate_gram. */
void ismm_gate_coefficients(ismm_bound bound, size_t m, double *a1, double *a2);
/* Whether the gate's curvature is each row's (the local bound, two experts). */
int ismm_gate_is_local(ismm_bound bound, size_t m);

/* The model's shape as the statistics see it. */
typedef struct ismm_shape {
    size_t K, d, p;  /* experts, features, inputs (d + intercept) */
    size_t rows;     /* free expert rows: 1, or classes - 1 */
    int gaussian;    /* Gaussian experts (else logistic or multinomial) */
    int intercept;
    int multinomial; /* the model keeps rows + 1 class rows, the last the reference (zero);
                        labels are class indices, where logistic's y = 1 is the free row */
    /* The inputs the gate and the experts see (common/inputs.h; NULL: every input), the
       session's copy of the model's at this call: the M-step holds the others at zero. */
    const unsigned char *gate_inputs, *expert_inputs;
} ismm_shape;

/*
 * Running statistics s, each a mean over rows:
 *   gate_vector   (K-1) x p   mean of (g~ - tau~) (x) u - kron(A, u u') w - eps w (local
 *                             bound: c(a) u u' w for kron(A, u u') w)
 *   gate_gram     p x p       mean of u u' (local bound: of c(a) u u', the row's curvature at
 *                             its current logit a)
 *   weight        K           mean of tau_k
 *   gram          K x p x p   mean of tau_k r r'
 *   vector        K x rows x p  Gaussian: mean of tau_k y r; classification: mean of
 *                             tau_k [(p~_k - e~_y) (x) r - kron(A_M, r r') c_k] - eps tau_k c_k
 *   square        K           Gaussian: mean of tau_k y^2
 */
typedef struct ismm_statistics {
    double *gate_vector, *gate_gram, *weight, *gram, *vector, *square;
} ismm_statistics;

size_t ismm_statistics_size(const ismm_shape *shape);
/* Lay the arrays over `storage` (ismm_statistics_size doubles). */
void ismm_statistics_map(const ismm_shape *shape, double *storage, ismm_statistics *s);

/* The parameters: gate K x p (last row 0), experts K x rows x p, variances K (Gaussian). */
typedef struct ismm_parameters {
    double *gate, *experts, *variances;
} ismm_parameters;

size_t ismm_parameters_size(const ismm_shape *shape);
void ismm_parameters_map(const ismm_shape *shape, double *storage, ismm_parameters *theta);

typedef struct ismm_surrogate {
    ismm_bound bound;
    double eps; /* eps* of the gate's and classification experts' curvature */
} ismm_surrogate;

/*
 * The batch mean of the per-sample statistics at theta over `rows` (on the fitter's threads)
 * into `out` (a mean, laid out like ismm_statistics over `storage`), the rows' total weight
 * and log-likelihood at theta. context NULL: on this thread, status without a message. On
 * MOE_ERR_NUMERICAL, *failed_row (when not NULL) is the lowest row of `rows` whose
 * log-likelihood is not finite, so that the caller can name it in its own numbering.
 */
moe_status ismm_batch_statistics(moe_fit_context *context, const ismm_shape *shape,
                                 const ismm_surrogate *surrogate, const ismm_parameters *theta,
                                 const moe_rows *rows, double *storage, double *total_weight,
                                 double *loglik, size_t *failed_row);

typedef struct ismm_mstep_report {
    size_t ridge_fallbacks, floored_variances, frozen_experts;
} ismm_mstep_report;

typedef enum ismm_gate_solve { ISMM_GATE_KRONECKER = 0, ISMM_GATE_DENSE = 1 } ismm_gate_solve;

/*
 * theta = the minimiser of the surrogate with statistics s: the gate by the Kronecker fast
 * path or the dense solve, each expert by its weighted least squares (Gaussian, variance
 * floored at variance_floor) or its quadratic-bound step (classification). Experts whose mean
 * responsibility is below min_weight keep their parameters. Nonzero when a solve fails.
 */
int ismm_mstep(const ismm_shape *shape, const ismm_surrogate *surrogate,
               ismm_gate_solve gate_solve, const ismm_statistics *s, double variance_floor,
               double min_weight, ismm_parameters *theta, ismm_mstep_report *report);

/* The gate alone (tests compare the two solves). */
int ismm_gate_mstep(const ismm_shape *shape, const ismm_surrogate *surrogate,
                    ismm_gate_solve gate_solve, const double *gate_vector,
                    const double *gate_gram, double *gate, size_t *ridge_fallbacks);

#endif
