/*
 * The incremental MM surrogate of a softmax-gated mixture (docs/ARCHITECTURE.md, "The
 * streaming estimator"): per-sample statistics, their batch mean, and the closed-form
 * minimiser.
 *
 * At the current theta and a sample (x, y), Jensen's inequality with the responsibilities
 * tau gives the EM surrogate; the gate's log-sum-exp is then bounded by a quadratic with the
 * fixed curvature B = kron(A, u u') + eps I, A >= diag(g) - g g' (the paper's A or
 * Boehning's), or, for a two-expert gate under the local bound, the row's own curvature
 * c(a) u u' + eps I at its current logit a (Jaakkola and Jordan; local_curvature). Every term is linear in statistics of the sample, so a running mean of them
 * defines a surrogate of the running objective, minimised in closed form:
 *   gate      w = -(kron(A, M) + eps I)^-1 s1, M the mean of u u' (local: of c(a) u u', A = 1);
 *   Gaussian  beta_k = R_k^-1 b_k, sigma_k^2 = (q_k - 2 b_k'beta_k + beta_k'R_k beta_k) / t_k;
 *   classification experts: the same quadratic bound on their own softmax, c_k = -(kron(A_M,
 *             R_k) + eps t_k I)^-1 v_k.
 * Kronecker systems are solved through A's two eigenvalues: for A = a1 (I - J/m) + a2 J/m,
 * (kron(A, M) + eps I)^-1 = kron(I - J/m, (a1 M + eps I)^-1) + kron(J/m, (a2 M + eps I)^-1),
 * two p x p factorisations instead of one of order m p.
 */
#include "estimators/ismm/ismm.h"
#include "common/inputs.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_ROWS = 256 };

void ismm_bound_coefficients(ismm_bound bound, size_t m, double *a1, double *a2)
{
    if (bound == ISMM_BOUND_BOHNING || bound == ISMM_BOUND_LOCAL) {
        /* 1/2 (I - J/(m+1)) */
        *a1 = 0.5;
        *a2 = 0.5 / (double)(m + 1);
    } else {
        /* 3/4 I - J/(2m) */
        *a1 = 0.75;
        *a2 = 0.25;
    }
}

static size_t free_gate_rows(const ismm_shape *shape)
{
    return shape->K > 0 ? shape->K - 1 : 0;
}

int ismm_gate_is_local(ismm_bound bound, size_t m)
{
    return bound == ISMM_BOUND_LOCAL && m == 1;
}

void ismm_gate_coefficients(ismm_bound bound, size_t m, double *a1, double *a2)
{
    if (ismm_gate_is_local(bound, m))
        *a1 = *a2 = 1.0;
    else
        ismm_bound_coefficients(bound, m, a1, a2);
}

/*
 * Jaakkola and Jordan's curvature of log(1 + e^a) at a: tanh(a/2) / (2a), 1/4 at a = 0. The
 * quadratic through log(1 + e^a) with its slope at a and this curvature lies above it
 * everywhere (log(2 cosh(a/2)) is concave in a^2) and touches it at a and -a, so it is a
 * majoriser as tight at a as the fixed 1/4 (Boehning's, the paper's for two experts) is at
 * 0. A steep gate is why: at slope 30 the fixed 1/4 exceeds the gate's own curvature some
 * 5000 times at the truth, and the MM step in the gate, the gradient over that curvature,
 * crept (slope 10 after 1e5 rows). Rows far out, which carry no information on the gate's
 * slope, get curvature 1/(2 |a|) instead of 1/4.
 */
static double local_curvature(double a)
{
    double h = 0.5 * a;
    if (fabs(h) < 1e-4)
        return 0.25 - a * a / 48.0;
    return tanh(h) / (4.0 * h);
}

size_t ismm_statistics_size(const ismm_shape *shape)
{
    size_t K = shape->K, p = shape->p, m = free_gate_rows(shape);
    return m * p + p * p + K + K * p * p + K * shape->rows * p + K;
}

void ismm_statistics_map(const ismm_shape *shape, double *storage, ismm_statistics *s)
{
    size_t K = shape->K, p = shape->p, m = free_gate_rows(shape);
    s->gate_vector = storage;
    s->gate_gram = s->gate_vector + m * p;
    s->weight = s->gate_gram + p * p;
    s->gram = s->weight + K;
    s->vector = s->gram + K * p * p;
    s->square = s->vector + K * shape->rows * p;
}

