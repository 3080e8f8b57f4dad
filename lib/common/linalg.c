#include "common/linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
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
        sum += exp(values[k] - largest);
    return largest + log(sum);
}

double moe_log_softmax(double *values, size_t count)
{
    double total = moe_log_sum_exp(values, count);
    for (size_t k = 0; k < count; ++k)
        values[k] -= total;
    return total;
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
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)p, (int)rows, 1.0, scratch, (int)p,
                1.0, gram, (int)p);
}

void moe_symmetrize_upper(size_t p, double *matrix)
{
    for (size_t i = 0; i < p; ++i)
        for (size_t j = 0; j < i; ++j)
            matrix[i * p + j] = matrix[j * p + i];
}

int moe_solve_spd(size_t p, const double *A, double *b, double *work, int *ridge_used)
{
    double mean_diagonal = 0.0;
    for (size_t i = 0; i < p; ++i)
        mean_diagonal += fabs(A[i * p + i]);
    mean_diagonal /= (double)p;
    if (!(mean_diagonal > 0.0) || !isfinite(mean_diagonal))
        mean_diagonal = 1.0;
    double ridge = 0.0;
    for (int attempt = 0; attempt < 14; ++attempt) {
        memcpy(work, A, p * p * sizeof(double));
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
                if (ridge > 0.0 && ridge_used != NULL)
                    *ridge_used = 1;
                return 0;
            }
        }
        ridge = ridge == 0.0 ? 1e-12 * mean_diagonal : ridge * 10.0;
    }
    return -1;
}

double moe_dot(size_t count, const double *a, const double *b)
{
    return cblas_ddot((int)count, a, 1, b, 1);
}
