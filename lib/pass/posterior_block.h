/*
 * The per-row arithmetic of one block of the E-step's pass (pass/posterior.c), on the
 * block by columns (common/columns.h): from the gate's logits and the experts' log
 * densities to the posterior and the weights of the pass's products.
 */
#ifndef MOE_LIB_POSTERIOR_BLOCK_H
#define MOE_LIB_POSTERIOR_BLOCK_H

#include <stddef.h>

/* Every array is by columns: "K x rows" is K arrays of `rows` values. J = K - 1. */
typedef struct moe_posterior_block {
    size_t rows, n_experts;
    const double *weights; /* rows */
    double *gate;          /* K x rows: the gate's logits (the reference's 0) in; overwritten */
    double *gate_proba;    /* K x rows: scratch */
    double *density;       /* K x rows: log f_k(y) in; overwritten */
    double *resp;          /* rows x K, by rows as the caller keeps them: the previous
                              responsibilities in (when previous), the new ones out */
    double *resp_columns;  /* K x rows: scratch of the step-by-step body (K > 4) */
    double *row_loglik;    /* rows: scratch */
    /* J x rows: w (pi - r) with the new responsibilities (gate), followed by J x rows with
       the previous ones (previous) */
    double *residuals;
    /* rows x (pairs + K), by columns: the gate Hessian's pair weights (gate; pairs =
       J (J + 1) / 2, see moe_softmax_pair_weights), then w r_k (experts) */
    double *gram_weights;
    double *scratch;       /* (6 + K) x rows */
    int gate_derivatives, previous, experts;
    int unit_weights;      /* every weight is 1 */
    /* Gaussian experts with the identity link (the family's normal_parts) and a K the
       one-loop body takes (moe_posterior_block_fused), or NULL: the densities come from y
       (rows) and the means (K x rows) with the constants and inverses (K), and `density`
       is scratch; scaled (K x rows) receives w r e, and normal_sums[0..K) and [K..2K) get
       the sums of w r and w r e^2 added (accumulate_normal_statistics' input). */
    const double *y, *means, *constants, *inverses;
    double *scaled, *normal_sums;
} moe_posterior_block;

/* The most experts of the one-loop body, the only one that takes normal parts. */
#define MOE_POSTERIOR_FUSED_EXPERTS 4

/* Whether the one-loop body serves K experts (one expert, without a gate, goes step by
   step). */
static inline int moe_posterior_block_fused(size_t n_experts)
{
    return n_experts >= 2 && n_experts <= MOE_POSTERIOR_FUSED_EXPERTS;
}

/*
 * Adds to sums[0..4]: sum w log p(y | x), the entropy -sum w r log r, the gate data term
 * -sum w r log pi, the same with the previous responsibilities, and sum w. Returns 0, or
 * 1 + the first row whose log-likelihood is not finite (the sums are then incomplete).
 * Runs on AVX-512 or AVX2 lanes where the CPU has them, with the same results.
 */
size_t moe_posterior_block_run(const moe_posterior_block *block, double *sums);

#endif
