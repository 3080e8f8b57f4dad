/*
 * moe_posterior_block_run (pass/posterior_block.h). By columns every loop below is a
 * vector loop over rows; at d = 5 these loops, not the products, were most of an EM
 * iteration. For K <= 4 experts (with K a constant, so that the loops over experts unroll
 * into registers) a row's whole arithmetic is one loop, exponentials and logarithms
 * inlined (common/exp_lanes.h): each value is loaded once and only what the products and
 * the caller need is stored. Larger K go through the block's arrays step by step.
 *
 * Each body is inlined into a generic copy and copies for AVX2 and AVX-512 chosen at run
 * time. Built as exp_array.c is, with -fno-trapping-math (selections become blends) and
 * -ffp-contract=fast (CMakeLists.txt), so that the inlined exponentials are those of
 * moe_exp_array on the same CPU.
 */
#include "pass/posterior_block.h"
#include "common/columns.h"
#include "common/exp_lanes.h"
#include "common/simd.h"

#include <math.h>

/* sum_k (r_k > 0 ? -r_k log q_k : 0) of every row into out: 0 log 0 = 0. */
static inline __attribute__((always_inline)) void
row_cross_entropy(size_t rows, size_t K, const double *r, const double *log_q, double *out)
{
    for (size_t i = 0; i < rows; ++i)
        out[i] = 0.0;
    for (size_t k = 0; k < K; ++k) {
        const double *rk = r + k * rows, *lk = log_q + k * rows;
        for (size_t i = 0; i < rows; ++i)
            out[i] -= rk[i] > 0.0 ? rk[i] * lk[i] : 0.0;
    }
}

/* w (pi_c - r_c) for the J free experts. */
static inline __attribute__((always_inline)) void
gate_residuals(size_t rows, size_t J, const double *w, const double *pi, const double *r,
               double *out)
{
    for (size_t c = 0; c < J; ++c)
        for (size_t i = 0; i < rows; ++i)
            out[c * rows + i] = w[i] * (pi[c * rows + i] - r[c * rows + i]);
}

static inline __attribute__((always_inline)) size_t steps_body(const moe_posterior_block *b,
                                                               double *sums)
{
    size_t rows = b->rows, K = b->n_experts, J = K - 1;
    const double *w = b->weights;
    double *row = b->scratch + 3 * rows;
    double *resp = b->resp_columns;
    if (b->previous)
        for (size_t k = 0; k < K; ++k)
            for (size_t i = 0; i < rows; ++i)
                resp[k * rows + i] = b->resp[i * K + k];
    /* log pi and pi */
    moe_softmax_columns(rows, K, b->gate, b->gate, b->gate_proba, NULL, b->scratch);
    if (b->previous) {
        row_cross_entropy(rows, K, resp, b->gate, row);
        sums[3] += moe_columns_dot(rows, w, row);
        gate_residuals(rows, J, w, b->gate_proba, resp, b->residuals + J * rows);
    }
    for (size_t k = 0; k < K; ++k) {
        double *u = b->density + k * rows;
        const double *log_pi = b->gate + k * rows;
        for (size_t i = 0; i < rows; ++i)
            u[i] += log_pi[i];
    }
    /* u becomes log r, resp the new responsibilities, row_loglik the log-likelihoods */
    moe_softmax_columns(rows, K, b->density, b->density, resp, b->row_loglik, b->scratch);
    double infinite = 0.0;
    for (size_t i = 0; i < rows; ++i)
        infinite += b->row_loglik[i] - b->row_loglik[i] == 0.0 ? 0.0 : 1.0;
    if (infinite != 0.0)
        for (size_t i = 0; i < rows; ++i)
            if (!isfinite(b->row_loglik[i]))
                return 1 + i;
    sums[0] += moe_columns_dot(rows, w, b->row_loglik);
    sums[4] += moe_columns_sum(rows, w);
    row_cross_entropy(rows, K, resp, b->density, row);
    sums[1] += moe_columns_dot(rows, w, row);
    size_t pairs = 0;
    if (b->gate_derivatives) {
        row_cross_entropy(rows, K, resp, b->gate, row);
        sums[2] += moe_columns_dot(rows, w, row);
        gate_residuals(rows, J, w, b->gate_proba, resp, b->residuals);
        /* The Hessian's pair weights, as moe_softmax_pair_weights: w pi_a (1 - pi_a) on
           the diagonal blocks, w pi_a pi_b off it (the sign is the finishing's). */
        const double *pi = b->gate_proba;
        for (size_t a = 0; a < J; ++a)
            for (size_t c = a; c < J; ++c, ++pairs) {
                double *out = b->gram_weights + pairs * rows;
                const double *pa = pi + a * rows, *pc = pi + c * rows;
                if (a == c)
                    for (size_t i = 0; i < rows; ++i)
                        out[i] = w[i] * pa[i] * (1.0 - pa[i]);
                else
                    for (size_t i = 0; i < rows; ++i)
                        out[i] = w[i] * pa[i] * pc[i];
            }
    }
    if (b->experts)
        for (size_t k = 0; k < K; ++k) {
            double *out = b->gram_weights + (pairs + k) * rows;
            const double *r = resp + k * rows;
            for (size_t i = 0; i < rows; ++i)
                out[i] = w[i] * r[i];
        }
    for (size_t i = 0; i < rows; ++i)
        for (size_t k = 0; k < K; ++k)
            b->resp[i * K + k] = resp[k * rows + i];
    return 0;
}

