/*
 * The streaming estimator ismm (docs/ARCHITECTURE.md, "The streaming estimator"): the
 * surrogate majorises the loss with both bounds, its minimiser is stationary, the two gate
 * solves agree, batch MM never decreases the log-likelihood, the statistics stay positive
 * definite, recovery in the paper's low-dimensional setting, online to batch, the collapse
 * of gamma_1 = 1, sessions split any way give the same model, checkpoints round trip exactly
 * and reject damage, and degenerate streams give statuses, never NaN.
 */
#define _POSIX_C_SOURCE 200809L
#include "support/runner.h"
#include "support/synthetic.h"

#include "estimators/ismm/ismm.h"
#include "common/bytes.h"
#include "common/checksum.h"

#include <check.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- The paper's setting 6.1: K = 2, x1 ~ U[-1, 1], x2 ~ N(0, 1) (noise), gate 8 x1,
   experts -2.5 x1 and 2.5 x1, unit variances. ------------------------------------------- */

typedef struct data {
    size_t n, d;
    double *X, *y;
} data;

static void setting_61(data *out, size_t n, uint64_t seed, size_t d)
{
    test_rng rng = {seed * 7919 + 3};
    out->n = n;
    out->d = d;
    out->X = malloc(n * d * sizeof(double));
    out->y = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        double x1 = 2.0 * test_uniform(&rng) - 1.0, x2 = test_normal(&rng);
        out->X[d * i] = x1;
        if (d > 1)
            out->X[d * i + 1] = x2;
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-8.0 * x1));
        out->y[i] = (first ? -2.5 : 2.5) * x1 + test_normal(&rng);
    }
}

static void data_free(data *d)
{
    free(d->X);
    free(d->y);
}

static moe_model_t *gaussian_model(size_t K, size_t d)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

/* The truth in libmoe's layout (intercept first), moved by 0.005 N(0, 1) per entry when
   perturbed (the paper's start). */
static moe_model_t *truth_model(size_t d, int perturbed, uint64_t seed)
{
    test_rng rng = {seed + 101};
    size_t p = d + 1;
    double gate[6] = {0}, experts[6] = {0}, variances[2] = {1, 1};
    gate[1] = 8.0;
    experts[1] = -2.5;
    experts[p + 1] = 2.5;
    if (perturbed)
        for (size_t i = 0; i < 2 * p; ++i) {
            if (i < p)
                gate[i] += 0.005 * test_normal(&rng);
            experts[i] += 0.005 * test_normal(&rng);
        }
    moe_model_t *model = gaussian_model(2, d);
    ck_assert_int_eq(moe_model_set_gate(model, gate, 2 * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, experts, 2 * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(model, variances, 2), MOE_OK);
    return model;
}

static moe_fitter_t *ismm_fitter(const char *const *options)
{
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "ismm"), MOE_OK);
    for (size_t i = 0; options != NULL && options[i] != NULL; i += 2)
        ck_assert_msg(moe_fitter_set_option(fitter, options[i], options[i + 1]) == MOE_OK,
                      "%s = %s: %s", options[i], options[i + 1], moe_fitter_last_error(fitter));
    return fitter;
}

/* One pass of single-row partial fits. */
static moe_status stream(moe_fitter_t *fitter, moe_model_t *model, const data *d, size_t first,
                         size_t count)
{
    moe_status status = MOE_OK;
    for (size_t i = first; i < first + count && status == MOE_OK; ++i)
        status = moe_fitter_partial_fit(fitter, model, 1, d->X + i * d->d, d->d, d->y + i, NULL);
    return status;
}

/* The mean squared distance of two models' regression functions over rows. */
static double regression_mse(const moe_model_t *a, const moe_model_t *b, const data *d)
{
    double *pa = malloc(d->n * sizeof(double)), *pb = malloc(d->n * sizeof(double));
    ck_assert_int_eq(moe_model_predict(a, d->n, d->X, d->d, pa, d->n), MOE_OK);
    ck_assert_int_eq(moe_model_predict(b, d->n, d->X, d->d, pb, d->n), MOE_OK);
    double sum = 0.0;
    for (size_t i = 0; i < d->n; ++i)
        sum += (pa[i] - pb[i]) * (pa[i] - pb[i]);
    free(pa);
    free(pb);
    return sum / (double)d->n;
}

static double prediction_mse(const moe_model_t *model, const data *d)
{
    double *prediction = malloc(d->n * sizeof(double));
    ck_assert_int_eq(moe_model_predict(model, d->n, d->X, d->d, prediction, d->n), MOE_OK);
    double sum = 0.0;
    for (size_t i = 0; i < d->n; ++i)
        sum += (prediction[i] - d->y[i]) * (prediction[i] - d->y[i]);
    free(prediction);
    return sum / (double)d->n;
}

/* ---- The surrogate ---------------------------------------------------------------------------- */

/* h(s; theta) of ismm_statistics.c's layout, written out independently (Gaussian experts). */
static double surrogate_value(const ismm_shape *shape, const ismm_surrogate *surrogate,
                              const ismm_statistics *s, const ismm_parameters *theta)
{
    size_t K = shape->K, p = shape->p, m = K - 1;
    double a1, a2;
    ismm_gate_coefficients(surrogate->bound, m, &a1, &a2);
    double value = 0.0;
    for (size_t l = 0; l < m; ++l)
        for (size_t a = 0; a < p; ++a) {
            value += s->gate_vector[l * p + a] * theta->gate[l * p + a];
            for (size_t j = 0; j < m; ++j) {
                double A = (l == j ? a1 : 0.0) + (a2 - a1) / (double)m;
                for (size_t b = 0; b < p; ++b)
                    value += 0.5 * theta->gate[l * p + a] * A * s->gate_gram[a * p + b] *
                             theta->gate[j * p + b];
            }
            value += 0.5 * surrogate->eps * theta->gate[l * p + a] * theta->gate[l * p + a];
        }
    for (size_t k = 0; k < K; ++k) {
        const double *beta = theta->experts + k * p, *b = s->vector + k * p;
        const double *R = s->gram + k * p * p;
        double quadratic = s->square[k];
        for (size_t i = 0; i < p; ++i) {
            quadratic -= 2.0 * beta[i] * b[i];
            for (size_t j = 0; j < p; ++j)
                quadratic += beta[i] * R[i * p + j] * beta[j];
        }
        double variance = theta->variances[k];
        value += 0.5 * (s->weight[k] * log(variance) + quadratic / variance);
    }
    return value;
}

static void random_parameters(const ismm_shape *shape, test_rng *rng, double *storage)
{
    ismm_parameters theta;
    ismm_parameters_map(shape, storage, &theta);
    for (size_t i = 0; i < shape->K * shape->p; ++i)
        theta.gate[i] = i < (shape->K - 1) * shape->p ? test_normal(rng) : 0.0;
    for (size_t i = 0; i < shape->K * shape->p; ++i)
        theta.experts[i] = test_normal(rng);
    for (size_t k = 0; k < shape->K; ++k)
        theta.variances[k] = 0.3 + test_uniform(rng);
}

static double model_loss(const ismm_shape *shape, const double *storage, const double *x, double y)
{
    moe_model_t *model = gaussian_model(shape->K, shape->d);
    ismm_parameters theta;
    ismm_parameters_map(shape, (double *)storage, &theta);
    EXPECT_STATUS(moe_model_set_gate(model, theta.gate, shape->K * shape->p), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, theta.experts, shape->K * shape->p), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, theta.variances, shape->K), MOE_OK);
    double loglik = 0.0;
    ck_assert_int_eq(moe_model_loglik(model, 1, x, shape->d, &y, NULL, &loglik), MOE_OK);
    moe_model_free(model);
    return -loglik;
}

/* f(theta; z) - f(theta_n; z) <= h(theta) - h(theta_n) for s = Sbar(theta_n; z), with every
   bound, on three experts and on two (where the local bound is Jaakkola and Jordan's at the
   row's logit); and the first-order contact at theta_n (the surrogate's gradient is the
   loss's). The two-expert gates are steep (logits up to some 40), where the local bound's
   curvature is far below the fixed 1/4. */
static void check_majorises(size_t K, double gate_scale)
{
    ismm_shape shape = {K, 2, 3, 1, 1, 1, 0, NULL, NULL};
    test_rng rng = {41};
    size_t size = ismm_parameters_size(&shape), stats = ismm_statistics_size(&shape);
    double *current = malloc(size * sizeof(double)), *other = malloc(size * sizeof(double));
    double *storage = malloc(stats * sizeof(double));
    for (int bound = 0; bound < 3; ++bound) {
        ismm_surrogate surrogate = {(ismm_bound)bound, 1e-6};
        for (int trial = 0; trial < 200; ++trial) {
            random_parameters(&shape, &rng, current);
            double x[2] = {test_normal(&rng), test_normal(&rng)}, y = 2.0 * test_normal(&rng);
            moe_rows row = {1, x, 2, &y, NULL};
            ismm_parameters theta_n;
            ismm_parameters_map(&shape, current, &theta_n);
            for (size_t i = 0; i < (K - 1) * shape.p; ++i)
                theta_n.gate[i] *= gate_scale;
            double weight = 0.0, loglik = 0.0;
            ck_assert_int_eq(ismm_batch_statistics(NULL, &shape, &surrogate, &theta_n, &row,
                                                   storage, &weight, &loglik, NULL),
                             MOE_OK);
            ismm_statistics s;
            ismm_statistics_map(&shape, storage, &s);
            double loss_n = model_loss(&shape, current, x, y);
            ck_assert_double_eq_tol(-loglik, loss_n, 1e-10 * (1.0 + fabs(loss_n)));
            double h_n = surrogate_value(&shape, &surrogate, &s, &theta_n);
            for (int move = 0; move < 5; ++move) {
                double scale = move == 0 ? 1e-6 : 0.5 * move;
                for (size_t i = 0; i < size; ++i)
                    other[i] = current[i] + scale * test_normal(&rng);
                ismm_parameters theta;
                ismm_parameters_map(&shape, other, &theta);
                for (size_t a = 0; a < shape.p; ++a)
                    theta.gate[(shape.K - 1) * shape.p + a] = 0.0;
                for (size_t k = 0; k < shape.K; ++k)
                    if (move > 0)
                        theta.variances[k] = fabs(theta.variances[k]) + 0.05;
                double gap_loss = model_loss(&shape, other, x, y) - loss_n;
                double gap_surrogate = surrogate_value(&shape, &surrogate, &s, &theta) - h_n;
                ck_assert_msg(gap_loss <= gap_surrogate + 1e-9,
                              "bound %d: loss rose by %g, the surrogate by %g", bound, gap_loss,
                              gap_surrogate);
                if (move == 0) /* first order: the two agree to second order */
                    ck_assert_msg(fabs(gap_loss - gap_surrogate) < 1e-9,
                                  "no first-order contact: %g vs %g", gap_loss, gap_surrogate);
            }
        }
    }
    free(current);
    free(other);
    free(storage);
}
START_TEST(surrogate_majorises_the_loss)
{
    check_majorises(3, 1.0);
    check_majorises(2, 1.0);
    check_majorises(2, 15.0);
}
END_TEST

