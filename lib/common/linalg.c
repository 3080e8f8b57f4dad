#include "common/linalg.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/simd.h"
#include "common/small_products.h"
#include "moe/kernels.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double moe_log_sum_exp(const double *values, size_t count)
{
    double largest = -INFINITY;
    for (size_t k = 0; k < count; ++k)
        if (values[k] > largest)
            largest = values[k];
    if (!isfinite(largest))
        return largest;
    double sum = 0.0;
    for (size_t k = 0; k < count; ++k)
        sum += moe_exp(values[k] - largest);
    return largest + log(sum);
}

/*
 * Every log-softmax below subtracts the largest value first and the logarithm of the sum
 * second: (v - largest) - log(sum). The shorter v - (largest + log(sum)) loses log(sum)
 * entirely once |largest| is above about 2^53 times it, and then returns log-probabilities
 * of 0 for tied largest values, whose probabilities sum to more than 1.
 */
double moe_log_softmax(double *values, size_t count)
{
    double largest = -INFINITY;
    for (size_t k = 0; k < count; ++k)
        if (values[k] > largest)
            largest = values[k];
    if (!isfinite(largest)) {
        for (size_t k = 0; k < count; ++k)
            values[k] -= largest;
        return largest;
    }
    double sum = 0.0;
    for (size_t k = 0; k < count; ++k)
        sum += moe_exp(values[k] - largest);
    double log_sum = log(sum);
    for (size_t k = 0; k < count; ++k)
        values[k] = (values[k] - largest) - log_sum;
    return largest + log_sum;
}

/* Rows per exp/log array call: their scratch stays on the stack and in L1. */
enum { SOFTMAX_PART = 256 };

/* moe_softmax_rows on at most SOFTMAX_PART rows. Always inlined, so that a constant count
   unrolls the per-row loops (see moe_softmax_rows). */
static inline __attribute__((always_inline)) void softmax_part(size_t rows, size_t count,
                                                               double *values, double *proba,
                                                               double *lse)
{
    double largest_values[SOFTMAX_PART], sums[SOFTMAX_PART], logs[SOFTMAX_PART];
    for (size_t i = 0; i < rows; ++i) {
        const double *v = values + i * count;
        double *e = proba + i * count;
        double largest = v[0];
        for (size_t k = 1; k < count; ++k)
            largest = v[k] > largest ? v[k] : largest;
        largest_values[i] = largest;
        double shift = isfinite(largest) ? largest : 0.0;
        for (size_t k = 0; k < count; ++k)
            e[k] = v[k] - shift;
    }
    moe_exp_array(rows * count, proba, proba);
    for (size_t i = 0; i < rows; ++i) {
        const double *e = proba + i * count;
        double sum = 0.0;
        for (size_t k = 0; k < count; ++k)
            sum += e[k];
        sums[i] = sum;
    }
    moe_log_array(rows, sums, logs);
    for (size_t i = 0; i < rows; ++i) {
        double *v = values + i * count, *e = proba + i * count;
        double largest = largest_values[i], total;
        if (!isfinite(largest)) {
            total = moe_softmax_with_log(v, count, e); /* every value -inf, or +inf/NaN */
        } else {
            total = largest + logs[i];
            double inverse = 1.0 / sums[i];
            for (size_t k = 0; k < count; ++k) {
                v[k] = (v[k] - largest) - logs[i];
                e[k] *= inverse;
            }
        }
        if (lse != NULL)
            lse[i] = total;
    }
}

void moe_softmax_rows(size_t rows, size_t count, double *values, double *proba, double *lse)
{
    /* The E-step calls this twice per row with count = K experts, mostly 2 to 4: with the
       count a constant, the per-row loops unroll instead of running a loop of K per row. */
    for (size_t first = 0; first < rows; first += SOFTMAX_PART) {
        size_t part = rows - first < SOFTMAX_PART ? rows - first : SOFTMAX_PART;
        double *v = values + first * count, *e = proba + first * count;
        double *total = lse != NULL ? lse + first : NULL;
        switch (count) {
        case 2: softmax_part(part, 2, v, e, total); break;
        case 3: softmax_part(part, 3, v, e, total); break;
        case 4: softmax_part(part, 4, v, e, total); break;
        default: softmax_part(part, count, v, e, total); break;
        }
    }
}

