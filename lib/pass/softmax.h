/*
 * Weighted softmax regression with soft or hard targets: the one kernel behind
 * the gate's M-step and the logistic and multinomial experts' M-steps and
 * gradients. Each of those is the problem
 *
 *   min_B  Q(B) = (1/N) sum_i v_i [ LSE_c(x_i' b_c) - sum_c t_ic x_i' b_c ] + penalty(B)
 *
 * over a C x p coefficient matrix B whose last row is fixed at zero (the
 * reference class), with row weights v_i = w_i * s_i (data weight times an
 * optional per-row scale, e.g. an expert's responsibilities) and targets t
 * (soft responsibilities, or one-hot labels).
 *
 *   gate:               C = K, t = responsibilities, s = 1, centred penalty
 *   logistic expert k:  C = 2 (class 1 is row 0), t = labels, s = r_k, plain ridge
 *   multinomial exp. k: C classes, t = labels, s = r_k, centred penalty
 */
#ifndef MOE_LIB_SOFTMAX_H
#define MOE_LIB_SOFTMAX_H

#include "common/data.h"
#include "moe/common.h"
#include "pass/newton.h"

#include "moe/kernels.h" /* MOE_NEWTON_MAX_UNKNOWNS: larger Newton systems are refused */

/* Whether a softmax objective's data term (sum scale) over rows of total weight `weight` is
   fitted perfectly: below 1e-9 per unit weight the unpenalised optimum is at infinity. The
   library's one separation threshold. */
int moe_softmax_separated(double data_sum, double weight);

typedef struct moe_softmax_problem {
    const moe_data *data;
    size_t n_classes;        /* C >= 2 */
    const double *targets;   /* n x C soft targets (rows sum to 1), or NULL to use labels */
    const double *labels;    /* n class indices (integral doubles) when targets is NULL */
    int label_is_first_row;  /* binary coding: label 1 -> row 0, label 0 -> the reference row */
    const double *row_scale; /* NULL, or row i's weight is multiplied by row_scale[i * stride] */
    size_t row_scale_stride;
    double total_weight;     /* N; the objective is a mean over it */
    double l2;               /* penalty strength (0: none) */
    int centred;             /* penalise rows centred over classes (else the stored rows) */
    size_t threads;          /* for the passes (common/parallel.h; 0: automatic) */
    const unsigned char *inputs; /* NULL, or the inputs B's rows may use (common/inputs.h):
                                    the derivatives of held ones are made zero steps */
    /* NULL, or moe_softmax_newton's directions are Hessian-free: truncated conjugate
       gradients on Hessian-vector products (one pass each at stored probabilities),
       preconditioned by (I - 11'/C) (x) curvature, curvature p x p symmetric positive
       definite (the gate's fixed-curvature bound E_w[x x'] / 2 plus the penalty, restricted
       to the inputs). No Hessian is formed, and there is no limit on the unknowns. */
    const double *curvature;
} moe_softmax_problem;

/* The penalty term of Q at B (C x p; the intercept column is never penalised). */
double moe_softmax_penalty(const moe_softmax_problem *problem, const double *coefficients);

/* Q at B. */
moe_status moe_softmax_objective(const moe_softmax_problem *problem, const double *coefficients,
                                 double *objective, char *message);

/*
 * Gradient of Q over the free rows ((C - 1) x p values) and, if objective is
 * not NULL, Q itself, at B.
 */
moe_status moe_softmax_gradient(const moe_softmax_problem *problem, const double *coefficients,
                                double *gradient, double *objective, char *message);

/*
 * Minimise Q from B by Newton steps with backtracking; Q never increases
 * beyond rounding. B is updated in place.
 */
moe_status moe_softmax_newton(const moe_softmax_problem *problem, double *coefficients,
                              const moe_newton_options *options, moe_newton_report *report,
                              char *message);