/* A >= diag(p) - p p' for both bounds, K = 2..10; the paper's A >= Boehning's. */
START_TEST(bounds_dominate_the_softmax_hessian)
{
    test_rng rng = {5};
    for (size_t K = 2; K <= 10; ++K) {
        size_t m = K - 1;
        double *matrix = malloc(m * m * sizeof(double)), *values = malloc(m * sizeof(double));
        for (int bound = 0; bound < 2; ++bound) {
            double a1, a2;
            ismm_bound_coefficients((ismm_bound)bound, m, &a1, &a2);
            for (int trial = 0; trial < 2000; ++trial) {
                double probability[11], total = 0.0;
                for (size_t k = 0; k < K; ++k)
                    total += probability[k] = exp(4.0 * test_normal(&rng));
                for (size_t a = 0; a < m; ++a)
                    for (size_t b = 0; b < m; ++b) {
                        double pa = probability[a] / total, pb = probability[b] / total;
                        double A = (a == b ? a1 : 0.0) + (a2 - a1) / (double)m;
                        matrix[a * m + b] = A - ((a == b ? pa : 0.0) - pa * pb);
                    }
                ck_assert_int_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (lapack_int)m, matrix,
                                               (lapack_int)m, values),
                                 0);
                ck_assert_msg(values[0] >= -1e-12, "K = %zu bound %d: eigenvalue %g", K, bound,
                              values[0]);
            }
        }
        double p1, p2, b1, b2;
        ismm_bound_coefficients(ISMM_BOUND_PAPER, m, &p1, &p2);
        ismm_bound_coefficients(ISMM_BOUND_BOHNING, m, &b1, &b2);
        ck_assert(p1 >= b1 && p2 >= b2); /* same eigenvectors: the eigenvalues order them */
        free(matrix);
        free(values);
    }
}
END_TEST

/* The minimiser of the surrogate is stationary (finite differences of h vanish) and no
   perturbation lowers h; the Kronecker gate solve equals the dense one. */
START_TEST(mstep_minimises_the_surrogate)
{
    ismm_shape shape = {4, 3, 4, 1, 1, 1, 0, NULL, NULL};
    test_rng rng = {77};
    size_t size = ismm_parameters_size(&shape), stats = ismm_statistics_size(&shape);
    double *storage = malloc(stats * sizeof(double)), *current = malloc(size * sizeof(double));
    double *best = malloc(size * sizeof(double)), *other = malloc(size * sizeof(double));
    const size_t n = 400;
    double *X = malloc(n * 3 * sizeof(double)), *y = malloc(n * sizeof(double));
    for (int bound = 0; bound < 2; ++bound) {
        ismm_surrogate surrogate = {(ismm_bound)bound, 1e-6};
        for (size_t i = 0; i < n * 3; ++i)
            X[i] = test_normal(&rng);
        for (size_t i = 0; i < n; ++i)
            y[i] = X[3 * i] - X[3 * i + 1] + test_normal(&rng);
        random_parameters(&shape, &rng, current);
        ismm_parameters theta_n;
        ismm_parameters_map(&shape, current, &theta_n);
        moe_rows rows = {n, X, 3, y, NULL};
        double weight, loglik;
        ck_assert_int_eq(ismm_batch_statistics(NULL, &shape, &surrogate, &theta_n, &rows,
                                               storage, &weight, &loglik, NULL),
                         MOE_OK);
        ismm_statistics s;
        ismm_statistics_map(&shape, storage, &s);
        memcpy(best, current, size * sizeof(double));
        ismm_parameters theta;
        ismm_parameters_map(&shape, best, &theta);
        ismm_mstep_report report = {0, 0, 0};
        ck_assert_int_eq(ismm_mstep(&shape, &surrogate, ISMM_GATE_KRONECKER, &s, 1e-12, 0.0,
                                    &theta, &report),
                         0);
        double h = surrogate_value(&shape, &surrogate, &s, &theta);
        size_t free_size = size; /* the reference gate row stays 0 */
        for (size_t i = 0; i < free_size; ++i) {
            if (i >= (shape.K - 1) * shape.p && i < shape.K * shape.p)
                continue;
            const double step = 1e-5;
            memcpy(other, best, size * sizeof(double));
            other[i] += step;
            ismm_parameters moved;
            ismm_parameters_map(&shape, other, &moved);
            double up = surrogate_value(&shape, &surrogate, &s, &moved);
            other[i] -= 2.0 * step;
            double down = surrogate_value(&shape, &surrogate, &s, &moved);
            double derivative = (up - down) / (2.0 * step);
            ck_assert_msg(fabs(derivative) < 1e-6, "bound %d, parameter %zu: derivative %g", bound,
                          i, derivative);
            ck_assert(up >= h - 1e-12 && down >= h - 1e-12);
        }
        /* The two gate solves. */
        double *dense = malloc(shape.K * shape.p * sizeof(double));
        size_t ridge = 0;
        ck_assert_int_eq(ismm_gate_mstep(&shape, &surrogate, ISMM_GATE_DENSE, s.gate_vector,
                                         s.gate_gram, dense, &ridge),
                         0);
        for (size_t i = 0; i < shape.K * shape.p; ++i)
            ck_assert_msg(fabs(dense[i] - theta.gate[i]) <= 1e-10 * (1.0 + fabs(dense[i])),
                          "gate %zu: dense %.17g, Kronecker %.17g", i, dense[i], theta.gate[i]);
        free(dense);
    }
    free(storage);
    free(current);
    free(best);
    free(other);
    free(X);
    free(y);
}
END_TEST

/* The statistics stay symmetric positive definite, the weights positive, through a stream of
   single-row updates with the paper's schedule. */
START_TEST(statistics_stay_positive_definite)
{
    ismm_shape shape = {3, 2, 3, 1, 1, 1, 0, NULL, NULL};
    ismm_surrogate surrogate = {ISMM_BOUND_PAPER, 1e-6};
    data d;
    setting_61(&d, 2000, 9, 2);
    size_t size = ismm_parameters_size(&shape), stats = ismm_statistics_size(&shape);
    double *parameters = malloc(size * sizeof(double)), *s_storage = malloc(stats * sizeof(double));
    double *batch = malloc(stats * sizeof(double)), *matrix = malloc(9 * sizeof(double));
    test_rng rng = {3};
    random_parameters(&shape, &rng, parameters);
    ismm_parameters theta;
    ismm_parameters_map(&shape, parameters, &theta);
    moe_rows warm = {85, d.X, 2, d.y, NULL};
    double weight, loglik;
    ck_assert_int_eq(ismm_batch_statistics(NULL, &shape, &surrogate, &theta, &warm, s_storage,
                                           &weight, &loglik, NULL),
                     MOE_OK);
    ismm_statistics s;
    ismm_statistics_map(&shape, s_storage, &s);
    for (size_t t = 85; t < d.n; ++t) {
        ismm_mstep_report report = {0, 0, 0};
        ck_assert_int_eq(ismm_mstep(&shape, &surrogate, ISMM_GATE_KRONECKER, &s, 1e-6, 1e-12,
                                    &theta, &report),
                         0);
        moe_rows row = {1, d.X + 2 * t, 2, d.y + t, NULL};
        ck_assert_int_eq(ismm_batch_statistics(NULL, &shape, &surrogate, &theta, &row, batch,
                                               &weight, &loglik, NULL),
                         MOE_OK);
        double gamma = pow((double)(t - 84) + 85.0, -0.6);
        for (size_t i = 0; i < stats; ++i)
            s_storage[i] += gamma * (batch[i] - s_storage[i]);
        const double *grams[4] = {s.gate_gram, s.gram, s.gram + 9, s.gram + 18};
        for (int g = 0; g < 4; ++g) {
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    ck_assert(grams[g][a * 3 + b] == grams[g][b * 3 + a]);
            memcpy(matrix, grams[g], 9 * sizeof(double));
            ck_assert_msg(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', 3, matrix, 3) == 0,
                          "step %zu: matrix %d is not positive definite", t, g);
        }
        for (size_t k = 0; k < 3; ++k) {
            ck_assert(s.weight[k] > 0.0);
            ck_assert(theta.variances[k] >= 1e-6);
        }
    }
    free(parameters);
    free(s_storage);
    free(batch);
    free(matrix);
    data_free(&d);
}
END_TEST

