/*
 * Stage 1 of cqt: two passes over the rows, in blocks, on the fitter's threads.
 *
 * Pass 1 sums x's first and second moments and the same weighted by P2(y). From them: the
 * mean and covariance C of x, a whitening u = whiten' (x - mean) (C = Q L Q', whiten =
 * Q L^-1/2), and in u the second-order moment M2 = (E[P2 u u'] - E[P2] I) / c2, whose k
 * largest eigenpairs (nu, U) span the experts. project = whiten U diag(nu^-1/2) maps x to
 * the k whitened coordinates z in which the third moment is orthogonally decomposable.
 *
 * Pass 2 sums E[P3 z (x) z (x) z] and E[P3 z]: the whitened third moment is
 *   T = E[P3 z^(x)3] / c3 - sym3(q (x) G),  q = E[P3 z] / c3,  G = diag(1 / nu),
 * the Hermite tensor S3(u) = u^(x)3 - sym3(u (x) I) seen through the whitening: O(n d k +
 * n k^3) time and O(k^3) memory; the d x d x d tensor never exists.
 */
#include "estimators/cqt/cqt.h"

#include "common/linalg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_ROWS = 256 };

static moe_status fail(moe_fit_context *context, moe_status status, const char *format, ...)
{
    if (context == NULL)
        return status;
    char message[512];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    return moe_context_fail(context, status, message);
}

