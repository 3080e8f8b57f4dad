/*
 * Decomposition of the whitened k x k x k third moment T = sum_i lambda_i theta_i^(x)3
 * (orthonormal theta_i in population), two ways:
 *
 *   power: the robust tensor power method. For each component, `restarts` random unit
 *     starts each take `iterations` steps theta <- T(I, theta, theta) / |.|; the start with
 *     the largest T(theta, theta, theta) takes `iterations` more; then T is deflated by
 *     lambda theta^(x)3. Later components inherit the earlier ones' errors, which is why the
 *     restarts are many.
 *   als: orthogonalised alternating least squares. All k factors move at once,
 *     theta_i <- T(I, theta_i, theta_i), then Gram-Schmidt. Without it every factor would
 *     drift to the dominant component (the update ignores the other components); with it,
 *     which the whitened tensor's orthogonal components allow at every step, this is
 *     simultaneous orthogonal power iteration. `restarts` random starts, the one with the
 *     smallest residual kept.
 *
 * For an odd tensor, -theta is a component with weight -lambda: the sign is fixed by
 * making every lambda positive (the weights 1/sqrt(pi) are).
 */
#include "estimators/cqt/cqt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cqt_tensor_apply(const double *tensor, size_t k, const double *v, double *out)
{
    for (size_t a = 0; a < k; ++a) {
        double sum = 0.0;
        for (size_t b = 0; b < k; ++b) {
            const double *row = tensor + (a * k + b) * k;
            double inner = 0.0;
            for (size_t c = 0; c < k; ++c)
                inner += row[c] * v[c];
            sum += inner * v[b];
        }
        out[a] = sum;
    }
}

double cqt_tensor_value(const double *tensor, size_t k, const double *v)
{
    double sum = 0.0;
    for (size_t a = 0; a < k; ++a) {
        double inner = 0.0;
        for (size_t b = 0; b < k; ++b) {
            const double *row = tensor + (a * k + b) * k;
            double innermost = 0.0;
            for (size_t c = 0; c < k; ++c)
                innermost += row[c] * v[c];
            inner += innermost * v[b];
        }
        sum += inner * v[a];
    }
    return sum;
}

static double norm(size_t k, const double *v)
{
    double sum = 0.0;
    for (size_t i = 0; i < k; ++i)
        sum += v[i] * v[i];
    return sqrt(sum);
}

/* A uniform direction on the unit sphere. */
static void random_direction(size_t k, moe_rng *rng, double *v)
{
    double length = 0.0;
    while (!(length > 1e-12)) {
        for (size_t i = 0; i < k; ++i)
            v[i] = moe_rng_normal(rng);
        length = norm(k, v);
    }
    for (size_t i = 0; i < k; ++i)
        v[i] /= length;
}

/* theta <- T(I, theta, theta) / |.|, `iterations` times; 0 if the image vanished. */
static int power_iterations(const double *tensor, size_t k, size_t iterations, double *theta,
                            double *work)
{
    for (size_t step = 0; step < iterations; ++step) {
        cqt_tensor_apply(tensor, k, theta, work);
        double length = norm(k, work);
        if (!(length > 1e-300))
            return 0;
        for (size_t i = 0; i < k; ++i)
            theta[i] = work[i] / length;
    }
    return 1;
}

static void deflate(double *tensor, size_t k, double lambda, const double *theta)
{
    for (size_t a = 0; a < k; ++a)
        for (size_t b = 0; b < k; ++b)
            for (size_t c = 0; c < k; ++c)
                tensor[(a * k + b) * k + c] -= lambda * theta[a] * theta[b] * theta[c];
}

static size_t decompose_power(double *tensor, size_t k, size_t restarts, size_t iterations,
                              moe_rng *rng, double *lambda, double *theta, double *work)
{
    double *candidate = work, *best = work + k, *scratch = work + 2 * k;
    size_t found = 0;
    for (size_t component = 0; component < k; ++component) {
        double best_value = -INFINITY;
        for (size_t restart = 0; restart < (restarts > 0 ? restarts : 1); ++restart) {
            random_direction(k, rng, candidate);
            if (!power_iterations(tensor, k, iterations, candidate, scratch))
                continue;
            /* |T(v, v, v)|: a start may land on -theta of a positive component. */
            double value = fabs(cqt_tensor_value(tensor, k, candidate));
            if (value > best_value) {
                best_value = value;
                memcpy(best, candidate, k * sizeof(double));
            }
        }
        if (!(best_value > -INFINITY))
            break;
        power_iterations(tensor, k, iterations, best, scratch);
        double value = cqt_tensor_value(tensor, k, best);
        if (value < 0.0) {
            value = -value;
            for (size_t i = 0; i < k; ++i)
                best[i] = -best[i];
        }
        lambda[component] = value;
        memcpy(theta + component * k, best, k * sizeof(double));
        deflate(tensor, k, value, best);
        if (value > 0.0 && isfinite(value))
            ++found;
    }
    return found;
}