double moe_softmax_with_log(double *values, size_t count, double *proba)
{
    double largest = -INFINITY;
    for (size_t k = 0; k < count; ++k)
        if (values[k] > largest)
            largest = values[k];
    if (!isfinite(largest)) {
        for (size_t k = 0; k < count; ++k) {
            values[k] -= largest;
            proba[k] = moe_exp(values[k]);
        }
        return largest;
    }
    double sum = 0.0;
    for (size_t k = 0; k < count; ++k)
        sum += proba[k] = moe_exp(values[k] - largest);
    double log_sum = log(sum), inverse = 1.0 / sum;
    for (size_t k = 0; k < count; ++k) {
        values[k] = (values[k] - largest) - log_sum;
        proba[k] *= inverse;
    }
    return largest + log_sum;
}

/*
 * OpenBLAS runs a product on its own threads once it has more than 65536 x 4 multiply-adds
 * (its default GEMM_MULTITHREAD_THRESHOLD, the one Debian builds with). The products here
 * are a pass's, on blocks of at most 512 rows, where those threads cost more than they save
 * (a 66 x 36 x 456 product, the Grams at K = 8 and d = 10, takes about 58 us on one thread
 * and 83 us on two; docs/ARCHITECTURE.md, "Threads") and where the pass may run threads of
 * its own. Each product is therefore cut, along its rows, into equal pieces of at most that
 * size, which OpenBLAS runs on the calling thread: pieces of 32 rows or more run at
 * the whole product's rate. The pieces depend on the shapes alone, so results still do not
 * depend on the number of threads. OpenBLAS's rank-k updates (dsyrk) stay on one thread up
 * to order 129 at least at these row counts, and are left whole.
 */
#define SINGLE_THREAD_PRODUCT 262144

/* The length of the equal pieces cutting `length` so that each, times `others` (the product
   of the other two dimensions), stays within SINGLE_THREAD_PRODUCT. Pieces of 32 rows and
   more run at the whole product's rate or above (136 x 36 x 32: 40 GFLOP/s, x 456: 31);
   a product that would need shorter ones (K above 10 at p = 16) stays whole, as its
   per-call costs would grow and large products are where OpenBLAS's threads begin to
   pay. */
static size_t piece_length(size_t length, size_t others)
{
    size_t most = others > 0 ? SINGLE_THREAD_PRODUCT / others : length;
    if (length <= most || most < 32)
        return length > 0 ? length : 1;
    size_t pieces = (length + most - 1) / most;
    return (length + pieces - 1) / pieces;
}

void moe_product_abt(size_t rows, size_t columns, size_t inner, const double *a, const double *b,
                     double *c)
{
    size_t piece = piece_length(rows, columns * inner);
    for (size_t from = 0; from < rows; from += piece) {
        size_t count = rows - from < piece ? rows - from : piece;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)count, (int)columns,
                    (int)inner, 1.0, a + from * inner, (int)inner, b, (int)inner, 0.0,
                    c + from * columns, (int)columns);
    }
}

void moe_product_atb_add(size_t rows, size_t columns, size_t inner, const double *a,
                         const double *b, double *c)
{
    size_t piece = piece_length(rows, columns * inner);
    for (size_t from = 0; from < rows; from += piece) {
        size_t count = rows - from < piece ? rows - from : piece;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)columns, (int)inner,
                    (int)count, 1.0, a + from * columns, (int)columns, b + from * inner,
                    (int)inner, 1.0, c, (int)inner);
    }
}

void moe_rank_update(size_t rows, size_t order, double alpha, const double *a, double *c)
{
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)order, (int)rows, alpha, a,
                (int)order, 1.0, c, (int)order);
}