/* The rows on the fitter's threads, or in one chunk when there is no fitter (tests). */
static moe_status run_rows(moe_fit_context *context, size_t n, size_t sums_size,
                           size_t scratch_size, moe_chunk_fn run, void *user, double *sums)
{
    if (context != NULL)
        return moe_context_parallel(context, n, sums_size, scratch_size, run, user, sums);
    memset(sums, 0, sums_size * sizeof(double));
    double *scratch = malloc((scratch_size > 0 ? scratch_size : 1) * sizeof(double));
    if (scratch == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    size_t failed = run(user, 0, n, sums, scratch);
    free(scratch);
    return failed == 0 ? MOE_OK : MOE_ERR_NUMERICAL;
}

void cqt_stage1_free(cqt_stage1 *stage)
{
    free(stage->mean);
    free(stage->covariance);
    free(stage->whiten);
    free(stage->nu);
    free(stage->project);
    free(stage->unwhiten);
    free(stage->tensor);
    memset(stage, 0, sizeof *stage);
}

/* ---- Pass 1 --------------------------------------------------------------------------------- */

typedef struct first_pass {
    const moe_rows *rows;
    size_t d;
    double gamma;
} first_pass;

/* sums: W, sum w y, sum w y^2, sum w P2, sum w x (d), sum w P2 x (d), sum w x x' (d x d),
   sum w P2 x x' (d x d). */
static size_t first_pass_size(size_t d)
{
    return 4 + 2 * d + 2 * d * d;
}

static size_t first_pass_chunk(void *user, size_t first, size_t count, double *sums,
                               double *scratch)
{
    const first_pass *pass = user;
    const moe_rows *rows = pass->rows;
    size_t d = pass->d;
    double *block = scratch, *scaled = scratch + BLOCK_ROWS * d,
           *scaled_p2 = scaled + BLOCK_ROWS * d;
    double *sum_x = sums + 4, *sum_p2x = sum_x + d, *sum_xx = sum_p2x + d,
           *sum_p2xx = sum_xx + d * d;
    for (size_t start = first; start < first + count; start += BLOCK_ROWS) {
        size_t block_rows = first + count - start < BLOCK_ROWS ? first + count - start
                                                               : BLOCK_ROWS;
        for (size_t r = 0; r < block_rows; ++r) {
            size_t i = start + r;
            double w = rows->weights != NULL ? rows->weights[i] : 1.0, y = rows->y[i];
            double p2 = y * y + pass->gamma * y;
            sums[0] += w;
            sums[1] += w * y;
            sums[2] += w * y * y;
            sums[3] += w * p2;
            const double *x = rows->X + i * rows->ldx;
            for (size_t j = 0; j < d; ++j) {
                block[r * d + j] = x[j];
                scaled[r * d + j] = w * x[j];
                scaled_p2[r * d + j] = w * p2 * x[j];
                sum_x[j] += w * x[j];
                sum_p2x[j] += w * p2 * x[j];
            }
        }
        /* In pieces OpenBLAS runs on this thread: its threads would round otherwise. */
        moe_product_atb_add(block_rows, d, d, scaled, block, sum_xx);
        moe_product_atb_add(block_rows, d, d, scaled_p2, block, sum_p2xx);
    }
    return 0;
}

/* Eigenvalues ascending and eigenvectors (columns of matrix, row-major) of a symmetric
   matrix, in place: moe_symmetric_eigen, whose bits do not depend on OpenBLAS's threads as
   LAPACK's dsyev's do. */
static int symmetric_eigen(size_t order, double *matrix, double *values)
{
    double *work = malloc((order > 0 ? order * order : 1) * sizeof(double));
    int failed = work == NULL || moe_symmetric_eigen(order, matrix, values, work) != 0;
    free(work);
    return failed;
}

/* ---- Pass 2 --------------------------------------------------------------------------------- */

typedef struct second_pass {
    const moe_rows *rows;
    size_t d, k;
    const double *mean, *project;
    double alpha, beta;
} second_pass;

/* sums: sum w P3 z (k), sum w P3 z_a z_b z_c (k^3, entries a <= b <= c only). */
static size_t second_pass_chunk(void *user, size_t first, size_t count, double *sums,
                                double *scratch)
{
    const second_pass *pass = user;
    const moe_rows *rows = pass->rows;
    size_t d = pass->d, k = pass->k;
    double *centred = scratch, *z = scratch + BLOCK_ROWS * d;
    double *sum_z = sums, *sum_zzz = sums + k;
    for (size_t start = first; start < first + count; start += BLOCK_ROWS) {
        size_t block_rows = first + count - start < BLOCK_ROWS ? first + count - start
                                                               : BLOCK_ROWS;
        for (size_t r = 0; r < block_rows; ++r) {
            const double *x = rows->X + (start + r) * rows->ldx;
            for (size_t j = 0; j < d; ++j)
                centred[r * d + j] = x[j] - pass->mean[j];
        }
        moe_product_ab(block_rows, k, d, centred, pass->project, z);
        for (size_t r = 0; r < block_rows; ++r) {
            size_t i = start + r;
            double w = rows->weights != NULL ? rows->weights[i] : 1.0, y = rows->y[i];
            double c = w * (y * y * y + pass->alpha * y * y + pass->beta * y);
            const double *zr = z + r * k;
            for (size_t a = 0; a < k; ++a) {
                double ca = c * zr[a];
                sum_z[a] += ca;
                for (size_t b = a; b < k; ++b) {
                    double cab = ca * zr[b];
                    double *out = sum_zzz + (a * k + b) * k;
                    for (size_t e = b; e < k; ++e)
                        out[e] += cab * zr[e];
                }
            }
        }
    }
    return 0;
}

moe_status cqt_whitened_tensor(moe_fit_context *context, const moe_rows *rows,
                               const cqt_constants *constants, cqt_stage1 *stage)
{
    size_t d = stage->d, k = stage->k;
    size_t size = k + k * k * k;
    double *sums = malloc(size * sizeof(double));
    if (sums == NULL)
        return fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate cqt's third moment");
    second_pass pass = {rows, d, k, stage->mean, stage->project, constants->alpha,
                        constants->beta};
    moe_status status = run_rows(context, rows->n, size, BLOCK_ROWS * (d + k),
                                 second_pass_chunk, &pass, sums);
    if (status == MOE_OK) {
        double scale = 1.0 / (stage->total_weight * constants->c3);
        double q[64];
        double *qq = k <= 64 ? q : malloc(k * sizeof(double));
        if (qq == NULL) {
            free(sums);
            return fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate cqt's third moment");
        }
        for (size_t a = 0; a < k; ++a)
            qq[a] = sums[a] * scale;
        const double *sum_zzz = sums + k;
        for (size_t a = 0; a < k; ++a)
            for (size_t b = 0; b < k; ++b)
                for (size_t e = 0; e < k; ++e) {
                    /* Sort the index triple to read the one stored entry. */
                    size_t i0 = a, i1 = b, i2 = e, t;
                    if (i0 > i1) { t = i0; i0 = i1; i1 = t; }
                    if (i1 > i2) { t = i1; i1 = i2; i2 = t; }
                    if (i0 > i1) { t = i0; i0 = i1; i1 = t; }
                    double value = sum_zzz[(i0 * k + i1) * k + i2] * scale;
                    double g_be = b == e ? 1.0 / stage->nu[b] : 0.0;
                    double g_ae = a == e ? 1.0 / stage->nu[a] : 0.0;
                    double g_ab = a == b ? 1.0 / stage->nu[a] : 0.0;
                    value -= qq[a] * g_be + qq[b] * g_ae + qq[e] * g_ab;
                    stage->tensor[(a * k + b) * k + e] = value;
                }
        if (qq != q)
            free(qq);
    }
    free(sums);
    return status;
}

static int stage_allocate(cqt_stage1 *stage)
{
    size_t d = stage->d, k = stage->k;
    stage->mean = calloc(d, sizeof(double));
    stage->covariance = calloc(d * d, sizeof(double));
    stage->whiten = calloc(d * d, sizeof(double));
    stage->nu = calloc(k + 1, sizeof(double));
    stage->project = calloc(d * k, sizeof(double));
    stage->unwhiten = calloc(d * k, sizeof(double));
    stage->tensor = calloc(k * k * k, sizeof(double));
    return stage->mean == NULL || stage->covariance == NULL || stage->whiten == NULL ||
           stage->nu == NULL || stage->project == NULL || stage->unwhiten == NULL ||
           stage->tensor == NULL;
}

/* From the first pass's sums: the weights' moments of y, the mean and covariance of x, and
   moment = E[P2 (x - mean)(x - mean)'], with *p2_mean = E[P2]. */
static moe_status centred_moments(moe_fit_context *context, const double *sums,
                                  cqt_stage1 *stage, double *moment, double *p2_mean)
{
    size_t d = stage->d;
    double total = sums[0];
    if (!(total > 0.0))
        return fail(context, MOE_ERR_INVALID_ARGUMENT, "cqt: the rows have no weight");
    stage->total_weight = total;
    stage->y_mean = sums[1] / total;
    stage->y_second = sums[2] / total;
    *p2_mean = sums[3] / total;
    const double *sum_x = sums + 4, *sum_p2x = sum_x + d, *sum_xx = sum_p2x + d,
                 *sum_p2xx = sum_xx + d * d;
    for (size_t j = 0; j < d; ++j)
        stage->mean[j] = sum_x[j] / total;
    for (size_t a = 0; a < d; ++a)
        for (size_t b = 0; b < d; ++b) {
            double ma = stage->mean[a], mb = stage->mean[b];
            stage->covariance[a * d + b] = sum_xx[a * d + b] / total - ma * mb;
            moment[a * d + b] = sum_p2xx[a * d + b] / total - ma * sum_p2x[b] / total -
                                sum_p2x[a] / total * mb + *p2_mean * ma * mb;
        }
    return MOE_OK;
}

/* The whitening of the covariance, and the mean's distance from the origin in it; temporary
   (d x d) and values (d) are workspace. */
static moe_status whitening(moe_fit_context *context, cqt_stage1 *stage, double *temporary,
                            double *values)
{
    size_t d = stage->d;
    memcpy(temporary, stage->covariance, d * d * sizeof(double));
    if (symmetric_eigen(d, temporary, values) != 0)
        return fail(context, MOE_ERR_NUMERICAL, "cqt: the covariance's eigensolver failed");
    double largest = values[d - 1];
    if (!(largest > 0.0) || !(values[0] > 1e-12 * largest))
        return fail(context, MOE_ERR_NUMERICAL,
                    "cqt: the covariance of x is singular (smallest eigenvalue %g of %g): a "
                    "feature is constant or a combination of others, so x cannot be whitened",
                    values[0], largest);
    for (size_t a = 0; a < d; ++a)
        for (size_t b = 0; b < d; ++b)
            stage->whiten[a * d + b] = temporary[a * d + b] / sqrt(values[b]);
    /* sqrt(mean' C^-1 mean) = || whiten' mean || */
    double distance = 0.0;
    for (size_t b = 0; b < d; ++b) {
        double component = 0.0;
        for (size_t a = 0; a < d; ++a)
            component += stage->whiten[a * d + b] * stage->mean[a];
        distance += component * component;
    }
    stage->mean_distance = sqrt(distance);
    return MOE_OK;
}

/* M2 in u and its k largest eigenpairs: nu, project and unwhiten. moment holds
   E[P2 (x - mean)(x - mean)'] and is overwritten; temporary and values are workspace. */
static moe_status expert_subspace(moe_fit_context *context, const cqt_constants *constants,
                                  double p2_mean, double *moment, double *temporary,
                                  double *values, cqt_stage1 *stage)
{
    size_t d = stage->d, k = stage->k;
    /* M2 in u: whiten' moment whiten / c2 - E[P2] I / c2. */
    memset(temporary, 0, d * d * sizeof(double));
    moe_product_atb_add(d, d, d, stage->whiten, moment, temporary);
    moe_product_ab(d, d, d, temporary, stage->whiten, moment);
    for (size_t a = 0; a < d; ++a) {
        for (size_t b = 0; b < d; ++b)
            moment[a * d + b] /= constants->c2;
        moment[a * d + a] -= p2_mean / constants->c2;
    }
    /* Symmetrise the rounding away before the eigensolver. */
    for (size_t a = 0; a < d; ++a)
        for (size_t b = a + 1; b < d; ++b) {
            double average = 0.5 * (moment[a * d + b] + moment[b * d + a]);
            moment[a * d + b] = moment[b * d + a] = average;
        }
    if (symmetric_eigen(d, moment, values) != 0)
        return fail(context, MOE_ERR_NUMERICAL, "cqt: the second moment's eigensolver failed");
    /* The k largest signed eigenvalues (a negative direction is noise or a gate term, never
       an expert). */
    for (size_t i = 0; i < k; ++i)
        stage->nu[i] = values[d - 1 - i];
    stage->nu[k] = k < d ? values[d - 1 - k] : 0.0;
    if (!(stage->nu[k - 1] > 1e-6 * fabs(stage->nu[0])) || !(stage->nu[0] > 0.0))
        return fail(context, MOE_ERR_NUMERICAL,
                    "cqt: the second moment has fewer than %zu positive directions (the "
                    "%zu-th largest eigenvalue is %g, the largest %g): the data show fewer "
                    "experts than K, or the noise variance is wrong",
                    k, k, stage->nu[k - 1], stage->nu[0]);
    for (size_t a = 0; a < d; ++a)
        for (size_t i = 0; i < k; ++i) {
            double eigenvector = moment[a * d + (d - 1 - i)];
            temporary[a * k + i] = eigenvector / sqrt(stage->nu[i]);  /* Wh in u */
            stage->unwhiten[a * k + i] = eigenvector * sqrt(stage->nu[i]); /* B in u */
        }
    /* project = whiten Wh (d x k); unwhiten = whiten B: an expert a_u = B theta in u is the
       direction whiten a_u in x. */
    moe_product_ab(d, k, d, stage->whiten, temporary, stage->project);
    memcpy(temporary, stage->unwhiten, d * k * sizeof(double));
    moe_product_ab(d, k, d, stage->whiten, temporary, stage->unwhiten);
    return MOE_OK;
}

/* The noise variance P3 needs: given (sigma2 >= 0), or E[y^2] - E[g(Z)^2] under unit-norm
   experts. */
static double noise_variance(const cqt_stage1 *stage, const cqt_constants *constants,
                             double sigma2)
{
    if (sigma2 < 0.0) {
        sigma2 = stage->y_second - constants->second_moment;
        double floor = 1e-6 * (stage->y_second > 0.0 ? stage->y_second : 1.0);
        if (!(sigma2 > floor))
            sigma2 = floor;
    }
    return sigma2;
}

moe_status cqt_stage1_run(moe_fit_context *context, const moe_rows *rows, size_t d,
                          moe_link link, cqt_preset preset, double sigma2, size_t k,
                          cqt_stage1 *stage)
{
    memset(stage, 0, sizeof *stage);
    if (k == 0 || k > d)
        return fail(context, MOE_ERR_UNSUPPORTED,
                    "cqt needs at most as many experts as features (K = %zu, d = %zu): the "
                    "experts are found as directions in the feature space",
                    k, d);
    char message[256];
    cqt_constants constants;
    if (cqt_constants_for(link, preset, 0.0, &constants, message, sizeof message) != 0)
        return fail(context, MOE_ERR_UNSUPPORTED, "%s", message);
    stage->d = d;
    stage->k = k;
    int failed = stage_allocate(stage);
    size_t size = first_pass_size(d);
    double *sums = malloc(size * sizeof(double));
    double *moment = malloc(d * d * sizeof(double)), *values = malloc(d * sizeof(double));
    double *temporary = malloc(d * d * sizeof(double));
    moe_status status = MOE_OK;
    double p2_mean = 0.0;
    if (failed || sums == NULL || moment == NULL || values == NULL || temporary == NULL)
        status = fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate cqt's moments");
    first_pass pass = {rows, d, constants.gamma};
    if (status == MOE_OK)
        status = run_rows(context, rows->n, size, 3 * BLOCK_ROWS * d, first_pass_chunk, &pass,
                          sums);
    if (status == MOE_OK)
        status = centred_moments(context, sums, stage, moment, &p2_mean);
    if (status == MOE_OK)
        status = whitening(context, stage, temporary, values);
    if (status == MOE_OK)
        status = expert_subspace(context, &constants, p2_mean, moment, temporary, values, stage);
    if (status == MOE_OK) {
        stage->sigma2 = noise_variance(stage, &constants, sigma2);
        constants.beta = constants.u - 3.0 * stage->sigma2;
        status = cqt_whitened_tensor(context, rows, &constants, stage);
    }
    free(sums);
    free(moment);
    free(values);
    free(temporary);
    if (status != MOE_OK)
        cqt_stage1_free(stage);
    return status;
}