/* Gram-Schmidt on the rows of factors (k x k); a row that vanishes is redrawn. */
static void orthonormalise(double *factors, size_t k, moe_rng *rng)
{
    for (size_t i = 0; i < k; ++i) {
        double *row = factors + i * k;
        for (int attempt = 0; attempt < 8; ++attempt) {
            for (size_t j = 0; j < i; ++j) {
                const double *previous = factors + j * k;
                double projection = 0.0;
                for (size_t c = 0; c < k; ++c)
                    projection += row[c] * previous[c];
                for (size_t c = 0; c < k; ++c)
                    row[c] -= projection * previous[c];
            }
            double length = norm(k, row);
            if (length > 1e-10) {
                for (size_t c = 0; c < k; ++c)
                    row[c] /= length;
                break;
            }
            random_direction(k, rng, row);
        }
    }
}

/* || T - sum_i lambda_i theta_i^(x)3 ||_F^2 */
static double residual(const double *tensor, size_t k, const double *lambda,
                       const double *theta)
{
    double sum = 0.0;
    for (size_t a = 0; a < k; ++a)
        for (size_t b = 0; b < k; ++b)
            for (size_t c = 0; c < k; ++c) {
                double value = tensor[(a * k + b) * k + c];
                for (size_t i = 0; i < k; ++i) {
                    const double *t = theta + i * k;
                    value -= lambda[i] * t[a] * t[b] * t[c];
                }
                sum += value * value;
            }
    return sum;
}

static size_t decompose_als(double *tensor, size_t k, size_t restarts, size_t iterations,
                            moe_rng *rng, double *lambda, double *theta, double *work)
{
    double *factors = work, *next = work + k * k, *weights = work + 2 * k * k;
    double best_residual = INFINITY;
    size_t steps = iterations;
    for (size_t restart = 0; restart < (restarts > 0 ? restarts : 1); ++restart) {
        for (size_t i = 0; i < k; ++i)
            random_direction(k, rng, factors + i * k);
        orthonormalise(factors, k, rng);
        for (size_t step = 0; step < steps; ++step) {
            for (size_t i = 0; i < k; ++i) {
                double *out = next + i * k;
                cqt_tensor_apply(tensor, k, factors + i * k, out);
                double length = norm(k, out);
                if (length > 1e-300)
                    for (size_t c = 0; c < k; ++c)
                        out[c] /= length;
                else
                    random_direction(k, rng, out);
            }
            memcpy(factors, next, k * k * sizeof(double));
            orthonormalise(factors, k, rng);
        }
        for (size_t i = 0; i < k; ++i) {
            double value = cqt_tensor_value(tensor, k, factors + i * k);
            if (value < 0.0) {
                value = -value;
                for (size_t c = 0; c < k; ++c)
                    factors[i * k + c] = -factors[i * k + c];
            }
            weights[i] = value;
        }
        double r = residual(tensor, k, weights, factors);
        if (r < best_residual) {
            best_residual = r;
            memcpy(theta, factors, k * k * sizeof(double));
            memcpy(lambda, weights, k * sizeof(double));
        }
    }
    size_t found = 0;
    for (size_t i = 0; i < k; ++i)
        if (lambda[i] > 0.0 && isfinite(lambda[i]))
            ++found;
    return found;
}

size_t cqt_decompose(double *tensor, size_t k, cqt_method method, size_t restarts,
                     size_t iterations, moe_rng *rng, double *lambda, double *theta)
{
    double *work = malloc((3 * k * k + 3 * k + 1) * sizeof(double));
    if (work == NULL)
        return 0;
    for (size_t i = 0; i < k; ++i)
        lambda[i] = 0.0;
    size_t found = method == CQT_ALS
                       ? decompose_als(tensor, k, restarts, iterations, rng, lambda, theta, work)
                       : decompose_power(tensor, k, restarts, iterations, rng, lambda, theta,
                                         work);
    free(work);
    return found;
}
