#include "common/linalg.h"
#include "common/alloc.h"
#include "common/error.h"
#include "moe/estimator.h"

#include <cblas.h>
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

void moe_softmax_rows(size_t rows, size_t count, double *values, double *proba, double *lse)
{
    for (size_t i = 0; i < rows; ++i) {
        const double *v = values + i * count;
        double *e = proba + i * count;
        double largest = v[0];
        for (size_t k = 1; k < count; ++k)
            largest = v[k] > largest ? v[k] : largest;
        double shift = isfinite(largest) ? largest : 0.0;
        for (size_t k = 0; k < count; ++k)
            e[k] = v[k] - shift;
    }
    moe_exp_array(rows * count, proba, proba);
    /* The rows' sums, then their logarithms in one array call, 256 rows at a time. */
    enum { PART = 256 };
    double sums[PART], logs[PART];
    for (size_t first = 0; first < rows; first += PART) {
        size_t part = rows - first < PART ? rows - first : PART;
        for (size_t i = 0; i < part; ++i) {
            const double *e = proba + (first + i) * count;
            double sum = 0.0;
            for (size_t k = 0; k < count; ++k)
                sum += e[k];
            sums[i] = sum;
        }
        moe_log_array(part, sums, logs);
        for (size_t i = 0; i < part; ++i) {
            double *v = values + (first + i) * count, *e = proba + (first + i) * count;
            double largest = v[0];
            for (size_t k = 1; k < count; ++k)
                largest = v[k] > largest ? v[k] : largest;
            double total;
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
                lse[first + i] = total;
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

void moe_product_abt(size_t rows, size_t columns, size_t inner, const double *a, const double *b,
                     double *c)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)columns, (int)inner,
                1.0, a, (int)inner, b, (int)inner, 0.0, c, (int)columns);
}

void moe_product_atb_add(size_t rows, size_t columns, size_t inner, const double *a,
                         const double *b, double *c)
{
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)columns, (int)inner, (int)rows,
                1.0, a, (int)columns, b, (int)inner, 1.0, c, (int)inner);
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

/* Up to this many inputs the products of all Grams share one call (measured on the bench
   shapes: p = 6 gains, p = 21 loses against separate rank-k updates). */
#define SHARED_PRODUCT_INPUTS 16

size_t moe_weighted_grams_scratch(size_t rows, size_t p, size_t count)
{
    return p <= SHARED_PRODUCT_INPUTS ? rows * count * p + p * count * p : rows * (p + 1);
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
    size_t width = count * p;
    double *scaled = scratch, *product = scratch + rows * width;
    for (size_t i = 0; i < rows; ++i) {
        const double *x = block + i * p;
        double *out = scaled + i * width;
        for (size_t c = 0; c < count; ++c) {
            double weight = weights[i * count + c];
            for (size_t j = 0; j < p; ++j)
                out[c * p + j] = weight * x[j];
        }
    }
    memset(product, 0, p * width * sizeof(double));
    moe_product_atb_add(rows, p, width, block, scaled, product); /* p x (count p) */
    for (size_t c = 0; c < count; ++c)
        for (size_t a = 0; a < p; ++a)
            for (size_t b = a; b < p; ++b)
                grams[c * p * p + a * p + b] += product[a * width + c * p + b];
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