/* ---- Fits ---------------------------------------------------------------------------------- */

/* Batch MM (batch_size 0): the log-likelihood never decreases, Gaussian and classification
   experts, K = 3, both bounds. */
START_TEST(batch_mm_is_monotone)
{
    for (int family = 0; family < 3; ++family)
        for (int bound = 0; bound < 2; ++bound) {
            synthetic_truth truth;
            synthetic_truth_make(&truth, 3, 2, 3.0, 1.5, 300 + (uint64_t)family);
            synthetic_data generated;
            synthetic_data_make(&generated, &truth, 1500, 301);
            moe_model_spec spec = MOE_MODEL_SPEC_INIT;
            spec.n_experts = 3;
            spec.n_features = 2;
            double *y = generated.y;
            double *labels = malloc(1500 * sizeof(double));
            if (family > 0) {
                spec.family = family == 1 ? MOE_FAMILY_LOGISTIC : MOE_FAMILY_MULTINOMIAL;
                spec.n_classes = family == 1 ? 0 : 3;
                for (size_t i = 0; i < 1500; ++i)
                    labels[i] = family == 1 ? (y[i] > 0.0)
                                            : (y[i] < -1.0 ? 0.0 : y[i] < 1.0 ? 1.0 : 2.0);
                y = labels;
            }
            moe_model_t *model = NULL;
            ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
            const char *const options[] = {"max_iter", "60", "bound",
                                           bound ? "bohning" : "paper", NULL};
            moe_fitter_t *fitter = ismm_fitter(options);
            ck_assert_msg(moe_fitter_fit(fitter, model, 1500, generated.X, 2, y, NULL) == MOE_OK,
                          "family %d: %s", family, moe_fitter_last_error(fitter));
            size_t length = 0;
            EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
            double *trace = malloc(length * sizeof(double));
            EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, length, &length), MOE_OK);
            ck_assert_uint_ge(length, 10);
            for (size_t t = 1; t < length; ++t)
                ck_assert_msg(trace[t] >= trace[t - 1] - 1e-9 * fabs(trace[t - 1]),
                              "family %d bound %d: %.12f then %.12f at %zu", family, bound,
                              trace[t - 1], trace[t], t);
            moe_fit_report report = MOE_FIT_REPORT_INIT;
            EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
            ck_assert_uint_eq(report.monotonicity_violations, 0);
            /* The surrogate's model is the model's: the trace's last entry is the returned
               model's log-likelihood (a phantom class beside a multinomial's reference
               broke it). */
            double loglik = 0.0;
            ck_assert_int_eq(moe_model_loglik(model, 1500, generated.X, 2, y, NULL, &loglik),
                             MOE_OK);
            ck_assert_msg(fabs(loglik - trace[length - 1]) <= 1e-9 * fabs(loglik),
                          "family %d bound %d: the model's log-likelihood %.12f, the trace's "
                          "%.12f",
                          family, bound, loglik, trace[length - 1]);
            free(trace);
            free(labels);
            moe_model_free(model);
            moe_fitter_free(fitter);
            synthetic_data_free(&generated);
            synthetic_truth_free(&truth);
        }
}
END_TEST

static void sort(double *values, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        for (size_t j = i + 1; j < count; ++j)
            if (values[j] < values[i]) {
                double t = values[i];
                values[i] = values[j];
                values[j] = t;
            }
}

/* The batch maximum likelihood (em from the truth) on the same rows: what an online estimate
   of one pass can at best approach. */
static moe_model_t *batch_mle(const data *train)
{
    moe_model_t *model = truth_model(train->d, 0, 0);
    moe_fitter_t *em = NULL;
    ck_assert_int_eq(moe_fitter_create(&em, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(em, "init", "model"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(em, "n_init", "1"), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(em, model, train->n, train->X, train->d, train->y, NULL),
                     MOE_OK);
    moe_fitter_free(em);
    return model;
}

/*
 * Setting 6.1, perturbed truth, one pass of 1600 single rows, gamma = (t + 85)^-0.6, ten
 * seeds. Last iterate: estimation MSE median < 0.05 and each < 0.08, prediction MSE in [0.85,
 * 1.25]. Polyak average (from step 100): the spec's bands (gate slope 8 +- 1, expert slopes
 * +-2.5 +- 0.3, variances 1 +- 0.3) on the median over the seeds; in every seed the gate's
 * band and wider ones for the rest (+- 0.5, +- 0.4), since one seed's own maximum likelihood
 * is 0.32 from the truth's slope.
 */
START_TEST(recovery_in_setting_61)
{
    double estimation[10], gate_slopes[10], low_slopes[10], high_slopes[10], variances_all[20];
    for (int seed = 0; seed < 10; ++seed) {
        data train, test;
        setting_61(&train, 1600, 100 + (uint64_t)seed, 1);
        setting_61(&test, 400, 200 + (uint64_t)seed, 1);
        moe_model_t *truth = truth_model(1, 0, 0);
        moe_model_t *mle = batch_mle(&train);
        double mle_gate[4], mle_experts[4], mle_variances[2];
        EXPECT_STATUS(moe_model_get_gate(mle, mle_gate, 4), MOE_OK);
        EXPECT_STATUS(moe_model_get_experts(mle, mle_experts, 4), MOE_OK);
        EXPECT_STATUS(moe_model_get_variances(mle, mle_variances, 2), MOE_OK);
        /* em's canonical order may have swapped the experts: match them to ismm's (which
           keeps the start's order: expert 0 has the negative slope). */
        int swapped = mle_experts[1] > mle_experts[3];
        for (int averaged = 0; averaged < 2; ++averaged) {
            /* The average is held to the spec's bands with the paper's bound, the spec's
               algorithm: from the truth, the default (local) bound moves the gate several
               times faster over these 1600 rows, and its average from step 100 keeps more of
               the early iterates' flatter gates (seed 0: 6.37, the MLE's 8.66; the paper's
               7.22). The last iterate is the default's. */
            const char *const options[] = {"init", "model", "batch_size", "1", "warm_start",
                                           "85", "polyak", averaged ? "100" : "0", "bound",
                                           averaged ? "paper" : "local", NULL};
            moe_fitter_t *fitter = ismm_fitter(options);
            moe_model_t *model = truth_model(1, 1, (uint64_t)seed);
            ck_assert_int_eq(stream(fitter, model, &train, 0, train.n), MOE_OK);
            if (!averaged) {
                estimation[seed] = regression_mse(model, truth, &test);
                double prediction = prediction_mse(model, &test);
                ck_assert_msg(estimation[seed] < 0.08, "seed %d: estimation MSE %g", seed,
                              estimation[seed]);
                ck_assert_msg(prediction >= 0.85 && prediction <= 1.25,
                              "seed %d: prediction MSE %g", seed, prediction);
            } else {
                double gate[4], experts[4], variances[2];
                EXPECT_STATUS(moe_model_get_gate(model, gate, 4), MOE_OK);
                EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
                EXPECT_STATUS(moe_model_get_variances(model, variances, 2), MOE_OK);
                gate_slopes[seed] = gate[1];
                low_slopes[seed] = experts[1];
                high_slopes[seed] = experts[3];
                variances_all[2 * seed] = variances[0];
                variances_all[2 * seed + 1] = variances[1];
                double mle_low = swapped ? mle_experts[3] : mle_experts[1];
                double mle_high = swapped ? mle_experts[1] : mle_experts[3];
                /* Every seed: the spec's bands widened to what one pass of 1600 rows allows
                   (a seed's own MLE is up to 0.32 from the truth's slope, and the average of
                   the iterates up to 0.36 from the MLE); the spec's bands hold on the median
                   below. */
                ck_assert_msg(fabs(gate[1] - 8.0) <= 1.0, "seed %d: gate slope %g (the MLE's %g)",
                              seed, gate[1], swapped ? -mle_gate[1] : mle_gate[1]);
                ck_assert_msg(fabs(experts[1] + 2.5) <= 0.5 && fabs(experts[3] - 2.5) <= 0.5,
                              "seed %d: slopes %g %g, the MLE's %g %g", seed, experts[1],
                              experts[3], mle_low, mle_high);
                for (int k = 0; k < 2; ++k)
                    ck_assert_msg(fabs(variances[k] - 1.0) <= 0.4, "seed %d: variance %g (the "
                                  "MLE's %g)", seed, variances[k],
                                  mle_variances[swapped ? 1 - k : k]);
                moe_fit_report report = MOE_FIT_REPORT_INIT;
                EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
                ck_assert_uint_eq(report.samples_seen, 1600);
                ck_assert_uint_eq(report.batches, 1600);
            }
            moe_model_free(model);
            moe_fitter_free(fitter);
        }
        moe_model_free(mle);
        moe_model_free(truth);
        data_free(&train);
        data_free(&test);
    }
    sort(estimation, 10);
    sort(gate_slopes, 10);
    sort(low_slopes, 10);
    sort(high_slopes, 10);
    sort(variances_all, 20);
    ck_assert_msg(0.5 * (estimation[4] + estimation[5]) < 0.05, "median estimation MSE %g",
                  0.5 * (estimation[4] + estimation[5]));
    ck_assert_msg(fabs(0.5 * (gate_slopes[4] + gate_slopes[5]) - 8.0) <= 1.0, "median gate slope");
    ck_assert_msg(fabs(0.5 * (low_slopes[4] + low_slopes[5]) + 2.5) <= 0.3 &&
                      fabs(0.5 * (high_slopes[4] + high_slopes[5]) - 2.5) <= 0.3,
                  "median slopes");
    ck_assert_msg(fabs(0.5 * (variances_all[9] + variances_all[10]) - 1.0) <= 0.3,
                  "median variance");
}
END_TEST

/* Setting 6.1 with d = 1 and x ~ U[-1, 1] from moe/rng.h: stream `stream` of seed 2026, the
   generator of examples/paper/ismm_streams.c (setting 61). */
static void stream_61(data *out, size_t n, uint64_t stream)
{
    moe_rng rng;
    moe_rng_seed(&rng, 2026, 61 * 1000000 + stream);
    out->n = n;
    out->d = 1;
    out->X = malloc(n * sizeof(double));
    out->y = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        double x = 2.0 * moe_rng_uniform(&rng) - 1.0;
        int first = moe_rng_uniform(&rng) < 1.0 / (1.0 + exp(-8.0 * x));
        out->X[i] = x;
        out->y[i] = (first ? -2.5 : 2.5) * x + moe_rng_normal(&rng);
    }
}

/* The gate slope of a K = 2, d = 1 model with its experts in the truth's order (the first
   expert's slope negative). */
static double gate_slope_61(const moe_model_t *model, double *low, double *high)
{
    double gate[4], experts[4];
    EXPECT_STATUS(moe_model_get_gate(model, gate, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
    int swapped = experts[1] > experts[3];
    *low = swapped ? experts[3] : experts[1];
    *high = swapped ? experts[1] : experts[3];
    return swapped ? -gate[1] : gate[1];
}

/*
 * The issue: with the default start (the search of init = mixed on the warm rows) the warm
 * fit separates the gate on some streams (slope 20 to 2000 on 85 rows), and a saturated gate
 * gives the surrogate almost no gradient: the stream kept the warm slope for good (23 or 1710
 * after 1e6 rows). Five streams of 2e4 rows in batches of 16, default options: every gate
 * slope within 2 of the truth's 8 (1.4 at most now) and the experts' within 0.6 of theirs
 * (0.40: the last iterate after 2e4 rows, not an average). The search on the
 * first 85 rows of these streams separates the gate at least once (checked: the test covers
 * the bad start).
 */
/*
 * A steep gate (issue 41): two experts, d = 1, gate logit 30 x, x ~ N(0, 1), experts 1 + 2x
 * and -1 - x, noise 0.5; 2e5 rows in batches of 256 with every option at its default. With
 * the fixed bound (the paper's and Boehning's 1/4 for two experts) the gate's MM step is the
 * gradient over a curvature some 5000 times the gate's own at the truth, and the slope was
 * 10.6 here (em's on the same rows about 30); the local bound's is 20.5.
 */
START_TEST(steep_gate_is_followed)
{
    enum { ROWS = 200000 };
    double *x = malloc(ROWS * sizeof(double)), *y = malloc(ROWS * sizeof(double));
    test_rng rng = {4141};
    for (size_t i = 0; i < ROWS; ++i) {
        x[i] = test_normal(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-30.0 * x[i]));
        y[i] = (first ? 1.0 + 2.0 * x[i] : -1.0 - x[i]) + 0.5 * test_normal(&rng);
    }
    const char *const options[] = {"batch_size", "256", NULL};
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 1);
    for (size_t first = 0; first < ROWS; first += 1000)
        EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 1000, x + first, 1, y + first, NULL),
                      MOE_OK);
    double gate[4], experts[4];
    EXPECT_STATUS(moe_model_get_gate(model, gate, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
    /* The gate's slope toward the expert of slope 2. */
    double slope = gate[1] - gate[3];
    if (fabs(experts[3] - 2.0) < fabs(experts[1] - 2.0))
        slope = -slope;
    ck_assert_msg(slope >= 18.0, "gate slope %g (truth 30)", slope);
    moe_model_free(model);
    moe_fitter_free(fitter);
    free(x);
    free(y);
}
END_TEST

START_TEST(gate_recovers_from_a_separated_warm_start)
{
    double steepest_warm = 0.0;
    for (uint64_t stream = 0; stream < 5; ++stream) {
        data train;
        stream_61(&train, 20000, stream);
        moe_fitter_t *search = NULL;
        ck_assert_int_eq(moe_fitter_create(&search, "em"), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_option(search, "max_iter", "1000"), MOE_OK);
        moe_model_t *warm = gaussian_model(2, 1);
        ck_assert_int_eq(moe_fitter_fit(search, warm, 85, train.X, 1, train.y, NULL), MOE_OK);
        double low = 0.0, high = 0.0;
        steepest_warm = fmax(steepest_warm, fabs(gate_slope_61(warm, &low, &high)));
        moe_model_free(warm);
        moe_fitter_free(search);

        const char *const options[] = {"batch_size", "16", NULL};
        moe_fitter_t *fitter = ismm_fitter(options);
        moe_model_t *model = gaussian_model(2, 1);
        for (size_t first = 0; first < train.n; first += 1000)
            ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 1000, train.X + first, 1,
                                                    train.y + first, NULL),
                             MOE_OK);
        double slope = gate_slope_61(model, &low, &high);
        ck_assert_msg(fabs(slope - 8.0) <= 2.0, "stream %d: gate slope %g (truth 8)",
                      (int)stream, slope);
        ck_assert_msg(fabs(low + 2.5) <= 0.6 && fabs(high - 2.5) <= 0.6,
                      "stream %d: expert slopes %g %g", (int)stream, low, high);
        moe_model_free(model);
        moe_fitter_free(fitter);
        data_free(&train);
    }
    ck_assert_msg(steepest_warm > 20.0, "no warm fit separated the gate (steepest slope %g)",
                  steepest_warm);
}
END_TEST