/* The most experts the one-loop body takes (the registers of a row's values). */
#define FUSED_EXPERTS MOE_POSTERIOR_FUSED_EXPERTS
/* The loops over experts must unroll completely, or the loop over rows does not
   vectorise: with the exponentials inlined they are above GCC's own unrolling limits. */
#define UNROLL _Pragma("GCC unroll 4")

/*
 * The sum of w log v over a block's rows, for values v in [1, 4]: the sums of a softmax's
 * exponentials over K <= 4 experts, whose largest term is 1. With unit weights it is the
 * log of their product: 8 lanes multiply up to 128 rows each (at most 4^128 = 2^256, far
 * from overflow), so that a block of the pass (at most 512 rows) takes 8 logarithms, not
 * one per row. Groups of 128 rows took 13% of the one-loop body in its eight scalar
 * logarithms per group. The lanes are added in a fixed order, so the result does not
 * depend on the vector width. v is overwritten.
 */
static inline __attribute__((always_inline)) double
weighted_log_sum(size_t rows, const double *w, double *v, int unit_weights)
{
    enum { LANES = 8, GROUP = 1024 };
    if (!unit_weights) {
        for (size_t i = 0; i < rows; ++i)
            v[i] = moe_log_lane(v[i]);
        return moe_columns_dot(rows, w, v);
    }
    double lanes[LANES], total = 0.0;
    for (size_t i = 0; i < rows;) {
        size_t end = rows - i < GROUP ? rows : i + GROUP;
        for (size_t l = 0; l < LANES; ++l)
            lanes[l] = 1.0;
        for (; i + LANES <= end; i += LANES)
            for (size_t l = 0; l < LANES; ++l)
                lanes[l] *= v[i + l];
        for (size_t l = 0; i < end; ++i, ++l)
            lanes[l] *= v[i];
        for (size_t l = 0; l < LANES; ++l)
            lanes[l] = moe_log_lane(lanes[l]);
        for (size_t l = 0; l < LANES; ++l)
            total += lanes[l];
    }
    return total;
}

/*
 * The one-loop body for a constant K <= FUSED_EXPERTS: per row, the gate's softmax, the
 * previous responsibilities' terms, the posterior's softmax, and the weights of the
 * products. No logarithm is taken per row. With the gate's exponentials e_k = exp(g_k - m)
 * summing to S and the posterior's exponentials f_k = exp(u_k - t), u_k = g_k - m + log
 * f_k(y), summing to T, every sum the pass needs is linear in log S and log T:
 *   log p(y | x)    = t + log T - log S
 *   -sum r log r    = -sum r (u - t) + log T
 *   -sum r log pi   = -sum r (g - m) + log S
 * (responsibilities sum to one, and so do the previous targets: an E-step's, as
 * MOE_ESTEP_PREVIOUS_TARGETS documents; the exact term for targets summing to anything
 * else needs a logarithm per row, and checking for them cost 3% of an iteration). The
 * terms without logarithms are summed in the loop (stored in arrays and summed after it,
 * they cost 5% more at K = 3); S and T go to rows arrays, which weighted_log_sum turns
 * into their sums of logarithms after the loop. One division per row gives both
 * reciprocals: 1 / S = T / (S T), 1 / T = S / (S T). The exponentials' arguments are never
 * above 0, so they need no overflow handling (moe_exp_bounded_lane).
 *
 * It is the one function allowed over 100 lines (tests/function_length_exceptions.txt): it
 * is one loop over a block's rows, and its value is that the compiler sees it whole in each
 * constant-K copy, keeping the per-row lanes and running sums in registers across what
 * would otherwise be calls; the parts it would split into share a dozen live arrays.
 */