size_t ismm_parameters_size(const ismm_shape *shape)
{
    return shape->K * shape->p + shape->K * shape->rows * shape->p + shape->K;
}

void ismm_parameters_map(const ismm_shape *shape, double *storage, ismm_parameters *theta)
{
    theta->gate = storage;
    theta->experts = theta->gate + shape->K * shape->p;
    theta->variances = theta->experts + shape->K * shape->rows * shape->p;
}

/* ---- Batch statistics ---------------------------------------------------------------------- */

typedef struct batch {
    const ismm_shape *shape;
    const ismm_surrogate *surrogate;
    const ismm_parameters *theta;
    const moe_rows *rows;
} batch;

static double log_sum_exp(const double *values, size_t count)
{
    double largest = -INFINITY;
    for (size_t i = 0; i < count; ++i)
        if (values[i] > largest)
            largest = values[i];
    if (!isfinite(largest))
        return largest;
    double sum = 0.0;
    for (size_t i = 0; i < count; ++i)
        sum += exp(values[i] - largest);
    return largest + log(sum);
}

static size_t scratch_size(const ismm_shape *shape)
{
    size_t K = shape->K, p = shape->p, rows = shape->rows;
    /* block, scaled block, gate logits, expert linear predictors, gate coefficients, expert
       coefficients (K x rows per row), the experts' row weights, the gate's curvatures,
       per-row work */
    return BLOCK_ROWS * (2 * p + K + K * rows + K + K * rows + K + 1) + 4 * K * (rows + 1) + 8;
}

/* A chunk's view of its scratch (scratch_size) and of the statistics it sums. */
typedef struct chunk_work {
    ismm_statistics s;
    double *block, *scaled, *logits, *linear, *gate_coefficients, *expert_coefficients;
    double *expert_weights;                       /* K x BLOCK_ROWS */
    double *curvature; /* the gate's, per row: the local bound's, else 1 (A holds it) */
    int local;         /* the local bound on a two-expert gate */
    double *log_gate, *log_total, *tau, *classes; /* a row's; classes: K x (R + 1) */
    double a1, a2, c1, c2; /* the bounds' coefficients: the gate's, the classes' */
    double log_two_pi;
} chunk_work;

static void chunk_layout(const batch *b, double *sums, double *scratch, chunk_work *work)
{
    const ismm_shape *shape = b->shape;
    size_t K = shape->K, p = shape->p, m = free_gate_rows(shape), R = shape->rows;
    ismm_statistics_map(shape, sums + 2, &work->s);
    work->block = scratch;
    work->scaled = work->block + BLOCK_ROWS * p;
    work->logits = work->scaled + BLOCK_ROWS * p;
    work->linear = work->logits + BLOCK_ROWS * K;
    work->gate_coefficients = work->linear + BLOCK_ROWS * K * R;
    work->expert_coefficients = work->gate_coefficients + BLOCK_ROWS * K;
    work->expert_weights = work->expert_coefficients + BLOCK_ROWS * K * R;
    work->curvature = work->expert_weights + BLOCK_ROWS * K;
    work->log_gate = work->curvature + BLOCK_ROWS;
    work->log_total = work->log_gate + K;
    work->tau = work->log_total + K;
    work->classes = work->tau + K;
    work->a1 = work->a2 = work->c1 = work->c2 = 0.0;
    ismm_gate_coefficients(b->surrogate->bound, m > 0 ? m : 1, &work->a1, &work->a2);
    work->local = ismm_gate_is_local(b->surrogate->bound, m);
    ismm_bound_coefficients(b->surrogate->bound, R, &work->c1, &work->c2);
    work->log_two_pi = log(2.0 * 3.14159265358979323846);
}

/* The block's rows of u = [1, x] or x, and the gate's logits and experts' linear
   predictors of them. */