/* gamma_1 = 1 replaces the warm start by one sample: variances collapse onto the floor. The
   estimator must say so through its counters, not crash or return NaN. */
START_TEST(unit_first_step_trips_the_floor)
{
    data train;
    setting_61(&train, 400, 5, 2);
    const char *const options[] = {"init", "model", "batch_size", "1", "step_offset", "0",
                                   "step_scale", "1", "warm_start", "85", NULL};
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = truth_model(2, 1, 5);
    ck_assert_int_eq(stream(fitter, model, &train, 0, train.n), MOE_OK);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_msg(report.floored_variances > 0, "no variance was floored");
    double parameters[6];
    EXPECT_STATUS(moe_model_get_experts(model, parameters, 6), MOE_OK);
    for (int i = 0; i < 6; ++i)
        ck_assert(isfinite(parameters[i]));
    moe_model_free(model);
    moe_fitter_free(fitter);
    data_free(&train);
}
END_TEST

/* After several epochs with a decaying step, the online log-likelihood per row is within 0.01
   of the batch MM fixed point started from the online estimate. */
START_TEST(online_reaches_the_batch_fixed_point)
{
    data train;
    setting_61(&train, 2000, 12, 2);
    const char *const online[] = {"batch_size", "10", "max_iter", "15", "tol", "0", NULL};
    moe_fitter_t *fitter = ismm_fitter(online);
    moe_model_t *model = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, train.n, train.X, 2, train.y, NULL), MOE_OK);
    double online_loglik = 0.0, batch_loglik = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, train.n, train.X, 2, train.y, NULL, &online_loglik),
                  MOE_OK);
    const char *const batch[] = {"init", "model", "max_iter", "2000", "tol", "1e-12", NULL};
    moe_fitter_t *mm = ismm_fitter(batch);
    ck_assert_int_eq(moe_fitter_fit(mm, model, train.n, train.X, 2, train.y, NULL), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(model, train.n, train.X, 2, train.y, NULL, &batch_loglik),
                  MOE_OK);
    ck_assert_msg(batch_loglik >= online_loglik - 1e-9 * fabs(online_loglik),
                  "batch MM lowered the log-likelihood");
    ck_assert_msg((batch_loglik - online_loglik) / (double)train.n < 0.01,
                  "online %.6f, batch %.6f per row", online_loglik / train.n,
                  batch_loglik / train.n);
    moe_model_free(model);
    moe_fitter_free(fitter);
    moe_fitter_free(mm);
    data_free(&train);
}
END_TEST

/* ---- Sessions and checkpoints ---------------------------------------------------------------- */

static moe_fit_report session_report(const moe_fitter_t *fitter)
{
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    return report;
}

/* Two reports of one session, however it was cut into calls or resumed: the same rows,
   steps and prequential log-likelihood, bit for bit. */
static void expect_same_session(const moe_fit_report *a, const moe_fit_report *b)
{
    ck_assert_uint_eq(a->samples_seen, b->samples_seen);
    ck_assert_uint_eq(a->stream_steps, b->stream_steps);
    ck_assert_uint_eq(a->stream_rows, b->stream_rows);
    ck_assert_msg(memcmp(&a->stream_loglik, &b->stream_loglik, sizeof(double)) == 0,
                  "stream log-likelihood %.17g against %.17g", a->stream_loglik,
                  b->stream_loglik);
    ck_assert_uint_eq(a->stages, b->stages);
}

static size_t model_bytes(const moe_model_t *model, unsigned char *buffer, size_t capacity)
{
    size_t written = 0;
    ck_assert_int_eq(moe_model_save_buffer(model, buffer, capacity, &written), MOE_OK);
    return written;
}

/* With batch_size B, any split of the stream into calls gives the same model, bit for bit. */
START_TEST(any_split_gives_the_same_model)
{
    data train;
    setting_61(&train, 1000, 21, 2);
    const char *const options[] = {"batch_size", "7", "polyak", "20", NULL};
    unsigned char first[4096], other[4096];
    size_t first_size = 0;
    moe_fit_report first_report = MOE_FIT_REPORT_INIT;
    for (int split = 0; split < 3; ++split) {
        moe_fitter_t *fitter = ismm_fitter(options);
        moe_model_t *model = gaussian_model(2, 2);
        test_rng rng = {(uint64_t)split + 1};
        size_t at = 0;
        while (at < train.n) {
            size_t count = split == 0 ? train.n : 1 + (size_t)(test_uniform(&rng) * (split == 1 ? 5 : 150));
            if (count > train.n - at)
                count = train.n - at;
            ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, count, train.X + 2 * at, 2,
                                                    train.y + at, NULL),
                             MOE_OK);
            at += count;
        }
        moe_fit_report report = session_report(fitter);
        if (split == 0) {
            first_size = model_bytes(model, first, sizeof first);
            first_report = report;
        } else {
            size_t size = model_bytes(model, other, sizeof other);
            ck_assert(size == first_size && memcmp(first, other, size) == 0);
            expect_same_session(&first_report, &report);
        }
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    data_free(&train);
}
END_TEST