static inline __attribute__((always_inline)) size_t
fused_body(const moe_posterior_block *b, size_t K, int previous, int normal, double *sums)
{
    size_t rows = b->rows, J = K - 1, pairs = b->gate_derivatives ? J * (J + 1) / 2 : 0;
    const double *w = b->weights, *logits = b->gate, *density = b->density;
    double *resp = b->resp, *residuals = b->residuals;
    double *previous_residuals = b->residuals + J * rows, *gram_weights = b->gram_weights;
    /* The rows' terms of the sums, weighted: log-likelihood, entropy and gate data terms
       without their logarithms, the previous responsibilities' gate data term and the
       Gaussian experts' w r e^2 (one sum per expert, up to FUSED_EXPERTS). */
    double likelihood_total = 0.0, entropy_total = 0.0, gate_total = 0.0;
    double previous_total = 0.0, square_0 = 0.0, square_1 = 0.0, square_2 = 0.0, square_3 = 0.0;
    double *gate_sums = b->scratch, *posterior_sums = gate_sums + rows;
    const double *y = b->y, *means = b->means, *constants = b->constants;
    const double *inverses = b->inverses;
    double *scaled = b->scaled;
    /* Branches in the loop keep it from vectorising: the gate's and the experts' weights
       are written whether asked for or not (the workspace has room for them), and the
       previous responsibilities' terms are a constant of the copy. */
    size_t expert_at = pairs;
    /* GCC vectorises this loop when told it may; clang cannot, and says so (an error under
       -Werror), so it is left to clang's own judgement there. */
#if defined(_OPENMP) && !defined(__clang__)
#pragma omp simd reduction(+ : likelihood_total, entropy_total, gate_total, previous_total,   \
                               square_0, square_1, square_2, square_3)
#endif
    for (size_t i = 0; i < rows; ++i) {
        double g[FUSED_EXPERTS], e[FUSED_EXPERTS], pi[FUSED_EXPERTS];
        double u[FUSED_EXPERTS], f[FUSED_EXPERTS], r[FUSED_EXPERTS], residual[FUSED_EXPERTS];
        double weight = w[i];
        double largest = logits[i];
        UNROLL
        for (size_t k = 0; k < K; ++k) {
            g[k] = logits[k * rows + i];
            largest = g[k] > largest ? g[k] : largest;
        }
        double sum = 0.0;
        UNROLL
        for (size_t k = 0; k < K; ++k) {
            g[k] -= largest;
            e[k] = moe_exp_bounded_lane(g[k]);
            sum += e[k];
        }
        /* The posterior's softmax, written out like the gate's above rather than shared
           through a function: GCC then no longer unrolled the loops over experts, and the
           loop over rows ran scalar. */
        UNROLL
        for (size_t k = 0; k < K; ++k) {
            if (normal) {
                residual[k] = y[i] - means[k * rows + i];
                u[k] = (constants[k] - 0.5 * inverses[k] * residual[k] * residual[k]) + g[k];
            } else {
                u[k] = density[k * rows + i] + g[k];
            }
        }
        double top = u[0];
        UNROLL
        for (size_t k = 0; k < K; ++k)
            top = u[k] > top ? u[k] : top;
        double total = 0.0;
        UNROLL
        for (size_t k = 0; k < K; ++k) {
            u[k] -= top;
            f[k] = moe_exp_bounded_lane(u[k]);
            total += f[k];
        }
        double both = 1.0 / (sum * total), gate_scale = total * both, scale = sum * both;
        UNROLL
        for (size_t k = 0; k < K; ++k)
            pi[k] = e[k] * gate_scale;
        if (previous) {
            double term = 0.0;
            UNROLL
            for (size_t k = 0; k < K; ++k) {
                double old = resp[i * K + k];
                term -= old > 0.0 ? old * g[k] : 0.0;
                if (k < J)
                    previous_residuals[k * rows + i] = weight * (pi[k] - old);
            }
            previous_total += weight * term;
        }
        double entropy = 0.0, gate_term = 0.0;
        UNROLL
        for (size_t k = 0; k < K; ++k) {
            r[k] = f[k] * scale;
            resp[i * K + k] = r[k];
            entropy -= r[k] > 0.0 ? r[k] * u[k] : 0.0;
            gate_term -= r[k] > 0.0 ? r[k] * g[k] : 0.0;
        }
        likelihood_total += weight * top;
        gate_sums[i] = sum;
        posterior_sums[i] = total;
        entropy_total += weight * entropy;
        gate_total += weight * gate_term;
        UNROLL
        for (size_t a = 0; a < J; ++a) {
            residuals[a * rows + i] = weight * (pi[a] - r[a]);
            /* pair (a, c), c >= a, is number a J - a (a - 1) / 2 + c - a. Both loops run
               over constant counts (a test, not a start at a + 1), or they do not unroll. */
            UNROLL
            for (size_t c = 0; c < J; ++c) {
                size_t at = a * J - a * (a - 1) / 2 + c - a;
                if (c == a)
                    gram_weights[at * rows + i] = weight * pi[a] * (1.0 - pi[a]);
                else if (c > a)
                    gram_weights[at * rows + i] = weight * pi[a] * pi[c];
            }
        }
        UNROLL
        for (size_t k = 0; k < K; ++k)
            gram_weights[(expert_at + k) * rows + i] = weight * r[k];
        if (normal) {
            UNROLL
            for (size_t k = 0; k < K; ++k) {
                double weighted = weight * r[k] * residual[k];
                scaled[k * rows + i] = weighted;
            }
            square_0 += weight * r[0] * residual[0] * residual[0];
            square_1 += weight * r[1] * residual[1] * residual[1];
            if (K > 2)
                square_2 += weight * r[2] * residual[2] * residual[2];
            if (K > 3)
                square_3 += weight * r[3] * residual[3] * residual[3];
        }
    }
    _Static_assert(FUSED_EXPERTS == 4, "one sum of squares per expert of the one loop");
    double squares[FUSED_EXPERTS] = {square_0, square_1, square_2, square_3};
    int unit_weights = b->unit_weights;
    double log_gate = weighted_log_sum(rows, w, gate_sums, unit_weights);
    double log_posterior = weighted_log_sum(rows, w, posterior_sums, unit_weights);
    /* A row no expert gives a finite, positive density has no posterior: its largest term
       or its sums are not finite (NaN and infinities propagate through the row), and so
       are these totals. They may also overflow from finite rows: then no row is found
       here, and the caller's check of the total log-likelihood reports it. */
    if (!isfinite(likelihood_total + log_gate + log_posterior))
        for (size_t i = 0; i < rows; ++i)
            if (!isfinite(gate_sums[i] + posterior_sums[i]))
                return 1 + i;
    if (previous)
        sums[3] += previous_total + log_gate;
    sums[0] += likelihood_total + (log_posterior - log_gate);
    sums[1] += entropy_total + log_posterior;
    if (b->gate_derivatives)
        sums[2] += gate_total + log_gate;
    sums[4] += unit_weights ? (double)rows : moe_columns_sum(rows, w);
    if (normal) {
        double expert_totals[FUSED_EXPERTS] = {0.0};
        moe_columns_sums(rows, K, gram_weights + expert_at * rows, expert_totals);
        for (size_t k = 0; k < K; ++k) {
            b->normal_sums[k] += expert_totals[k];
            b->normal_sums[K + k] += squares[k];
        }
    }
    return 0;
}