void moe_weighted_gram_add(size_t rows, size_t p, const double *block, const double *weights,
                           double *scratch, double *gram)
{
    for (size_t i = 0; i < rows; ++i) {
        double scale = sqrt(weights[i]);
        const double *source = block + i * p;
        double *target = scratch + i * p;
        for (size_t j = 0; j < p; ++j)
            target[j] = scale * source[j];
    }
    moe_rank_update(rows, p, 1.0, scratch, gram);
}

/* Up to this many inputs all Grams of a block come from one product (measured on the bench
   shapes: p = 6 gains, p = 21 loses against separate rank-k updates). */
#define SHARED_PRODUCT_INPUTS 16

size_t moe_weighted_grams_scratch(size_t rows, size_t p, size_t count)
{
    size_t pairs = p * (p + 1) / 2;
    return p <= SHARED_PRODUCT_INPUTS ? rows * pairs + pairs * count : rows * (p + 1);
}

/* Each row's distinct products x_a x_b (a <= b) by columns (pairs x rows), so that each is
   one loop over contiguous rows, from pair number `from` (the pairs before it are in place:
   see moe_weighted_grams_columns_slot). columns may lie in the space of the last p products:
   the product written into column c's place is the last to read column c (every later one
   has both indices above c), and it reads it at the same row it writes. */
static inline __attribute__((always_inline)) void
pair_products_body(size_t rows, size_t p, size_t from, const double *columns, double *products)
{
    for (size_t a = 0, at = 0; a < p; ++a)
        for (size_t b = a; b < p; ++b, ++at) {
            if (at < from)
                continue;
            const double *left = columns + a * rows, *right = columns + b * rows;
            double *out = products + at * rows;
            for (size_t i = 0; i < rows; ++i)
                out[i] = left[i] * right[i];
        }
}

/* At d = 5 these products were a tenth of an EM iteration on SSE2's two lanes. */
MOE_SIMD_PROCEDURE(pair_products, pair_products_body,
                   (size_t rows, size_t p, size_t from, const double *columns,
                    double *products),
                   (rows, p, from, columns, products))

/* The small-p path of the weighted Grams from the block's columns (p x rows, possibly in
   the space of the last p products of scratch: see pair_products); weights are rows x
   count, or count x rows when by_columns. */
static void grams_from_products(size_t rows, size_t p, size_t count, const double *columns,
                                const double *weights, int by_columns, double *scratch,
                                double *grams)
{
    /* Each row's distinct products x_a x_b (a <= b) once, then one product with all the
       weight columns: p (p + 1) flops per row and Gram, half of weighting x for every Gram
       and multiplying by block' (which also computes each lower triangle). */
    if (rows == 0)
        return;
    size_t pairs = p * (p + 1) / 2;
    double *products = scratch, *sums = scratch + rows * pairs;
    /* Columns in the slot, the first of them ones: the products with it are the columns. */
    pair_products(rows, p, columns == scratch ? p : 0, columns, products);
    size_t piece = piece_length(rows, pairs * count);
    for (size_t from = 0; from < rows; from += piece) {
        size_t length = rows - from < piece ? rows - from : piece;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, by_columns ? CblasTrans : CblasNoTrans,
                    (int)pairs, (int)count, (int)length, 1.0, products + from, (int)rows,
                    weights + (by_columns ? from : from * count),
                    by_columns ? (int)rows : (int)count, from == 0 ? 0.0 : 1.0, sums,
                    (int)count);
    }
    for (size_t a = 0, at = 0; a < p; ++a)
        for (size_t b = a; b < p; ++b, ++at)
            for (size_t c = 0; c < count; ++c)
                grams[c * p * p + a * p + b] += sums[at * count + c];
}

void moe_weighted_grams_add(size_t rows, size_t p, size_t count, const double *block,
                            const double *weights, double *scratch, double *grams)
{
    if (p > SHARED_PRODUCT_INPUTS) {
        double *column = scratch + rows * p;
        for (size_t c = 0; c < count; ++c) {
            for (size_t i = 0; i < rows; ++i)
                column[i] = weights[i * count + c];
            moe_weighted_gram_add(rows, p, block, column, scratch, grams + c * p * p);
        }
        return;
    }
    size_t pairs = p * (p + 1) / 2;
    double *columns = scratch + (pairs - p) * rows;
    for (size_t i = 0; i < rows; ++i)
        for (size_t a = 0; a < p; ++a)
            columns[a * rows + i] = block[i * p + a];
    grams_from_products(rows, p, count, columns, weights, 0, scratch, grams);
}

