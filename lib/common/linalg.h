/*
 * Shared numerical kernels. Every estimator uses these rather than its own
 * copy: log-sum-exp, weighted Gram matrices on row blocks, and the SPD solve
 * with its ridge fallback.
 */
#ifndef MOE_LIB_LINALG_H
#define MOE_LIB_LINALG_H

#include <stddef.h>

#include <math.h>

/*
 * exp(x), with 0 below the normal range. glibc's exp takes a slow path that
 * sets errno for every underflow, and the log-densities of far-away experts
 * underflow all the time: that path was a quarter of an EM iteration. The
 * values dropped are below 2^-1022, nothing next to the terms they join.
 */
static inline double moe_exp(double x)
{
    return x < -708.0 ? 0.0 : exp(x);
}

/* log(sum_k exp(values[k])) with max subtraction; -inf if every value is -inf. */
double moe_log_sum_exp(const double *values, size_t count);

/* Replace values by log softmax(values) in place; returns the log-sum-exp. */
double moe_log_softmax(double *values, size_t count);

/* The same, and proba receives softmax(values) from the exponentials the log-sum-exp
   computes anyway (one exp per value instead of two). */
double moe_softmax_with_log(double *values, size_t count, double *proba);


/*
 * out[i] = exp(in[i]) for an array, as moe_exp (0 below -708, +inf above the overflow
 * threshold, NaN for NaN), accurate to about one ulp. The loop has no calls and no
 * branches, so it runs on SIMD lanes (AVX2 with FMA, or AVX-512, where the CPU has them): the
 * E-step's exponentials were a third of a pass at small d with glibc's scalar exp.
 * in and out may be the same array.
 */
void moe_exp_array(size_t count, const double *in, double *out);

/* The same for arguments up to 709 only, such as a softmax's shifted values (never above
   0): no overflow handling, about a third fewer operations (moe_exp_bounded_lane in
   common/exp_lanes.h). Larger arguments give wrong values. */
void moe_exp_bounded_array(size_t count, const double *in, double *out);

/* out[i] = log(in[i]) for an array in the same way: within about one ulp of glibc's log,
   -inf for 0, NaN below 0 or for NaN, +inf for +inf; subnormals included. */
void moe_log_array(size_t count, const double *in, double *out);

/*
 * moe_softmax_with_log on each of `rows` rows of `count` values (row-major): values
 * becomes log softmax, proba softmax, lse[i] (if not NULL) the row's log-sum-exp.
 * The exponentials of all rows go through one moe_exp_array call.
 */
void moe_softmax_rows(size_t rows, size_t count, double *values, double *proba, double *lse);

/*
 * Block products of the row-block kernels (row-major, through BLAS):
 *   moe_product_abt:      c (rows x columns)   = a (rows x inner) b' (b: columns x inner)
 *   moe_product_atb_add:  c (columns x inner) += a' b (a: rows x columns, b: rows x inner)
 *   moe_rank_update:      c (order x order, upper triangle) += alpha a'a (a: rows x order)
 * Plain loops for the small shapes (p = 6, K = 3) were measured slower than OpenBLAS on
 * one thread, though they scaled better on two (bench/RESULTS.md). Every product here is
 * cut into pieces OpenBLAS runs on the calling thread (linalg.c, SINGLE_THREAD_PRODUCT).
 */
void moe_product_abt(size_t rows, size_t columns, size_t inner, const double *a, const double *b,
                     double *c);
void moe_product_atb_add(size_t rows, size_t columns, size_t inner, const double *a,
                         const double *b, double *c);
void moe_rank_update(size_t rows, size_t order, double alpha, const double *a, double *c);

/*
 * The products of blocks by columns (common/columns.h):
 *   moe_product_ab:       c (rows x columns)  = a (rows x inner) b (b: inner x columns)
 *   moe_product_abt_add:  c (rows x columns) += a (rows x inner) b' (b: columns x inner)
 * With few inputs (inner for ab, columns for abt_add, at most moe_small_product_inputs(): 16,
 * or 64 where the BLAS has no small-matrix kernels) and at most MOE_SMALL_PRODUCT_ROWS rows,
 * through the register-blocked kernels of common/small_products.h; else, and always in the _blas forms (the kernels' oracle),
 * through BLAS.
 */