static void block_predictors(const batch *b, chunk_work *work, size_t start, size_t n_block)
{
    const ismm_shape *shape = b->shape;
    const moe_rows *rows = b->rows;
    size_t K = shape->K, p = shape->p, d = shape->d, R = shape->rows;
    for (size_t r = 0; r < n_block; ++r) {
        double *row = work->block + r * p;
        size_t column = 0;
        if (shape->intercept)
            row[column++] = 1.0;
        const double *x = rows->X != NULL ? rows->X + (start + r) * rows->ldx : NULL;
        for (size_t j = 0; j < d; ++j)
            row[column + j] = x[j];
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n_block, (int)K, (int)p, 1.0,
                work->block, (int)p, b->theta->gate, (int)p, 0.0, work->logits, (int)K);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n_block, (int)(K * R), (int)p,
                1.0, work->block, (int)p, b->theta->experts, (int)p, 0.0, work->linear,
                (int)(K * R));
}

/* A row's log gate and log joint density of each expert (log_gate, log_total), and for
   classification experts their class probabilities (classes). */
static void row_densities(const batch *b, chunk_work *work, const double *eta,
                          const double *mu, double y)
{
    const ismm_shape *shape = b->shape;
    size_t K = shape->K, R = shape->rows;
    double gate_total = log_sum_exp(eta, K);
    for (size_t k = 0; k < K; ++k) {
        work->log_gate[k] = eta[k] - gate_total;
        double log_density;
        if (shape->gaussian) {
            double variance = b->theta->variances[k], e = y - mu[k];
            log_density = -0.5 * (work->log_two_pi + log(variance) + e * e / variance);
        } else {
            /* Class logits of expert k with the reference class last (0). */
            double *z = work->classes + k * (R + 1);
            for (size_t j = 0; j < R; ++j)
                z[j] = mu[k * R + j];
            z[R] = 0.0;
            size_t label = !shape->multinomial ? (y > 0.5 ? 0u : 1u) : (size_t)y;
            double class_total = log_sum_exp(z, R + 1);
            log_density = z[label] - class_total;
            for (size_t j = 0; j <= R; ++j)
                z[j] = exp(z[j] - class_total); /* now the class probabilities */
        }
        work->log_total[k] = work->log_gate[k] + log_density;
    }
}

/* Expert k's coefficients of a row with weight w: tau_k [(p~ - e~_y) - A_M c_k' r] over the R
   free classes. With one free class (logistic) the free class is "1": its probability is
   that of y = 1 and the one-hot is y itself. */
static void class_coefficients(const ismm_shape *shape, const chunk_work *work, size_t k,
                               double w, double y, const double *mu, double *coefficient)
{
    size_t R = shape->rows;
    const double *probability = work->classes + k * (R + 1);
    double mu_sum = 0.0;
    for (size_t j = 0; j < R; ++j)
        mu_sum += mu[k * R + j];
    for (size_t j = 0; j < R; ++j) {
        double one_hot =
            !shape->multinomial ? (y > 0.5 ? 1.0 : 0.0) : ((size_t)y == j ? 1.0 : 0.0);
        double curvature = work->c1 * mu[k * R + j] + (work->c2 - work->c1) / R * mu_sum;
        coefficient[j] = w * work->tau[k] * (probability[j] - one_hot - curvature);
    }
}

/* Row r of the block (row i of the data): its weight and log-likelihood into sums, its
   responsibilities into the statistics' weights, and its coefficients in the gate's and
   experts' vectors. 1 + i if its log-likelihood is not finite, else 0. */
static size_t row_terms(const batch *b, chunk_work *work, double *sums, size_t r, size_t i)
{
    const ismm_shape *shape = b->shape;
    size_t K = shape->K, m = free_gate_rows(shape), R = shape->rows;
    double w = b->rows->weights != NULL ? b->rows->weights[i] : 1.0, y = b->rows->y[i];
    const double *eta = work->logits + r * K, *mu = work->linear + r * K * R;
    row_densities(b, work, eta, mu, y);
    double loglik = log_sum_exp(work->log_total, K);
    if (!isfinite(loglik))
        return 1 + i;
    sums[0] += w;
    sums[1] += w * loglik;
    double eta_sum = 0.0;
    for (size_t l = 0; l < m; ++l)
        eta_sum += eta[l];
    for (size_t k = 0; k < K; ++k) {
        work->tau[k] = exp(work->log_total[k] - loglik);
        work->s.weight[k] += w * work->tau[k];
    }
    /* The last expert's logit is 0: with two, eta[0] is the logit the bound sees. */
    double curvature = work->local ? local_curvature(eta[0]) : 1.0;
    work->curvature[r] = curvature;
    for (size_t l = 0; l < m; ++l)
        work->gate_coefficients[r * m + l] =
            w * (exp(work->log_gate[l]) - work->tau[l] -
                 curvature * (work->a1 * eta[l] + (work->a2 - work->a1) / m * eta_sum));
    for (size_t k = 0; k < K; ++k) {
        double *coefficient = work->expert_coefficients + r * K * R + k * R;
        if (shape->gaussian) {
            coefficient[0] = w * work->tau[k] * y;
            work->s.square[k] += w * work->tau[k] * y * y;
            continue;
        }
        class_coefficients(shape, work, k, w, y, mu, coefficient);
    }
    for (size_t k = 0; k < K; ++k)
        work->expert_weights[k * BLOCK_ROWS + r] = w * work->tau[k];
    return 0;
}