double *moe_weighted_grams_columns_slot(size_t rows, size_t p, int leading_ones, double *scratch)
{
    (void)rows;
    return leading_ones && p <= SHARED_PRODUCT_INPUTS ? scratch : NULL;
}

void moe_weighted_grams_add_columns(size_t rows, size_t p, size_t count, const double *columns,
                                    const double *weights, double *scratch, double *grams)
{
    if (p <= MOE_SMALL_GRAM_INPUTS)
        moe_small_grams_add(moe_small_copy_best(), rows, p, count, columns, weights, grams);
    else
        moe_weighted_grams_add_columns_blas(rows, p, count, columns, weights, scratch, grams);
}

void moe_weighted_grams_add_columns_blas(size_t rows, size_t p, size_t count,
                                         const double *columns, const double *weights,
                                         double *scratch, double *grams)
{
    if (p > SHARED_PRODUCT_INPUTS) {
        /* One rank-k update per weight row on the columns scaled by sqrt(weight); weights
           of either sign (the observed information's) take a product with the weighted
           columns instead, at twice the flops. */
        for (size_t c = 0; c < count; ++c) {
            const double *weight = weights + c * rows;
            double *root = scratch + rows * p;
            int negative = 0;
            for (size_t i = 0; i < rows; ++i)
                negative |= weight[i] < 0.0;
            if (negative) {
                for (size_t a = 0; a < p; ++a)
                    for (size_t i = 0; i < rows; ++i)
                        scratch[a * rows + i] = weight[i] * columns[a * rows + i];
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)p, (int)p, (int)rows,
                            1.0, columns, (int)rows, scratch, (int)rows, 1.0, grams + c * p * p,
                            (int)p);
                continue;
            }
            for (size_t i = 0; i < rows; ++i)
                root[i] = sqrt(weight[i]);
            for (size_t a = 0; a < p; ++a)
                for (size_t i = 0; i < rows; ++i)
                    scratch[a * rows + i] = root[i] * columns[a * rows + i];
            cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)p, (int)rows, 1.0, scratch,
                        (int)rows, 1.0, grams + c * p * p, (int)p);
        }
        return;
    }
    grams_from_products(rows, p, count, columns, weights, 1, scratch, grams);
}

/* Whether a product goes through the small products' kernels: few inputs (the inner
   dimension of ab, the columns of abt_add: p) and few output rows. */
static int small_product(size_t rows, size_t inputs)
{
    return inputs <= moe_small_product_inputs() && rows <= MOE_SMALL_PRODUCT_ROWS;
}

void moe_product_ab(size_t rows, size_t columns, size_t inner, const double *a, const double *b,
                    double *c)
{
    if (small_product(rows, inner))
        moe_small_product_ab(moe_small_copy_best(), rows, columns, inner, a, b, c);
    else
        moe_product_ab_blas(rows, columns, inner, a, b, c);
}

void moe_product_abt_add(size_t rows, size_t columns, size_t inner, const double *a,
                         const double *b, double *c)
{
    if (small_product(rows, columns))
        moe_small_product_abt_add(moe_small_copy_best(), rows, columns, inner, a, b, c);
    else
        moe_product_abt_add_blas(rows, columns, inner, a, b, c);
}

void moe_product_ab_blas(size_t rows, size_t columns, size_t inner, const double *a,
                         const double *b, double *c)
{
    size_t piece = piece_length(columns, rows * inner);
    for (size_t from = 0; from < columns; from += piece) {
        size_t count = columns - from < piece ? columns - from : piece;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)count,
                    (int)inner, 1.0, a, (int)inner, b + from, (int)columns, 0.0, c + from,
                    (int)columns);
    }
}