/* A stream interrupted, saved to a file, loaded by another process and continued gives the
   same model as the stream in one go; damaged states are MOE_ERR_FORMAT. */
START_TEST(checkpoints_continue_bit_for_bit)
{
    data train;
    setting_61(&train, 1200, 31, 2);
    const char *const options[] = {"batch_size", "5", "polyak", "50", "bound", "bohning", NULL};
    unsigned char whole[4096], resumed[4096];
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, train.n, train.X, 2, train.y, NULL),
                     MOE_OK);
    size_t whole_size = model_bytes(model, whole, sizeof whole);
    moe_model_free(model);
    moe_fitter_free(fitter);

    /* The first 503 rows (mid-batch), a checkpoint. */
    char path[] = "ismm_checkpoint_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    fitter = ismm_fitter(options);
    model = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 503, train.X, 2, train.y, NULL), MOE_OK);
    ck_assert_int_eq(moe_fitter_save_state(fitter, path), MOE_OK);
    size_t state_size = 0;
    ck_assert_int_eq(moe_fitter_save_state_buffer(fitter, NULL, 0, &state_size), MOE_OK);
    unsigned char *state = malloc(state_size);
    ck_assert_int_eq(moe_fitter_save_state_buffer(fitter, state, state_size, &state_size), MOE_OK);
    moe_fitter_free(fitter);
    /* The model file too: the continuing process has the model as it was. */
    char model_path[] = "ismm_model_XXXXXX";
    fd = mkstemp(model_path);
    close(fd);
    ck_assert_int_eq(moe_model_save(model, model_path), MOE_OK);
    moe_model_free(model);

    pid_t child = fork();
    if (child == 0) {
        moe_fitter_t *again = NULL;
        moe_model_t *loaded = NULL;
        int ok = moe_fitter_create(&again, "ismm") == MOE_OK &&
                 moe_fitter_load_state(again, path) == MOE_OK &&
                 moe_model_load(&loaded, model_path) == MOE_OK &&
                 moe_fitter_partial_fit(again, loaded, train.n - 503, train.X + 2 * 503, 2,
                                        train.y + 503, NULL) == MOE_OK &&
                 moe_model_save(loaded, model_path) == MOE_OK;
        _exit(ok ? 0 : 1);
    }
    int wstatus = 0;
    ck_assert_int_eq(waitpid(child, &wstatus, 0), child);
    ck_assert(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    moe_model_t *continued = NULL;
    ck_assert_int_eq(moe_model_load(&continued, model_path), MOE_OK);
    size_t resumed_size = model_bytes(continued, resumed, sizeof resumed);
    ck_assert(resumed_size == whole_size && memcmp(whole, resumed, whole_size) == 0);
    moe_model_free(continued);
    unlink(path);
    unlink(model_path);

    /* Every truncation and every bit flip of the state is rejected. */
    moe_fitter_t *probe = ismm_fitter(NULL);
    for (size_t length = 0; length < state_size; length += (length < 64 ? 1 : 37))
        ck_assert_int_eq(moe_fitter_load_state_buffer(probe, state, length), MOE_ERR_FORMAT);
    for (size_t byte = 0; byte < state_size; byte += 3) {
        state[byte] ^= 0x10;
        ck_assert_int_eq(moe_fitter_load_state_buffer(probe, state, state_size), MOE_ERR_FORMAT);
        state[byte] ^= 0x10;
    }
    ck_assert_int_eq(moe_fitter_load_state_buffer(probe, state, state_size), MOE_OK);
    moe_fitter_free(probe);
    free(state);
    data_free(&train);
}
END_TEST

/* Degenerate streams: a batch with NaN is rejected whole and changes nothing; a constant
   batch and an expert no row reaches give statuses and counters, never NaN. */
START_TEST(degenerate_streams)
{
    data train;
    setting_61(&train, 600, 41, 2);
    const char *const options[] = {"batch_size", "20", NULL};
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(3, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 300, train.X, 2, train.y, NULL), MOE_OK);
    size_t before_size = 0;
    EXPECT_STATUS(moe_fitter_save_state_buffer(fitter, NULL, 0, &before_size), MOE_OK);
    unsigned char *before = malloc(before_size), *after = malloc(before_size);
    EXPECT_STATUS(moe_fitter_save_state_buffer(fitter, before, before_size, &before_size), MOE_OK);
    double bad_X[40];
    double bad_y[20];
    memcpy(bad_X, train.X + 600, sizeof bad_X);
    memcpy(bad_y, train.y + 300, sizeof bad_y);
    bad_y[7] = NAN;
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 20, bad_X, 2, bad_y, NULL),
                     MOE_ERR_NON_FINITE);
    size_t after_size = 0;
    EXPECT_STATUS(moe_fitter_save_state_buffer(fitter, after, before_size, &after_size), MOE_OK);
    ck_assert(after_size == before_size && memcmp(before, after, before_size) == 0);
    /* A constant batch. */
    double constant_X[40], constant_y[20];
    for (int i = 0; i < 20; ++i) {
        constant_X[2 * i] = 0.5;
        constant_X[2 * i + 1] = -0.5;
        constant_y[i] = 1.0;
    }
    for (int repeat = 0; repeat < 30; ++repeat)
        ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 20, constant_X, 2, constant_y, NULL),
                         MOE_OK);
    double parameters[9];
    EXPECT_STATUS(moe_model_get_experts(model, parameters, 9), MOE_OK);
    for (int i = 0; i < 9; ++i)
        ck_assert(isfinite(parameters[i]));
    EXPECT_STATUS(moe_model_get_variances(model, parameters, 3), MOE_OK);
    for (int i = 0; i < 3; ++i)
        ck_assert(isfinite(parameters[i]) && parameters[i] > 0.0);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.samples_seen, 300 + 600);
    /* The structure of a session cannot change. */
    moe_model_t *other = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, other, 20, train.X, 2, train.y, NULL),
                     MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_fitter_reset(fitter), MOE_OK);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, other, 200, train.X, 2, train.y, NULL), MOE_OK);
    moe_model_free(other);
    /* Options: bad values, and the schedule fixed during a session. */
    EXPECT_STATUS(moe_fitter_set_option(fitter, "step_decay", "0.4"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "bound", "tight"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "step_scale", "0x1"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "gate_l2", "1"), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "step_scale", "0.5"), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_fitter_reset(fitter), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "step_scale", "0.5"), MOE_OK);
    /* A link model: ismm's expert step is least squares. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = 2;
    spec.link = MOE_LINK_SIGMOID;
    moe_model_t *linked = NULL;
    ck_assert_int_eq(moe_model_create(&linked, &spec), MOE_OK);
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, linked, 200, train.X, 2, train.y, NULL),
                  MOE_ERR_UNSUPPORTED);
    moe_model_free(linked);
    free(before);
    free(after);
    moe_model_free(model);
    moe_fitter_free(fitter);
    data_free(&train);
}
END_TEST

/* ---- Sessions under attack: options changed, failures, cancels, crafted states -------------- */

/* The fitter's saved state (malloc'd) and its size. */
static unsigned char *state_bytes(const moe_fitter_t *fitter, size_t *size)
{
    ck_assert_int_eq(moe_fitter_save_state_buffer(fitter, NULL, 0, size), MOE_OK);
    unsigned char *bytes = malloc(*size);
    ck_assert_int_eq(moe_fitter_save_state_buffer(fitter, bytes, *size, size), MOE_OK);
    return bytes;
}

static void expect_same_state(const moe_fitter_t *fitter, const unsigned char *before,
                              size_t before_size)
{
    size_t size = 0;
    unsigned char *now = state_bytes(fitter, &size);
    ck_assert_msg(size == before_size && memcmp(now, before, size) == 0,
                  "the session changed (%zu bytes, %zu before)", size, before_size);
    free(now);
}

/* Word `index` of the estimator's bytes inside a fitter state (fitter_state.c's layout: the
   name, the options, the session, then ismm's words), and the checksum made right again, as
   a crafted file would have it. */
static size_t ismm_offset(const unsigned char *state)
{
    size_t name = moe_get_u32(state + 24);
    size_t options = moe_get_u32(state + 28 + name);
    /* The session: 28 bytes, 52 from format version 2 on (its stream counts). */
    return 28 + name + 4 + options * 16 + (moe_get_u32(state + 8) >= 2 ? 52 : 28);
}

static void set_word(unsigned char *state, size_t size, size_t index, uint64_t value)
{
    moe_put_u64(state + ismm_offset(state) + 8 * index, value);
    moe_put_u32(state + size - 4, moe_crc32(state, size - 4));
}

static void set_real(unsigned char *state, size_t size, size_t index, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    set_word(state, size, index, bits);
}

static size_t ismm_words(const unsigned char *state, size_t size)
{
    return (size - 4 - ismm_offset(state)) / 8;
}

/* A session reports what it is: its rows, its steps and the prequential log-likelihood
   (each batch under the parameters before its step), not the last batch's log-likelihood
   and a convergence flag; a resumed session reports what the unbroken one does. */