/* The block's rows into the statistics: the gate's s1 += C' block and M += block' W block,
   the experts' grams and their vectors V (K R x p) += E' block. */
static void block_statistics(const batch *b, chunk_work *work, size_t start, size_t n_block)
{
    const ismm_shape *shape = b->shape;
    const moe_rows *rows = b->rows;
    size_t K = shape->K, p = shape->p, m = free_gate_rows(shape), R = shape->rows;
    double *block = work->block, *scaled = work->scaled;
    if (m > 0)
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m, (int)p, (int)n_block,
                    1.0, work->gate_coefficients, (int)m, block, (int)p, 1.0,
                    work->s.gate_vector, (int)p);
    for (size_t r = 0; r < n_block; ++r) {
        double w = rows->weights != NULL ? rows->weights[start + r] : 1.0;
        double root = sqrt(w * work->curvature[r]);
        for (size_t j = 0; j < p; ++j)
            scaled[r * p + j] = root * block[r * p + j];
    }
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)p, (int)n_block, 1.0, scaled,
                (int)p, 1.0, work->s.gate_gram, (int)p);
    for (size_t k = 0; k < K; ++k) {
        for (size_t r = 0; r < n_block; ++r) {
            double root = sqrt(work->expert_weights[k * BLOCK_ROWS + r]);
            for (size_t j = 0; j < p; ++j)
                scaled[r * p + j] = root * block[r * p + j];
        }
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)p, (int)n_block, 1.0,
                    scaled, (int)p, 1.0, work->s.gram + k * p * p, (int)p);
    }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(K * R), (int)p, (int)n_block,
                1.0, work->expert_coefficients, (int)(K * R), block, (int)p, 1.0,
                work->s.vector, (int)p);
}

/* sums: [0] total weight, [1] log-likelihood, then the statistics (not yet divided). */
static size_t batch_chunk(void *user, size_t first, size_t count, double *sums, double *scratch)
{
    const batch *b = user;
    chunk_work work;
    chunk_layout(b, sums, scratch, &work);
    for (size_t start = first; start < first + count; start += BLOCK_ROWS) {
        size_t n_block = first + count - start < BLOCK_ROWS ? first + count - start : BLOCK_ROWS;
        block_predictors(b, &work, start, n_block);
        for (size_t r = 0; r < n_block; ++r) {
            size_t failed = row_terms(b, &work, sums, r, start + r);
            if (failed != 0)
                return failed;
        }
        block_statistics(b, &work, start, n_block);
    }
    return 0;
}

static void mirror_upper(double *matrix, size_t order)
{
    for (size_t a = 0; a < order; ++a)
        for (size_t b = 0; b < a; ++b)
            matrix[a * order + b] = matrix[b * order + a];
}