void moe_product_abt_add_blas(size_t rows, size_t columns, size_t inner, const double *a,
                              const double *b, double *c)
{
    size_t piece = piece_length(inner, rows * columns);
    for (size_t from = 0; from < inner; from += piece) {
        size_t count = inner - from < piece ? inner - from : piece;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)columns,
                    (int)count, 1.0, a + from, (int)inner, b + from, (int)inner, 1.0, c,
                    (int)columns);
    }
}

/*
 * The symmetric eigensolver by cyclic Jacobi rotations, in plain loops. LAPACK's dsyev
 * through OpenBLAS is not an option where results must not depend on the threads: its
 * level-2 calls (dsymv, dsyr2, ...) run on OpenBLAS's threads at any order, 8 included,
 * and their sums then round otherwise. Each rotation zeroes one off-diagonal entry; a sweep
 * takes every pair once, and the sweeps converge quadratically (six to ten at the orders
 * the estimators use). O(order^3) a sweep: for the order of a feature space, next to the
 * pass over the rows that made the matrix.
 */
enum { JACOBI_SWEEPS = 100 };

/* Rotate rows and columns `p` and `q` of the working matrix so that its (p, q) entry is 0,
   and the same columns of the vectors. */
static void jacobi_rotate(size_t order, size_t p, size_t q, double *work, double *vectors)
{
    double theta = (work[q * order + q] - work[p * order + p]) / (2.0 * work[p * order + q]);
    /* The smaller root of t^2 + 2 theta t - 1 = 0: a rotation of at most 45 degrees. */
    double t = 1.0 / (fabs(theta) + sqrt(theta * theta + 1.0));
    if (isinf(theta * theta))
        t = 0.5 / fabs(theta);
    if (theta < 0.0)
        t = -t;
    double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
    for (size_t k = 0; k < order; ++k) {
        double left = work[k * order + p], right = work[k * order + q];
        work[k * order + p] = c * left - s * right;
        work[k * order + q] = s * left + c * right;
    }
    for (size_t k = 0; k < order; ++k) {
        double top = work[p * order + k], bottom = work[q * order + k];
        work[p * order + k] = c * top - s * bottom;
        work[q * order + k] = s * top + c * bottom;
    }
    work[p * order + q] = work[q * order + p] = 0.0;
    for (size_t k = 0; k < order; ++k) {
        double left = vectors[k * order + p], right = vectors[k * order + q];
        vectors[k * order + p] = c * left - s * right;
        vectors[k * order + q] = s * left + c * right;
    }
}

/* Whether (p, q) is negligible next to its diagonal entries (or below the normal range). */
static int jacobi_negligible(size_t order, size_t p, size_t q, const double *work)
{
    double entry = fabs(work[p * order + q]);
    double diagonal = fabs(work[p * order + p]) + fabs(work[q * order + q]);
    return entry <= 0x1p-54 * diagonal || entry < DBL_MIN;
}

/* The eigenpairs in ascending order of the values (a selection sort: ties keep their
   order, so the result is the same on every run). */
static void sort_eigenpairs(size_t order, double *values, double *vectors)
{
    for (size_t i = 0; i < order; ++i) {
        size_t smallest = i;
        for (size_t j = i + 1; j < order; ++j)
            if (values[j] < values[smallest])
                smallest = j;
        if (smallest == i)
            continue;
        double value = values[i];
        values[i] = values[smallest];
        values[smallest] = value;
        for (size_t k = 0; k < order; ++k) {
            double entry = vectors[k * order + i];
            vectors[k * order + i] = vectors[k * order + smallest];
            vectors[k * order + smallest] = entry;
        }
    }
}