START_TEST(session_reports_its_prequential_loglik)
{
    data train;
    setting_61(&train, 1500, 41, 2);
    const char *const options[] = {"batch_size", "7", "polyak", "50", NULL};
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, train.n, train.X, 2, train.y, NULL),
                     MOE_OK);
    moe_fit_report whole = session_report(fitter);
    ck_assert(whole.stages & MOE_STAGE_STREAM);
    ck_assert_uint_eq(whole.samples_seen, train.n);
    /* The warm start's rows and the unfinished batch are not scored. */
    ck_assert_uint_eq(whole.stream_rows, 7 * whole.stream_steps);
    size_t warm = 10 * 11; /* ten rows per free parameter */
    ck_assert_uint_ge(whole.stream_rows, train.n - warm - 6);
    ck_assert_uint_le(whole.stream_rows, train.n - warm);
    /* The sum of the steps' batch log-likelihoods, as the trace has them. */
    size_t length = 0;
    ck_assert_int_eq(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
    ck_assert_uint_eq(length, whole.stream_steps);
    double *trace = malloc(length * sizeof(double)), sum = 0.0;
    ck_assert_int_eq(moe_fitter_get_trace(fitter, trace, length, &length), MOE_OK);
    for (size_t t = 0; t < length; ++t)
        sum += trace[t];
    ck_assert_double_eq(sum, whole.stream_loglik);
    /* A row of setting 6.1 at the truth has an expected log-likelihood of about -1.6; the
       average over a stream that learns as it goes is a little below. */
    double average = whole.stream_loglik / (double)whole.stream_rows;
    ck_assert_msg(average > -2.5 && average < -1.3, "average %g", average);
    free(trace);
    moe_model_free(model);
    moe_fitter_free(fitter);

    /* Cut into calls of any size, and saved and resumed in another fitter mid-batch. */
    fitter = ismm_fitter(options);
    model = gaussian_model(2, 2);
    size_t cuts[] = {40, 63, 503, 504, 1100};
    size_t at = 0;
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; ++c) {
        ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, cuts[c] - at, train.X + 2 * at,
                                                2, train.y + at, NULL),
                         MOE_OK);
        at = cuts[c];
    }
    size_t size = 0;
    ck_assert_int_eq(moe_fitter_save_state_buffer(fitter, NULL, 0, &size), MOE_OK);
    unsigned char *state = malloc(size);
    ck_assert_int_eq(moe_fitter_save_state_buffer(fitter, state, size, &size), MOE_OK);
    moe_fitter_free(fitter);
    moe_fitter_t *resumed = ismm_fitter(NULL);
    ck_assert_int_eq(moe_fitter_load_state_buffer(resumed, state, size), MOE_OK);
    ck_assert_int_eq(moe_fitter_partial_fit(resumed, model, train.n - at, train.X + 2 * at, 2,
                                            train.y + at, NULL),
                     MOE_OK);
    moe_fit_report again = session_report(resumed);
    expect_same_session(&whole, &again);
    moe_fitter_free(resumed);

    /* A state of format version 1 (before the stream counts) still loads: its session goes
       on, counting its steps from the resume. */
    size_t session = ismm_offset(state) - 52;
    unsigned char *old = malloc(size - 24);
    memcpy(old, state, session + 20);
    memcpy(old + session + 20, state + session + 44, size - (session + 44));
    moe_put_u32(old + 8, 1);
    moe_put_u64(old + 16, size - 24);
    moe_put_u32(old + size - 24 - 4, moe_crc32(old, size - 24 - 4));
    resumed = ismm_fitter(NULL);
    ck_assert_msg(moe_fitter_load_state_buffer(resumed, old, size - 24) == MOE_OK, "%s",
                  moe_fitter_last_error(resumed));
    ck_assert_int_eq(moe_fitter_partial_fit(resumed, model, train.n - at, train.X + 2 * at, 2,
                                            train.y + at, NULL),
                     MOE_OK);
    again = session_report(resumed);
    ck_assert_uint_eq(again.samples_seen, whole.samples_seen);
    ck_assert_uint_lt(again.stream_steps, whole.stream_steps);
    ck_assert_uint_gt(again.stream_steps, 0);
    free(old);
    /* A reset session starts its counts again. */
    ck_assert_int_eq(moe_fitter_reset(resumed), MOE_OK);
    ck_assert_int_eq(moe_fitter_partial_fit(resumed, model, 50, train.X, 2, train.y, NULL),
                     MOE_OK);
    again = session_report(resumed);
    ck_assert_uint_eq(again.samples_seen, 50);
    ck_assert_uint_eq(again.stream_steps, 0);
    ck_assert_uint_eq(again.stream_rows, 0);
    ck_assert_double_eq(again.stream_loglik, 0.0);
    free(state);
    moe_model_free(model);
    moe_fitter_free(resumed);
    data_free(&train);
}
END_TEST

enum { WORD_WARM_START = 4, WORD_FLOOR = 18, WORD_WARM_ROWS = 19, WORD_BATCH = 20 };

/* Both streams' models, bit for bit. */
static void expect_same_model(const moe_model_t *a, const moe_model_t *b)
{
    unsigned char first[4096], second[4096];
    size_t first_size = model_bytes(a, first, sizeof first);
    size_t second_size = model_bytes(b, second, sizeof second);
    ck_assert(first_size == second_size && memcmp(first, second, first_size) == 0);
}

/* batch_size is the session's from its first call: another value mid-session (set on the
   fitter, or saved with the state) is refused and changes nothing; the rows waiting in an
   unfinished batch never outgrow their buffer. */
START_TEST(batch_size_is_fixed_in_a_session)
{
    data train;
    setting_61(&train, 400, 61, 2);
    const char *const options[] = {"batch_size", "100", NULL};
    moe_fitter_t *whole = ismm_fitter(options);
    moe_model_t *reference = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(whole, reference, 400, train.X, 2, train.y, NULL),
                     MOE_OK);
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2);
    /* The warm start's 85 rows, then 95 of a batch of 100. */
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 180, train.X, 2, train.y, NULL),
                     MOE_OK);
    size_t before_size = 0;
    unsigned char *before = state_bytes(fitter, &before_size);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "batch_size", "5"), MOE_OK);
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 50, train.X + 2 * 180, 2,
                                         train.y + 180, NULL),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "batch_size"));
    /* Saved with the other value, loaded elsewhere: refused there too. */
    size_t changed_size = 0;
    unsigned char *changed = state_bytes(fitter, &changed_size);
    moe_fitter_t *elsewhere = ismm_fitter(NULL);
    ck_assert_int_eq(moe_fitter_load_state_buffer(elsewhere, changed, changed_size), MOE_OK);
    moe_model_t *copy = gaussian_model(2, 2);
    EXPECT_STATUS(moe_fitter_partial_fit(elsewhere, copy, 50, train.X + 2 * 180, 2,
                                         train.y + 180, NULL),
                  MOE_ERR_INVALID_ARGUMENT);
    moe_model_free(copy);
    moe_fitter_free(elsewhere);
    free(changed);
    /* Back to the session's value: nothing happened, and the stream goes on as in one go. */
    ck_assert_int_eq(moe_fitter_set_option(fitter, "batch_size", "100"), MOE_OK);
    expect_same_state(fitter, before, before_size);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 220, train.X + 2 * 180, 2,
                                            train.y + 180, NULL),
                     MOE_OK);
    expect_same_model(model, reference);
    /* A new session takes the new value. */
    ck_assert_int_eq(moe_fitter_reset(fitter), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "batch_size", "5"), MOE_OK);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 200, train.X, 2, train.y, NULL),
                     MOE_OK);
    free(before);
    moe_model_free(model);
    moe_model_free(reference);
    moe_fitter_free(fitter);
    moe_fitter_free(whole);
    data_free(&train);
}
END_TEST

/* A call that fails leaves the session as it was: rows validated before any step (a batch
   without weight), a numerical failure after some steps undone, the rows waiting from earlier
   calls kept; the message names the caller's row. */
START_TEST(failed_calls_change_nothing)
{
    data train;
    setting_61(&train, 400, 71, 2);
    const char *const options[] = {"batch_size", "20", "warm_start", "85", NULL};
    moe_fitter_t *whole = ismm_fitter(options);
    moe_model_t *reference = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(whole, reference, 400, train.X, 2, train.y, NULL),
                     MOE_OK);
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2);
    /* 85 warm rows, 15 waiting. */
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 100, train.X, 2, train.y, NULL),
                     MOE_OK);
    size_t before_size = 0;
    unsigned char *before = state_bytes(fitter, &before_size);
    unsigned char model_before[4096];
    size_t model_size = model_bytes(model, model_before, sizeof model_before);
    /* The next 70 rows: 5 complete the waiting batch, then 3 batches in place, 5 left. */
    double y[70], weights[70];
    const double *X = train.X + 2 * 100;
    for (size_t bad = 0; bad < 2; ++bad) {
        size_t row = bad == 0 ? 2 : 45; /* in the waiting batch; in the third batch */
        memcpy(y, train.y + 100, sizeof y);
        y[row] = 1e200; /* finite, but no expert gives it a finite density */
        EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 70, X, 2, y, NULL),
                      MOE_ERR_NUMERICAL);
        char expected[64];
        snprintf(expected, sizeof expected, "row %zu: ", row); /* the row of this call's data */
        ck_assert_msg(strncmp(moe_fitter_last_error(fitter), expected, strlen(expected)) == 0,
                      "%s",
                      moe_fitter_last_error(fitter));
        expect_same_state(fitter, before, before_size);
    }
    for (size_t i = 0; i < 70; ++i)
        weights[i] = i >= 25 && i < 45 ? 0.0 : 1.0;
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 70, X, 2, train.y + 100, weights),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "rows 25 to 44"));
    expect_same_state(fitter, before, before_size);
    unsigned char model_after[4096];
    ck_assert(model_bytes(model, model_after, sizeof model_after) == model_size &&
              memcmp(model_before, model_after, model_size) == 0);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.samples_seen, 100);
    ck_assert_uint_eq(report.batches, 1);
    /* The stream goes on as if the failed calls had not been made. */
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 300, train.X + 200, 2, train.y + 100,
                                            NULL),
                     MOE_OK);
    expect_same_model(model, reference);
    free(before);
    moe_model_free(model);
    moe_model_free(reference);
    moe_fitter_free(fitter);
    moe_fitter_free(whole);
    data_free(&train);
}
END_TEST