moe_status ismm_batch_statistics(moe_fit_context *context, const ismm_shape *shape,
                                 const ismm_surrogate *surrogate, const ismm_parameters *theta,
                                 const moe_rows *rows, double *storage, double *total_weight,
                                 double *loglik, size_t *failed_row)
{
    size_t size = ismm_statistics_size(shape);
    double *sums = malloc((size + 2) * sizeof(double));
    if (sums == NULL)
        return context != NULL ? moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                                  "cannot allocate ismm's batch statistics")
                               : MOE_ERR_OUT_OF_MEMORY;
    batch b = {shape, surrogate, theta, rows};
    moe_status status = MOE_OK;
    if (context != NULL)
        status = moe_context_parallel(context, rows->n, size + 2, scratch_size(shape),
                                      batch_chunk, &b, sums);
    if (context == NULL || status == MOE_ERR_NUMERICAL) {
        /* Without a fitter (tests of the statistics themselves), or to find the failing row
           (the lowest, as the parallel pass names it): one chunk, this thread. */
        double *scratch = malloc(scratch_size(shape) * sizeof(double));
        memset(sums, 0, (size + 2) * sizeof(double));
        size_t failed = scratch != NULL ? batch_chunk(&b, 0, rows->n, sums, scratch) : 0;
        if (failed_row != NULL && failed > 0)
            *failed_row = failed - 1;
        if (context == NULL)
            status = scratch == NULL ? MOE_ERR_OUT_OF_MEMORY
                     : failed != 0   ? MOE_ERR_NUMERICAL
                                     : MOE_OK;
        free(scratch);
    }
    if (status == MOE_OK && !(sums[0] > 0.0))
        status = context != NULL ? moe_context_fail(context, MOE_ERR_INVALID_ARGUMENT,
                                                    "ismm: the batch has no weight")
                                 : MOE_ERR_INVALID_ARGUMENT;
    if (status == MOE_OK) {
        *total_weight = sums[0];
        *loglik = sums[1];
        for (size_t i = 0; i < size; ++i)
            storage[i] = sums[2 + i] / sums[0];
        ismm_statistics s;
        ismm_statistics_map(shape, storage, &s);
        size_t K = shape->K, p = shape->p, m = free_gate_rows(shape), R = shape->rows;
        mirror_upper(s.gate_gram, p);
        for (size_t k = 0; k < K; ++k)
            mirror_upper(s.gram + k * p * p, p);
        /* The eps terms: -eps w for the gate, -eps tau_k c_k for classification experts. */
        for (size_t i = 0; i < m * p; ++i)
            s.gate_vector[i] -= surrogate->eps * theta->gate[i];
        if (!shape->gaussian)
            for (size_t k = 0; k < K; ++k)
                for (size_t i = 0; i < R * p; ++i)
                    s.vector[k * R * p + i] -= surrogate->eps * s.weight[k] *
                                               theta->experts[k * R * p + i];
    }
    free(sums);
    return status;
}

/* ---- The M-step ------------------------------------------------------------------------------ */

/* Solve matrix X = rhs (order x count, row-major; a column per right-hand side) for a
   symmetric positive definite matrix (not modified): Cholesky, or the library's equilibrated
   solve with a ridge when that fails. Nonzero if no solve works. */
static int solve_spd(size_t order, const double *matrix, double *rhs, size_t count,
                     size_t *ridge_fallbacks)
{
    double *factor = malloc(order * order * sizeof(double));
    if (factor == NULL)
        return 1;
    memcpy(factor, matrix, order * order * sizeof(double));
    lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (lapack_int)order, (lapack_int)count,
                                    factor, (lapack_int)order, rhs, (lapack_int)count);
    free(factor);
    if (info == 0)
        return 0;
    if (info < 0)
        return 1;
    /* Not positive definite in floating point: dposv may have touched rhs only after a
       successful factorisation, so rhs still holds the right-hand sides. */
    double *column = malloc(order * sizeof(double));
    if (column == NULL)
        return 1;
    int failed = 0;
    for (size_t c = 0; c < count && !failed; ++c) {
        for (size_t i = 0; i < order; ++i)
            column[i] = rhs[i * count + c];
        int ridge = 0;
        failed = moe_solve_symmetric(order, matrix, column, &ridge) != MOE_OK;
        for (size_t i = 0; i < order; ++i)
            rhs[i * count + c] = column[i];
    }
    free(column);
    if (!failed)
        ++*ridge_fallbacks;
    return failed;
}

/*
 * out (rows x p) = -(kron(a1 (I - J/rows) + a2 J/rows, gram) + eps I)^-1 vec(vector) by the
 * two eigenvalues of the Kronecker factor.
 */