/* The one-loop body's copies: K and whether there are normal parts are constants in each,
   and so is whether there are previous targets when there are normal parts: 9 copies per
   instruction set. Each constant was kept because it was measured to buy at least 5% on a
   path that runs it: K and the normal parts as run-time values stop the loop's
   vectorisation (2.4 to 3.3 times slower), and with normal parts the previous targets as
   a flag cost the posterior pass 8 to 55%. Without normal parts (logistic, multinomial and
   the other experts) the flag cost nothing measurable on either path, and unit weights
   have no copy of their own: multiplying by them cost the EM iteration under 5%
   (bench/RESULTS.md, "Which copies of the fused E-step pay"). */
#define FUSED_COPIES(previous, normal)                                                       \
    switch (b->n_experts) {                                                                  \
    case 2: return fused_body(b, 2, previous, normal, sums);                                \
    case 3: return fused_body(b, 3, previous, normal, sums);                                \
    default: return fused_body(b, 4, previous, normal, sums);                               \
    }

static inline __attribute__((always_inline)) size_t block_body(const moe_posterior_block *b,
                                                               double *sums)
{
    int normal = b->means != NULL, previous = b->previous;
    if (previous && normal)
        FUSED_COPIES(1, 1)
    if (normal)
        FUSED_COPIES(0, 1)
    FUSED_COPIES(previous, 0)
}

MOE_SIMD_FUNCTION(size_t, block_run, block_body,
                  (const moe_posterior_block *b, double *sums), (b, sums))
/* Compiled apart from the one-loop copies: inside the same function its loops ran about
   10% slower (K = 8, d = 5). */
MOE_SIMD_FUNCTION(size_t, steps_run, steps_body,
                  (const moe_posterior_block *b, double *sums), (b, sums))

size_t moe_posterior_block_run(const moe_posterior_block *block, double *sums)
{
    /* One expert has no gate: its pass is not worth copies of the one-loop body. */
    return moe_posterior_block_fused(block->n_experts) ? block_run(block, sums)
                                                       : steps_run(block, sums);
}