static int cancel_at_third(const moe_progress *progress, void *user_data)
{
    (void)progress;
    int *calls = user_data;
    return ++*calls >= 3;
}

/* A call cancelled half way is a failed call: the rows the report counts are exactly those
   the session consumed, so resuming from there gives the stream in one go, bit for bit. */
START_TEST(cancel_counts_what_the_session_consumed)
{
    data train;
    setting_61(&train, 300, 81, 2);
    const char *const options[] = {"batch_size", "10", NULL};
    moe_fitter_t *whole = ismm_fitter(options);
    moe_model_t *reference = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(whole, reference, 300, train.X, 2, train.y, NULL),
                     MOE_OK);
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 100, train.X, 2, train.y, NULL),
                     MOE_OK);
    int calls = 0;
    ck_assert_int_eq(moe_fitter_set_progress(fitter, cancel_at_third, &calls), MOE_OK);
    /* Several batches step before the third callback cancels. */
    EXPECT_STATUS(moe_fitter_partial_fit(fitter, model, 200, train.X + 200, 2, train.y + 100,
                                         NULL),
                  MOE_ERR_CANCELLED);
    ck_assert_int_eq(calls, 3);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    size_t consumed = report.samples_seen;
    ck_assert_uint_eq(consumed, 100);
    size_t size = 0;
    unsigned char *saved = state_bytes(fitter, &size);
    moe_fitter_t *resumed = ismm_fitter(NULL);
    ck_assert_int_eq(moe_fitter_load_state_buffer(resumed, saved, size), MOE_OK);
    ck_assert_int_eq(moe_fitter_partial_fit(resumed, model, 300 - consumed,
                                            train.X + 2 * consumed, 2, train.y + consumed, NULL),
                     MOE_OK);
    expect_same_model(model, reference);
    free(saved);
    moe_model_free(model);
    moe_model_free(reference);
    moe_fitter_free(resumed);
    moe_fitter_free(fitter);
    moe_fitter_free(whole);
    data_free(&train);
}
END_TEST

/* A state saved during the warm start loads and goes on as if it had never been saved; until
   the warm start has its rows the model is the caller's and the report's stages say that
   nothing was fitted. */
START_TEST(warm_start_states_round_trip)
{
    data train;
    setting_61(&train, 300, 91, 2);
    const char *const options[] = {"batch_size", "7", NULL};
    moe_fitter_t *whole = ismm_fitter(options);
    moe_model_t *reference = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(whole, reference, 300, train.X, 2, train.y, NULL),
                     MOE_OK);
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2), *fresh = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 50, train.X, 2, train.y, NULL),
                     MOE_OK);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.stages & MOE_STAGE_JOINT, 0);
    expect_same_model(model, fresh);
    size_t size = 0;
    unsigned char *saved = state_bytes(fitter, &size);
    moe_fitter_t *resumed = ismm_fitter(NULL);
    EXPECT_STATUS(moe_fitter_load_state_buffer(resumed, saved, size), MOE_OK);
    ck_assert_int_eq(moe_fitter_partial_fit(resumed, model, 250, train.X + 100, 2, train.y + 50,
                                            NULL),
                     MOE_OK);
    ck_assert_int_eq(moe_fitter_get_report(resumed, &report), MOE_OK);
    ck_assert_uint_eq(report.stages & MOE_STAGE_JOINT, MOE_STAGE_JOINT);
    expect_same_model(model, reference);
    free(saved);
    moe_model_free(model);
    moe_model_free(fresh);
    moe_model_free(reference);
    moe_fitter_free(resumed);
    moe_fitter_free(fitter);
    moe_fitter_free(whole);
    data_free(&train);
}
END_TEST

/* Two classification experts split by x, streamed in calls of 100 rows from the default
   start: a fit to the warm rows separated a classification expert's classes and the stream
   never recovered (1.46 nats a row below em on the multinomial stream of seed 3). The
   seeds are those of the streams that were stuck. */
static void classification_stream(int multinomial, uint64_t seed, size_t n, double *X, double *y)
{
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0);
    for (size_t i = 0; i < n; ++i) {
        double x = 2.0 * moe_rng_uniform(&rng) - 1.0;
        X[i] = x;
        int first = moe_rng_uniform(&rng) < 1.0 / (1.0 + exp(-6.0 * x));
        double z0 = first ? 2.0 * x + 0.5 : -2.0 * x, z1 = first ? x - 1.0 : 1.0 + 2.0 * x;
        double e0 = exp(z0), e1 = multinomial ? exp(z1) : 0.0, total = e0 + e1 + 1.0;
        double u = moe_rng_uniform(&rng);
        y[i] = multinomial ? (u < e0 / total ? 0.0 : u < (e0 + e1) / total ? 1.0 : 2.0)
                           : (u < e0 / total ? 1.0 : 0.0);
    }
}

START_TEST(classification_experts_recover_from_a_separated_warm_start)
{
    enum { N = 40000 };
    double *X = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
    const struct {
        int multinomial;
        uint64_t seed;
    } cases[] = {{1, 3}, {1, 5}, {0, 9}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        classification_stream(cases[c].multinomial, cases[c].seed, N, X, y);
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.family = cases[c].multinomial ? MOE_FAMILY_MULTINOMIAL : MOE_FAMILY_LOGISTIC;
        spec.n_classes = cases[c].multinomial ? 3 : 0;
        spec.n_experts = 2;
        spec.n_features = 1;
        moe_model_t *batch = NULL, *streamed = NULL;
        ck_assert_int_eq(moe_model_create(&batch, &spec), MOE_OK);
        ck_assert_int_eq(moe_model_create(&streamed, &spec), MOE_OK);
        moe_fitter_t *em = NULL, *ismm = ismm_fitter(NULL);
        ck_assert_int_eq(moe_fitter_create(&em, "em"), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_int(em, MOE_OPT_N_INIT, 1), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(em, batch, N, X, 1, y, NULL), MOE_OK);
        for (size_t first = 0; first < N; first += 100)
            EXPECT_STATUS(moe_fitter_partial_fit(ismm, streamed, 100, X + first, 1, y + first,
                                                 NULL),
                          MOE_OK);
        double best = 0.0, reached = 0.0;
        ck_assert_int_eq(moe_model_loglik(batch, N, X, 1, y, NULL, &best), MOE_OK);
        ck_assert_int_eq(moe_model_loglik(streamed, N, X, 1, y, NULL, &reached), MOE_OK);
        ck_assert_msg((best - reached) / N <= 0.005,
                      "case %zu: ismm %.5f nats a row below em's %.5f", c, (best - reached) / N,
                      best / N);
        moe_model_free(batch);
        moe_model_free(streamed);
        moe_fitter_free(em);
        moe_fitter_free(ismm);
    }
    free(X);
    free(y);
}
END_TEST

/* A started session with no rows waiting (every call one batch, or whole batches only) saves
   and loads, and goes on as the unbroken stream does. */
START_TEST(states_without_waiting_rows_round_trip)
{
    data train;
    setting_61(&train, 400, 93, 2);
    const char *const one_batch[] = {"warm_start", "40", NULL};
    const char *const whole_batches[] = {"warm_start", "40", "batch_size", "20", NULL};
    const char *const *settings[] = {one_batch, whole_batches};
    for (size_t o = 0; o < 2; ++o) {
        moe_fitter_t *whole = ismm_fitter(settings[o]), *fitter = ismm_fitter(settings[o]);
        moe_model_t *reference = gaussian_model(2, 2), *model = gaussian_model(2, 2);
        for (size_t first = 0; first < 400; first += 100) {
            EXPECT_STATUS(stream(whole, reference, &train, first, 100), MOE_OK);
            if (first < 200)
                EXPECT_STATUS(stream(fitter, model, &train, first, 100), MOE_OK);
        }
        size_t size = 0;
        unsigned char *saved = state_bytes(fitter, &size);
        moe_fitter_t *resumed = ismm_fitter(NULL);
        EXPECT_STATUS(moe_fitter_load_state_buffer(resumed, saved, size), MOE_OK);
        for (size_t first = 200; first < 400; first += 100)
            EXPECT_STATUS(stream(resumed, model, &train, first, 100), MOE_OK);
        expect_same_model(model, reference);
        free(saved);
        moe_model_free(model);
        moe_model_free(reference);
        moe_fitter_free(resumed);
        moe_fitter_free(fitter);
        moe_fitter_free(whole);
    }
    data_free(&train);
}
END_TEST

/* A classification session with `waiting` rows in an unfinished batch (labels 0 .. classes-1). */
static unsigned char *classification_state(size_t classes, size_t *size)
{
    data train;
    setting_61(&train, 95, 101, 2);
    for (size_t i = 0; i < train.n; ++i)
        train.y[i] = (double)(i % classes);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = classes == 2 ? MOE_FAMILY_LOGISTIC : MOE_FAMILY_MULTINOMIAL;
    spec.n_classes = classes == 2 ? 0 : classes;
    spec.n_experts = 2;
    spec.n_features = 2;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    const char *const options[] = {"batch_size", "20", NULL};
    moe_fitter_t *fitter = ismm_fitter(options);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 95, train.X, 2, train.y, NULL),
                     MOE_OK);
    unsigned char *bytes = state_bytes(fitter, size);
    moe_model_free(model);
    moe_fitter_free(fitter);
    data_free(&train);
    return bytes;
}