static int kronecker_solve(size_t rows, size_t p, double a1, double a2, double eps,
                           const double *gram, const double *vector, double *out,
                           size_t *ridge_fallbacks)
{
    /* calloc, not malloc: gcc's -Wmaybe-uninitialized (RelWithDebInfo) cannot see that the
       loops below fill every entry before solve_spd reads it. */
    double *matrix = calloc(p * p, sizeof(double)), *rhs = malloc(p * (rows + 1) * sizeof(double));
    int failed = matrix == NULL || rhs == NULL;
    if (!failed) {
        /* Columns 0..rows-1: the rows' deviations from their mean (for a1); column rows:
           the mean (for a2). */
        for (size_t j = 0; j < p; ++j) {
            double mean = 0.0;
            for (size_t l = 0; l < rows; ++l)
                mean += vector[l * p + j];
            mean /= (double)rows;
            for (size_t l = 0; l < rows; ++l)
                rhs[j * (rows + 1) + l] = vector[l * p + j] - mean;
            rhs[j * (rows + 1) + rows] = mean;
        }
        double *deviations = malloc(p * rows * sizeof(double)), *means = malloc(p * sizeof(double));
        failed = deviations == NULL || means == NULL;
        if (!failed) {
            for (size_t j = 0; j < p; ++j) {
                for (size_t l = 0; l < rows; ++l)
                    deviations[j * rows + l] = rhs[j * (rows + 1) + l];
                means[j] = rhs[j * (rows + 1) + rows];
            }
            if (rows > 1) {
                for (size_t i = 0; i < p * p; ++i)
                    matrix[i] = a1 * gram[i];
                for (size_t j = 0; j < p; ++j)
                    matrix[j * p + j] += eps;
                failed = solve_spd(p, matrix, deviations, rows, ridge_fallbacks);
            } else {
                for (size_t j = 0; j < p; ++j)
                    deviations[j] = 0.0;
            }
            if (!failed) {
                for (size_t i = 0; i < p * p; ++i)
                    matrix[i] = a2 * gram[i];
                for (size_t j = 0; j < p; ++j)
                    matrix[j * p + j] += eps;
                failed = solve_spd(p, matrix, means, 1, ridge_fallbacks);
            }
            if (!failed)
                for (size_t l = 0; l < rows; ++l)
                    for (size_t j = 0; j < p; ++j)
                        out[l * p + j] = -(deviations[j * rows + l] + means[j]);
        }
        free(deviations);
        free(means);
    }
    free(matrix);
    free(rhs);
    return failed;
}

/* The same by the dense system of order rows p. */
static int dense_solve(size_t rows, size_t p, double a1, double a2, double eps,
                       const double *gram, const double *vector, double *out,
                       size_t *ridge_fallbacks)
{
    size_t order = rows * p;
    double *matrix = malloc(order * order * sizeof(double)), *rhs = malloc(order * sizeof(double));
    int failed = matrix == NULL || rhs == NULL;
    if (!failed) {
        for (size_t l = 0; l < rows; ++l)
            for (size_t j = 0; j < rows; ++j) {
                double coefficient = (l == j ? a1 : 0.0) + (a2 - a1) / (double)rows;
                for (size_t a = 0; a < p; ++a)
                    for (size_t b = 0; b < p; ++b)
                        matrix[(l * p + a) * order + j * p + b] =
                            coefficient * gram[a * p + b] + (l == j && a == b ? eps : 0.0);
            }
        memcpy(rhs, vector, order * sizeof(double));
        failed = solve_spd(order, matrix, rhs, 1, ridge_fallbacks);
        if (!failed)
            for (size_t i = 0; i < order; ++i)
                out[i] = -rhs[i];
    }
    free(matrix);
    free(rhs);
    return failed;
}

/*
 * A system's Gram matrix (p x p) and `rows` right-hand vectors of p, restricted to the
 * inputs a part sees: copies whose held rows and columns are the identity's and whose held
 * entries are zero, so that every solve below, whose matrices are combinations of the Gram
 * matrix and the identity, returns zero there and the restricted solution elsewhere. NULL
 * copies when the part sees every input; nonzero when out of memory.
 */
typedef struct restricted_system {
    double *gram, *vector;
} restricted_system;

static int restrict_system(size_t rows, size_t p, const unsigned char *inputs,
                           const double **gram, const double **vector, restricted_system *copy)
{
    copy->gram = copy->vector = NULL;
    if (inputs == NULL)
        return 0;
    copy->gram = malloc(p * p * sizeof(double));
    copy->vector = malloc(rows * p * sizeof(double));
    if (copy->gram == NULL || copy->vector == NULL)
        return 1;
    memcpy(copy->gram, *gram, p * p * sizeof(double));
    memcpy(copy->vector, *vector, rows * p * sizeof(double));
    moe_inputs_restrict_step(1, p, inputs, copy->gram, NULL);
    moe_inputs_zero(rows, p, inputs, copy->vector);
    *gram = copy->gram;
    *vector = copy->vector;
    return 0;
}