void moe_product_ab(size_t rows, size_t columns, size_t inner, const double *a, const double *b,
                    double *c);
void moe_product_abt_add(size_t rows, size_t columns, size_t inner, const double *a,
                         const double *b, double *c);
void moe_product_ab_blas(size_t rows, size_t columns, size_t inner, const double *a,
                         const double *b, double *c);
void moe_product_abt_add_blas(size_t rows, size_t columns, size_t inner, const double *a,
                              const double *b, double *c);

/*
 * gram (p x p, row-major, upper triangle) += block' diag(weights) block for a
 * block of `rows` rows of p values. weights must be >= 0. scratch holds
 * rows * p doubles. Call moe_symmetrize_upper before using the lower half.
 */
void moe_weighted_gram_add(size_t rows, size_t p, const double *block, const double *weights,
                           double *scratch, double *gram);

/*
 * `count` weighted Gram matrices at once: grams[c] (p x p, at least the upper triangle)
 * += block' diag(weights[., c]) block, weights rows x count (row-major, >= 0). For small p
 * one product of the rows' distinct products x_a x_b with all the weights (OpenBLAS's
 * per-call cost dominates there, and it halves the flops), else one rank-k update each:
 * callers with several sets of weights do best to pass them all in one call. scratch
 * holds moe_weighted_grams_scratch(rows, p, count) doubles.
 */
size_t moe_weighted_grams_scratch(size_t rows, size_t p, size_t count);
void moe_weighted_grams_add(size_t rows, size_t p, size_t count, const double *block,
                            const double *weights, double *scratch, double *grams);

/* The same for a block by columns (columns: p x rows) with weights by columns (count x
   rows): the E-step's layout; here weights may have either sign. Up to
   MOE_SMALL_GRAM_INPUTS inputs through the small
   products' kernels (common/small_products.h), which need no scratch; above, and always in
   the _blas form (their oracle), as moe_weighted_grams_add. */
void moe_weighted_grams_add_columns(size_t rows, size_t p, size_t count, const double *columns,
                                    const double *weights, double *scratch, double *grams);
void moe_weighted_grams_add_columns_blas(size_t rows, size_t p, size_t count,
                                         const double *columns, const double *weights,
                                         double *scratch, double *grams);

/* Where in scratch a caller whose first column is all ones (an intercept) may keep the
   block's columns (p x rows) so that moe_weighted_grams_add_columns, given that address as
   columns, reuses them as the products x_0 x_b = x_b instead of computing them; NULL when
   that does not apply. They stay intact through the call. */
double *moe_weighted_grams_columns_slot(size_t rows, size_t p, int leading_ones, double *scratch);

/*
 * Eigenvalues in ascending order (values) and eigenvectors (the columns of matrix,
 * row-major) of a symmetric matrix given by its upper triangle, in place, as LAPACK's dsyev
 * 'V' 'U' gives them; by Jacobi rotations in plain loops, so the bits do not depend on
 * OpenBLAS's threads (dsyev's do). work holds order * order doubles. Returns 0, or -1 for
 * a non-finite entry or no convergence.
 */
int moe_symmetric_eigen(size_t order, double *matrix, double *values, double *work);

/* Copy the upper triangle of a row-major p x p matrix into its lower triangle. */
void moe_symmetrize_upper(size_t p, double *matrix);

/*
 * Solve A x = b for symmetric positive (semi)definite A (p x p, full, row-major)
 * by Cholesky after scaling A to unit diagonal, so the result does not depend
 * on the units of the unknowns. A is not modified; b is overwritten by x.
 * work holds p * (p + 1) doubles. When the scaled A is singular, indefinite or
 * too ill-conditioned, retries with a growing ridge on its diagonal (1e-12 up
 * to 1) and sets *ridge_used. Returns 0 on success, -1 (b unchanged) if no
 * ridge worked.
 */
int moe_solve_spd(size_t p, const double *A, double *b, double *work, int *ridge_used);

/* Dot product of two vectors. */
double moe_dot(size_t count, const double *a, const double *b);

#endif