int moe_symmetric_eigen(size_t order, double *matrix, double *values, double *work)
{
    /* The upper triangle alone, as dsyev's 'U'; matrix then gathers the rotations. */
    for (size_t i = 0; i < order; ++i)
        for (size_t j = 0; j < order; ++j)
            work[i * order + j] = i <= j ? matrix[i * order + j] : matrix[j * order + i];
    for (size_t i = 0; i < order; ++i)
        for (size_t j = 0; j < order; ++j)
            matrix[i * order + j] = i == j ? 1.0 : 0.0;
    for (size_t i = 0; i < order * order; ++i)
        if (!isfinite(work[i]))
            return -1;
    int converged = 0;
    for (int sweep = 0; sweep < JACOBI_SWEEPS && !converged; ++sweep) {
        converged = 1;
        for (size_t p = 0; p + 1 < order; ++p)
            for (size_t q = p + 1; q < order; ++q)
                if (!jacobi_negligible(order, p, q, work)) {
                    jacobi_rotate(order, p, q, work, matrix);
                    converged = 0;
                }
    }
    for (size_t i = 0; i < order; ++i)
        values[i] = work[i * order + i];
    sort_eigenpairs(order, values, matrix);
    return converged ? 0 : -1;
}

void moe_symmetrize_upper(size_t p, double *matrix)
{
    for (size_t i = 0; i < p; ++i)
        for (size_t j = 0; j < i; ++j)
            matrix[i * p + j] = matrix[j * p + i];
}

int moe_solve_spd(size_t p, const double *A, double *b, double *work, int *ridge_used)
{
    /* Equilibrate to unit diagonal first: the ridge and the conditioning test below are
       then independent of the units of the features (a column in nanometres and one in
       kilometres get the same treatment). */
    double *scale = work + p * p;
    for (size_t i = 0; i < p; ++i) {
        double diagonal = A[i * p + i];
        scale[i] = diagonal > 0.0 && isfinite(diagonal) ? 1.0 / sqrt(diagonal) : 1.0;
    }
    for (size_t i = 0; i < p; ++i)
        b[i] *= scale[i];
    double ridge = 0.0;
    for (int attempt = 0; attempt < 14; ++attempt) {
        for (size_t i = 0; i < p; ++i)
            for (size_t j = 0; j < p; ++j)
                work[i * p + j] = scale[i] * A[i * p + j] * scale[j];
        for (size_t i = 0; i < p; ++i)
            work[i * p + i] += ridge;
        /* A is symmetric, so the row-major upper triangle is the column-major lower one;
           column-major avoids LAPACKE's transposed copies. */
        lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)p, work, (lapack_int)p);
        if (info == 0) {
            /* Reject factors so ill-conditioned that the solution would be noise. */
            double smallest = INFINITY, largest = 0.0;
            for (size_t i = 0; i < p; ++i) {
                double diagonal = work[i * p + i];
                if (diagonal < smallest)
                    smallest = diagonal;
                if (diagonal > largest)
                    largest = diagonal;
            }
            if (smallest > largest * 1e-7) {
                LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)p, 1, work, (lapack_int)p, b,
                               (lapack_int)p);
                for (size_t i = 0; i < p; ++i)
                    b[i] *= scale[i];
                if (ridge > 0.0 && ridge_used != NULL)
                    *ridge_used = 1;
                return 0;
            }
        }
        ridge = ridge == 0.0 ? 1e-12 : ridge * 10.0;
    }
    for (size_t i = 0; i < p; ++i)
        b[i] /= scale[i];
    return -1;
}

double moe_dot(size_t count, const double *a, const double *b)
{
    return cblas_ddot((int)count, a, 1, b, 1);
}

moe_status moe_solve_symmetric(size_t order, const double *matrix, double *rhs, int *ridge_used)
{
    if (order == 0)
        return MOE_OK;
    if (matrix == NULL || rhs == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", matrix ? "rhs" : "matrix");
    double *work = moe_alloc_array(order, order + 1, sizeof(double));
    if (work == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a %zu x %zu solve", order,
                        order);
    int ridge = 0;
    int failed = moe_solve_spd(order, matrix, rhs, work, &ridge);
    free(work);
    if (ridge_used != NULL)
        *ridge_used = ridge;
    if (failed)
        return moe_fail(NULL, MOE_ERR_NUMERICAL,
                        "the %zu x %zu system is singular even with a ridge", order, order);
    return MOE_OK;
}