/*
 * The Hessian-free direction at B (problem->curvature set): conjugate gradients on H d = -g
 * from d = 0 until the preconditioned residual is `tolerance` times the gradient's, or
 * after `limit` Hessian-vector products (*products: how many). What moe_softmax_newton's
 * steps take with a forcing term; with a tight tolerance, the Newton direction.
 */
moe_status moe_softmax_hessian_free_direction(const moe_softmax_problem *problem,
                                             const double *coefficients, double *direction,
                                             double tolerance, size_t limit, size_t *products,
                                             char *message);

/*
 * The derivative kernel every softmax-regression pass shares (this file's passes and
 * EM's one pass per iteration). For one block (rows x p) with row weights v (rows),
 * class probabilities (rows x C) and residuals v_i (p_ic - t_ic) (rows x (C - 1)):
 *   gradient (C - 1) x p  += residuals' block
 * and when parts is not NULL, the Hessian's blocks (sum scale): for each pair of free
 * classes a <= b (moe_softmax_pair order) the Gram matrix block' diag(c_ab) block with
 * c_aa = v p_a (1 - p_a) and c_ab = v p_a p_b, whose upper triangle is kept; the
 * Hessian block (a, b) is that Gram, negated off the diagonal. Built this way the
 * Hessian takes (C - 1) C / 2 Gram matrices of order p instead of one rank update of
 * order (C - 1) p plus C - 1 of order p: about 40% fewer flops at C = 4, and the diagonal
 * weights have no cancellation when p_a is near 1.
 * scratch holds moe_softmax_scratch_size(rows, C, p) doubles.
 */
size_t moe_softmax_scratch_size(size_t rows, size_t n_classes, size_t p);
/* Doubles of the Hessian parts: (C - 1) C / 2 matrices of p x p. */
size_t moe_softmax_hessian_parts(size_t n_classes, size_t p);
void moe_softmax_block_derivatives(size_t rows, size_t p, size_t n_classes, const double *block,
                                   const double *weights, const double *probability,
                                   const double *residuals, double *gradient, double *parts,
                                   double *scratch);

/*
 * The Hessian's Gram weights c_ab of that kernel, (C - 1) C / 2 per row in pair order, into
 * out[i * stride + pair]: for a caller that sums the Hessian's Grams in one product with
 * Grams of its own (EM's pass, with the experts'), since at small p one product of all of
 * them is much cheaper than one per owner.
 */
void moe_softmax_pair_weights(size_t rows, size_t n_classes, const double *weights,
                              const double *probability, double *out, size_t stride);

/* The summed gradient to the mean-scale gradient of Q at B (penalty included), in place;
   zero on held inputs. */
void moe_softmax_finish_gradient(const moe_softmax_problem *problem, const double *coefficients,
                                 double *gradient);

/* The summed Hessian parts to the full symmetric m x m mean-scale Hessian of Q (penalty
   included), restricted to the free inputs (common/inputs.h). */
void moe_softmax_finish_hessian(const moe_softmax_problem *problem, const double *parts,
                                double *hessian);

/* The mean-scale Hessian of Q at B (m x m), as the Newton solver assembles it. */
moe_status moe_softmax_hessian(const moe_softmax_problem *problem, const double *coefficients,
                               double *hessian, char *message);

/* `steps` plain gradient steps of size step_size on Q from B, in place. */
moe_status moe_softmax_gradient_steps(const moe_softmax_problem *problem, double *coefficients,
                                      size_t steps, double step_size, char *message);

/*
 * moe_softmax_gradient_steps on `count` problems at once, each from its own C x p block of
 * `coefficients` (the blocks one after the other), in one pass over the rows per step
 * instead of `count`: one product gives every problem's logits, one more every gradient.
 * The problems must share their data, classes, labels (targets NULL) and label coding, and
 * their threads; they differ in their row scales (EM's multinomial experts: s = r_k), total
 * weights and penalties. Each problem's steps are those moe_softmax_gradient_steps takes.
 */
moe_status moe_softmax_gradient_steps_stacked(const moe_softmax_problem *problems, size_t count,
                                              double *coefficients, size_t steps,
                                              double step_size, char *message);

#endif