static void restricted_system_free(restricted_system *copy)
{
    free(copy->gram);
    free(copy->vector);
}

int ismm_gate_mstep(const ismm_shape *shape, const ismm_surrogate *surrogate,
                    ismm_gate_solve gate_solve, const double *gate_vector,
                    const double *gate_gram, double *gate, size_t *ridge_fallbacks)
{
    size_t m = free_gate_rows(shape), p = shape->p;
    if (m == 0)
        return 0;
    double a1 = 0.0, a2 = 0.0;
    ismm_gate_coefficients(surrogate->bound, m, &a1, &a2);
    restricted_system copy;
    if (restrict_system(m, p, shape->gate_inputs, &gate_gram, &gate_vector, &copy) != 0) {
        restricted_system_free(&copy);
        return 1;
    }
    int failed = gate_solve == ISMM_GATE_DENSE
                     ? dense_solve(m, p, a1, a2, surrogate->eps, gate_gram, gate_vector, gate,
                                   ridge_fallbacks)
                     : kronecker_solve(m, p, a1, a2, surrogate->eps, gate_gram, gate_vector,
                                       gate, ridge_fallbacks);
    restricted_system_free(&copy);
    if (!failed)
        memset(gate + m * p, 0, p * sizeof(double));
    return failed;
}

int ismm_mstep(const ismm_shape *shape, const ismm_surrogate *surrogate,
               ismm_gate_solve gate_solve, const ismm_statistics *s, double variance_floor,
               double min_weight, ismm_parameters *theta, ismm_mstep_report *report)
{
    size_t K = shape->K, p = shape->p, R = shape->rows;
    if (ismm_gate_mstep(shape, surrogate, gate_solve, s->gate_vector, s->gate_gram, theta->gate,
                        &report->ridge_fallbacks) != 0)
        return 1;
    double c1 = 0.0, c2 = 0.0;
    ismm_bound_coefficients(surrogate->bound, R, &c1, &c2);
    double *coefficients = malloc(R * p * sizeof(double));
    if (coefficients == NULL)
        return 1;
    int failed = 0;
    for (size_t k = 0; k < K && !failed; ++k) {
        double t = s->weight[k];
        const double *gram = s->gram + k * p * p, *vector = s->vector + k * R * p;
        double *expert = theta->experts + k * R * p;
        /* A dying expert keeps its parameters rather than solving a vanishing system. */
        if (!(t > min_weight)) {
            ++report->frozen_experts;
            continue;
        }
        /* The residual sums below take the whole Gram: the held coefficients are zero. */
        const double *system = gram, *right = vector;
        restricted_system copy;
        if ((failed = restrict_system(R, p, shape->expert_inputs, &system, &right, &copy))) {
            restricted_system_free(&copy);
            break;
        }
        if (shape->gaussian) {
            memcpy(coefficients, right, p * sizeof(double));
            failed = solve_spd(p, system, coefficients, 1, &report->ridge_fallbacks);
            restricted_system_free(&copy);
            if (failed)
                break;
            double cross = 0.0, quadratic = 0.0;
            for (size_t a = 0; a < p; ++a) {
                cross += vector[a] * coefficients[a];
                double row = 0.0;
                for (size_t b = 0; b < p; ++b)
                    row += gram[a * p + b] * coefficients[b];
                quadratic += coefficients[a] * row;
            }
            double variance = (s->square[k] - 2.0 * cross + quadratic) / t;
            if (!(variance > variance_floor)) {
                variance = variance_floor;
                ++report->floored_variances;
            }
            memcpy(expert, coefficients, p * sizeof(double));
            theta->variances[k] = variance;
        } else {
            failed = kronecker_solve(R, p, c1, c2, surrogate->eps * t, system, right,
                                     coefficients, &report->ridge_fallbacks);
            restricted_system_free(&copy);
            if (!failed)
                memcpy(expert, coefficients, R * p * sizeof(double));
        }
    }
    free(coefficients);
    return failed;
}