/* Load a crafted state: MOE_ERR_FORMAT expected. */
static void expect_refused(const unsigned char *state, size_t size, const char *what)
{
    moe_fitter_t *fitter = ismm_fitter(NULL);
    moe_status status = moe_fitter_load_state_buffer(fitter, state, size);
    ck_assert_msg(status == MOE_ERR_FORMAT, "%s: status %d", what, (int)status);
    moe_fitter_free(fitter);
}

/* Crafted states, checksums made right: waiting rows that do not fit their session, labels
   no class has, sizes not the settings' are MOE_ERR_FORMAT before anything is allocated. */
START_TEST(crafted_states_are_refused)
{
    data train;
    setting_61(&train, 40, 111, 2);
    /* During the warm start: 30 of 40 rows. Claiming a warm start of 10 puts 30 rows in a
       buffer of 10. */
    const char *const options[] = {"batch_size", "5", "warm_start", "40", NULL};
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 30, train.X, 2, train.y, NULL),
                     MOE_OK);
    size_t size = 0;
    unsigned char *state = state_bytes(fitter, &size);
    set_word(state, size, WORD_WARM_START, 10);
    set_word(state, size, WORD_WARM_ROWS, 10);
    expect_refused(state, size, "30 rows waiting for a warm start of 10");
    /* The same with a variance floor, as a session that has started has one. */
    set_real(state, size, WORD_FLOOR, 1.0);
    expect_refused(state, size, "30 rows waiting for a warm start of 10, a floor");
    free(state);
    /* Labels: each must be a class of the model, as partial_fit checks its rows. */
    for (size_t classes = 2; classes <= 3; ++classes) {
        const double bad[] = {7.0, 1e18, 0.5, -1.0, (double)classes};
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
            state = classification_state(classes, &size);
            size_t words = ismm_words(state, size);
            set_real(state, size, words - 2, bad[b]); /* the last waiting row's label */
            char what[64];
            snprintf(what, sizeof what, "label %g of %zu classes", bad[b], classes);
            expect_refused(state, size, what);
            free(state);
        }
        state = classification_state(classes, &size);
        set_real(state, size, ismm_words(state, size) - 2, (double)(classes - 1));
        moe_fitter_t *probe = ismm_fitter(NULL);
        EXPECT_STATUS(moe_fitter_load_state_buffer(probe, state, size), MOE_OK);
        moe_fitter_free(probe);
        free(state);
    }
    /* A warm start (and a buffer) of 1e8 rows the settings do not ask for. */
    state = state_bytes(fitter, &size);
    set_word(state, size, WORD_WARM_ROWS, 100000000);
    set_word(state, size, WORD_BATCH, 100000000);
    expect_refused(state, size, "warm rows not the settings'");
    free(state);
    moe_model_free(model);
    moe_fitter_free(fitter);
    data_free(&train);
}
END_TEST

/* A state allocates what it carries: a session of batches of 1e8 rows with 3 waiting loads in
   a small address space (it reserved 1e8 rows before). */
START_TEST(loading_allocates_what_the_state_carries)
{
#if defined(__SANITIZE_ADDRESS__)
    return; /* the sanitizer's shadow memory needs the address space */
#endif
    data train;
    setting_61(&train, 100, 121, 2);
    const char *const options[] = {"batch_size", "5", NULL};
    moe_fitter_t *fitter = ismm_fitter(options);
    moe_model_t *model = gaussian_model(2, 2);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 93, train.X, 2, train.y, NULL),
                     MOE_OK);
    size_t size = 0;
    unsigned char *state = state_bytes(fitter, &size);
    set_word(state, size, WORD_BATCH, 100000000);
    pid_t child = fork();
    if (child == 0) {
        struct rlimit limit = {(rlim_t)768 << 20, (rlim_t)768 << 20};
        setrlimit(RLIMIT_AS, &limit);
        moe_fitter_t *probe = NULL;
        if (moe_fitter_create(&probe, "ismm") != MOE_OK)
            _exit(3);
        moe_status status = moe_fitter_load_state_buffer(probe, state, size);
        _exit(status == MOE_OK ? 0 : status == MOE_ERR_FORMAT ? 1 : 2);
    }
    int wstatus = 0;
    ck_assert_int_eq(waitpid(child, &wstatus, 0), child);
    ck_assert_msg(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "exit %d",
                  WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    free(state);
    moe_model_free(model);
    moe_fitter_free(fitter);
    data_free(&train);
}
END_TEST

/* Every header word of a saved session set to edge values: the load refuses it or the state
   is one a session can go on from (statuses, never a crash; run in the sanitizer build). */
START_TEST(any_header_word_is_safe)
{
    data train;
    setting_61(&train, 300, 131, 2);
    const uint64_t values[] = {0, 1, 2, 3, 84, 85, 86, 1000, 100000000, (uint64_t)1 << 53,
                               UINT64_MAX};
    const size_t counts[] = {30, 93};
    for (size_t c = 0; c < 2; ++c) {
        const char *const options[] = {"batch_size", "5", "polyak", "2", NULL};
        moe_fitter_t *fitter = ismm_fitter(options);
        moe_model_t *model = gaussian_model(2, 2);
        ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, counts[c], train.X, 2, train.y,
                                                NULL),
                         MOE_OK);
        size_t size = 0;
        unsigned char *original = state_bytes(fitter, &size);
        unsigned char *state = malloc(size);
        for (size_t word = 1; word < 22; ++word)
            for (size_t v = 0; v < sizeof values / sizeof values[0]; ++v) {
                memcpy(state, original, size);
                set_word(state, size, word, values[v]);
                moe_fitter_t *probe = ismm_fitter(NULL);
                moe_status status = moe_fitter_load_state_buffer(probe, state, size);
                ck_assert(status == MOE_OK || status == MOE_ERR_FORMAT);
                /* An accepted state goes on, but for a session batch size other than the
                   saved option's 5: refused as batch_size_is_fixed_in_a_session has it. */
                moe_status expected = word == WORD_BATCH && values[v] != 5
                                          ? MOE_ERR_INVALID_ARGUMENT
                                          : MOE_OK;
                if (status == MOE_OK)
                    ck_assert_msg(moe_fitter_partial_fit(probe, model, 10, train.X + 2 * 200, 2,
                                                         train.y + 200, NULL) == expected,
                                  "word %zu = %llu: the load accepted it; the partial fit: '%s'",
                                  word, (unsigned long long)values[v], moe_last_error());
                moe_fitter_free(probe);
            }
        free(state);
        free(original);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    data_free(&train);
}
END_TEST

/* The same fit for any thread count. */
START_TEST(threads_do_not_change_the_fit)
{
    data train;
    setting_61(&train, 9000, 51, 2);
    unsigned char first[4096], other[4096];
    size_t first_size = 0;
    for (int threads = 1; threads <= 2; ++threads) {
        char text[4];
        snprintf(text, sizeof text, "%d", threads);
        const char *const options[] = {"batch_size", "5000", "max_iter", "3", "threads", text,
                                       NULL};
        moe_fitter_t *fitter = ismm_fitter(options);
        moe_model_t *model = gaussian_model(2, 2);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, train.n, train.X, 2, train.y, NULL), MOE_OK);
        if (threads == 1)
            first_size = model_bytes(model, first, sizeof first);
        else {
            size_t size = model_bytes(model, other, sizeof other);
            ck_assert(size == first_size && memcmp(first, other, size) == 0);
        }
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    data_free(&train);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("ismm");
    TCase *surrogate = tcase_create("surrogate");
    tcase_set_timeout(surrogate, 120);
    tcase_add_test(surrogate, surrogate_majorises_the_loss);
    tcase_add_test(surrogate, bounds_dominate_the_softmax_hessian);
    tcase_add_test(surrogate, mstep_minimises_the_surrogate);
    tcase_add_test(surrogate, statistics_stay_positive_definite);
    suite_add_tcase(suite, surrogate);
    TCase *fits = tcase_create("fits");
    tcase_set_timeout(fits, 300);
    tcase_add_test(fits, batch_mm_is_monotone);
    tcase_add_test(fits, recovery_in_setting_61);
    tcase_add_test(fits, unit_first_step_trips_the_floor);
    tcase_add_test(fits, online_reaches_the_batch_fixed_point);
    tcase_add_test(fits, gate_recovers_from_a_separated_warm_start);
    tcase_add_test(fits, steep_gate_is_followed);
    suite_add_tcase(suite, fits);
    TCase *sessions = tcase_create("sessions");
    tcase_set_timeout(sessions, 120);
    tcase_add_test(sessions, any_split_gives_the_same_model);
    tcase_add_test(sessions, checkpoints_continue_bit_for_bit);
    tcase_add_test(sessions, session_reports_its_prequential_loglik);
    tcase_add_test(sessions, degenerate_streams);
    tcase_add_test(sessions, threads_do_not_change_the_fit);
    tcase_add_test(sessions, batch_size_is_fixed_in_a_session);
    tcase_add_test(sessions, failed_calls_change_nothing);
    tcase_add_test(sessions, cancel_counts_what_the_session_consumed);
    tcase_add_test(sessions, warm_start_states_round_trip);
    tcase_add_test(sessions, classification_experts_recover_from_a_separated_warm_start);
    tcase_add_test(sessions, states_without_waiting_rows_round_trip);
    tcase_add_test(sessions, crafted_states_are_refused);
    tcase_add_test(sessions, loading_allocates_what_the_state_carries);
    tcase_add_test(sessions, any_header_word_is_safe);
    suite_add_tcase(suite, sessions);
    return run_suite(suite);
}
