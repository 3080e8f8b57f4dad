/*
 * The tensor estimator cqt, in pieces (docs/ARCHITECTURE.md, "The tensor estimator"):
 *   cqt_constants.c  the cubic and quadratic transforms of y for a link (constants by
 *                    quadrature of the link's Hermite moments)
 *   cqt_moments.c    stage 1's two passes: x's mean and covariance with the whitened
 *                    second-order moment, then the whitened k x k x k third-order moment
 *   cqt_decompose.c  the symmetric k x k x k tensor's decomposition (robust power method with
 *                    deflation, or orthogonalised ALS)
 *   cqt_gate.c       stage 2: EM on the gate with the experts held (and the k = 2 moment gate)
 *   cqt.c            the estimator table, its options and the optional joint refinement (em's
 *                    init = tensor runs this estimator by name: kernels/start_tensor.c)
 * Everything here reaches the data and the model through moe/estimator.h only.
 */
#ifndef MOE_LIB_CQT_H
#define MOE_LIB_CQT_H

#include "moe/kernels.h"

#include <stddef.h>

/* Which ReLU constants (the other links have one set). */
typedef enum cqt_preset { CQT_PRESET_EXACT = 0, CQT_PRESET_PAPER = 1 } cqt_preset;

/*
 * P3(y) = y^3 + alpha y^2 + beta y and P2(y) = y^2 + gamma y, chosen so that for Z ~ N(0, 1)
 * and Y | Z ~ N(g(Z), sigma^2) the conditional means h3, h2 satisfy E[He1 h3] = E[He2 h3] =
 * 0 and E[He1 h2] = 0; c3 = E[He3 h3] and c2 = E[He2 h2] are what is left of the third and
 * second moments. u = beta + 3 sigma^2 does not depend on sigma; second_moment = E[g(Z)^2].
 */
typedef struct cqt_constants {
    double alpha, beta, gamma, c2, c3;
    double u;
    double second_moment;
} cqt_constants;

/* m[p][q] = E[He_p(Z) g(Z)^q], p, q = 0..3, for a link. */
typedef double (*cqt_link_fn)(double t);
/* By quadrature (Gauss-Legendre panels on [-14, 14] split at 0, so a kink at 0 is exact). */
void cqt_moments_by_quadrature(cqt_link_fn g, double moments[4][4]);
/* The link's moments: closed forms for identity and ReLU, quadrature for the sigmoid. */
void cqt_link_moments(moe_link link, double moments[4][4]);
/* The link function itself. */
cqt_link_fn cqt_link_function(moe_link link);

/* Solve the 2 x 2 system of the conditions; nonzero (with a message) when the system is
   singular or c2 or c3 vanishes: the link has no valid transform. */
int cqt_solve_constants(double moments[4][4], double sigma2, cqt_constants *constants,
                        char *message, size_t message_size);
/* The constants of a link (preset matters for ReLU only). */
int cqt_constants_for(moe_link link, cqt_preset preset, double sigma2, cqt_constants *constants,
                      char *message, size_t message_size);
/* The Hermite residuals E[He1 h3], E[He2 h3], E[He1 h2] of a set of constants for a link. */
void cqt_residuals(double moments[4][4], const cqt_constants *constants,
                   double residuals[3]);

/* ---- Stage 1 ------------------------------------------------------------------------------ */

typedef struct cqt_stage1 {
    size_t d, k;
    double total_weight;
    double y_mean, y_second;      /* E_w[y], E_w[y^2] */
    double sigma2;                /* the noise variance P3 was built with */
    double mean_distance;         /* sqrt(mean' C^-1 mean): how far x is from centred */
    double *mean;                 /* d */
    double *covariance;           /* d x d */
    double *whiten;               /* d x d: u = whiten' (x - mean) has identity covariance */
    double *nu;                   /* k + 1 eigenvalues of M2 in u, largest first (nu[k] is 0
                                     when d = k) */
    double *project;              /* d x k: z = project' (x - mean), the whitened moment's
                                     coordinates */
    double *unwhiten;             /* d x k: an expert's direction in x from one in z */
    double *tensor;               /* k x k x k whitened third moment */
} cqt_stage1;

void cqt_stage1_free(cqt_stage1 *stage);

/*
 * Both passes over the call's rows: the moments, the whitening and the whitened tensor.
 * sigma2 < 0 estimates the noise variance as E_w[y^2] - E[g(Z)^2] (unit-norm experts). Any
 * failure (singular covariance, fewer than k positive directions in M2) is a status with a
 * message on the context.
 */
moe_status cqt_stage1_run(moe_fit_context *context, const moe_rows *rows, size_t d,
                          moe_link link, cqt_preset preset, double sigma2, size_t k,
                          cqt_stage1 *stage);

/* The whitened tensor's pass alone (tests compare it with the explicit d^3 tensor): tensor
   (k^3) = E_w[P3 z^(x)3] / c3 - sym3(q (x) G), z = project' (x - mean), G = project' C
   project... as set in stage (mean, project, nu). */
moe_status cqt_whitened_tensor(moe_fit_context *context, const moe_rows *rows,
                               const cqt_constants *constants, cqt_stage1 *stage);

/* ---- Decomposition ------------------------------------------------------------------------ */

typedef enum cqt_method { CQT_POWER = 0, CQT_ALS = 1 } cqt_method;

/*
 * Decompose the symmetric k x k x k tensor (destroyed: deflated) as sum_i lambda_i
 * theta_i^(x)3 with unit theta_i (k x k, row i) and lambda_i > 0 (signs folded into theta).
 * restarts and iterations as in the robust tensor power method; the random starts come from
 * rng. Returns the number of components with lambda_i > 0 found (k when all are).
 */
size_t cqt_decompose(double *tensor, size_t k, cqt_method method, size_t restarts,
                     size_t iterations, moe_rng *rng, double *lambda, double *theta);

/* T(I, v, v) (k) and T(v, v, v) of a full symmetric k x k x k tensor. */
void cqt_tensor_apply(const double *tensor, size_t k, const double *v, double *out);
double cqt_tensor_value(const double *tensor, size_t k, const double *v);

/* ---- Stage 2 ------------------------------------------------------------------------------ */

typedef enum cqt_gate_method {
    CQT_GATE_EM = 0,       /* full M-step (Newton) per iteration */
    CQT_GATE_GRADIENT = 1, /* one whitened gradient step per iteration (gradient EM) */
    CQT_GATE_MOMENTS = 2   /* k = 2, identity link: the method-of-moments direction */
} cqt_gate_method;

typedef struct cqt_gate_options {
    cqt_gate_method method;
    double radius;         /* bound on each free gate row's whitened norm; 0: none */
    double change_tol;     /* stop when every free row moved less than this (whitened) */
    size_t max_iter;
    double step;           /* gradient EM step in whitened coordinates */
    int estimate_sigma;    /* update the shared variance in closed form every iteration */
    double variance_floor; /* absolute */
    int record;            /* record iterations on the context (not for em's start) */
} cqt_gate_options;

typedef struct cqt_gate_result {
    double objective;  /* penalised log-likelihood at the end */
    size_t iterations;
    int converged;
} cqt_gate_result;

/*
 * Fit the gate of `model` (its experts and variances set, no intercept) with the experts
 * held, from a start drawn in the whitened ball from rng. Works on the call's rows.
 */
moe_status cqt_gate_fit(moe_fit_context *context, moe_model_t *model, const cqt_stage1 *stage,
                        const cqt_gate_options *options, moe_rng *rng, size_t restart,
                        cqt_gate_result *result);

#endif
