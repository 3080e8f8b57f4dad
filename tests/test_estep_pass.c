/*
 * The E-step's pass (pass/posterior.c) against a plain row-by-row computation with libm's
 * exp and log: responsibilities, log-likelihood, entropy, the gate's data terms, gradients
 * and Hessian parts for new and previous targets, and the Gaussian experts' statistics.
 * Every K from 1 to 6 (the one-loop body takes K <= 4, larger K the step-by-step one), all
 * three families, with and without intercept and weights, over more rows than one chunk so
 * that blocks of several sizes occur.
 */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/data.h"
#include "model/family.h"
#include "model/model_impl.h"
#include "pass/posterior.h"
#include "pass/softmax.h"
#include "support/runner.h"
#include "support/synthetic.h"

enum { N = 5003, D = 3, CLASSES = 3 };

typedef struct reference {
    double loglik, entropy, gate_data, previous_data, weight;
    double *resp, *gradient, *previous_gradient, *parts, *grams, *rhs, *totals, *squares;
} reference;

static double log_sum_exp(const double *v, size_t count)
{
    double largest = v[0];
    for (size_t k = 1; k < count; ++k)
        largest = fmax(largest, v[k]);
    double sum = 0.0;
    for (size_t k = 0; k < count; ++k)
        sum += exp(v[k] - largest);
    return largest + log(sum);
}

/* log f_k(y | x) straight from the family's formula. */
static double expert_log_density(const struct moe_model *model, size_t k, const double *x,
                                 double y)
{
    size_t p = model->n_inputs, rows = model->expert_rows;
    const double *beta = model->experts + k * rows * p;
    double z[CLASSES];
    for (size_t c = 0; c < rows; ++c) {
        z[c] = 0.0;
        for (size_t a = 0; a < p; ++a)
            z[c] += beta[c * p + a] * x[a];
    }
    switch (model->family) {
    case MOE_FAMILY_GAUSSIAN: {
        double mean = model->link == MOE_LINK_SIGMOID ? 1.0 / (1.0 + exp(-z[0])) : z[0];
        double e = y - mean, variance = model->variances[k];
        return -0.5 * log(6.283185307179586 * variance) - 0.5 * e * e / variance;
    }
    case MOE_FAMILY_LOGISTIC: {
        double t = y == 1.0 ? z[0] : -z[0];
        return -log1p(exp(-t));
    }
    case MOE_FAMILY_MULTINOMIAL: return z[(size_t)y] - log_sum_exp(z, rows);
    case MOE_FAMILY_POISSON: return y * z[0] - exp(z[0]) - lgamma(y + 1.0);
    case MOE_FAMILY_STUDENT_T: {
        double e = y - z[0], scale = model->variances[k], nu = model->degrees[k];
        return lgamma(0.5 * (nu + 1.0)) - lgamma(0.5 * nu) -
               0.5 * log(3.141592653589793 * nu * scale) -
               0.5 * (nu + 1.0) * log(1.0 + e * e / (nu * scale));
    }
    case MOE_FAMILY_BINOMIAL: {
        double trials = model->trials_input < p ? x[model->trials_input] : 1.0;
        return lgamma(trials + 1.0) - lgamma(y + 1.0) - lgamma(trials - y + 1.0) + y * z[0] -
               trials * log1p(exp(z[0]));
    }
    case MOE_FAMILY_GAMMA: {
        double alpha = model->degrees[k];
        return alpha * log(alpha / exp(z[0])) + (alpha - 1.0) * log(y) -
               alpha * y / exp(z[0]) - lgamma(alpha);
    }
    }
    return NAN;
}

static void reference_pass(const struct moe_model *model, const moe_data *data,
                           const double *previous, reference *out)
{
    size_t K = model->n_experts, p = model->n_inputs, J = K - 1;
    memset(out, 0, offsetof(reference, resp));
    for (size_t i = 0; i < data->n; ++i) {
        double x[D + 1], g[8], u[8], pi[8], r[8], log_pi[8];
        size_t a0 = (size_t)data->intercept;
        x[0] = 1.0;
        for (size_t a = 0; a < D; ++a)
            x[a0 + a] = data->X[i * data->ldx + a];
        double w = moe_data_weight(data, i);
        for (size_t k = 0; k < K; ++k) {
            g[k] = 0.0;
            for (size_t a = 0; a < p; ++a)
                g[k] += model->gate[k * p + a] * x[a];
        }
        double gate_lse = log_sum_exp(g, K);
        for (size_t k = 0; k < K; ++k) {
            log_pi[k] = g[k] - gate_lse;
            pi[k] = exp(log_pi[k]);
            u[k] = log_pi[k] + expert_log_density(model, k, x, data->y[i]);
        }
        double lse = log_sum_exp(u, K);
        out->loglik += w * lse;
        out->weight += w;
        for (size_t k = 0; k < K; ++k) {
            r[k] = exp(u[k] - lse);
            out->resp[i * K + k] = r[k];
            if (r[k] > 0.0) {
                out->entropy -= w * r[k] * (u[k] - lse);
                out->gate_data -= w * r[k] * log_pi[k];
            }
            if (previous[i * K + k] > 0.0)
                out->previous_data -= w * previous[i * K + k] * log_pi[k];
        }
        for (size_t c = 0; c < J; ++c)
            for (size_t a = 0; a < p; ++a) {
                out->gradient[c * p + a] += w * (pi[c] - r[c]) * x[a];
                out->previous_gradient[c * p + a] += w * (pi[c] - previous[i * K + c]) * x[a];
            }
        for (size_t a = 0, at = 0; a < J; ++a)
            for (size_t b = a; b < J; ++b, ++at) {
                double weight = w * pi[a] * (a == b ? 1.0 - pi[a] : pi[b]);
                for (size_t s = 0; s < p; ++s)
                    for (size_t t = s; t < p; ++t)
                        out->parts[at * p * p + s * p + t] += weight * x[s] * x[t];
            }
        if (model->family != MOE_FAMILY_GAUSSIAN)
            continue;
        for (size_t k = 0; k < K; ++k) {
            double mean = 0.0, wr = w * r[k];
            for (size_t a = 0; a < p; ++a)
                mean += model->experts[k * p + a] * x[a];
            double e = data->y[i] - mean;
            out->totals[k] += wr;
            out->squares[k] += wr * e * e;
            for (size_t s = 0; s < p; ++s) {
                out->rhs[k * p + s] += wr * e * x[s];
                for (size_t t = s; t < p; ++t)
                    out->grams[k * p * p + s * p + t] += wr * x[s] * x[t];
            }
        }
    }
}

static void assert_close(double value, double expected, double scale, const char *what,
                         size_t index, size_t K)
{
    ck_assert_msg(fabs(value - expected) <= 1e-10 * (scale + fabs(expected)),
                  "K = %zu, %s[%zu]: %.15g, expected %.15g", K, what, index, value, expected);
}

static struct moe_model *random_linked_model(moe_family family, moe_link link, size_t K,
                                             int intercept, test_rng *rng)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.link = link;
    spec.n_experts = K;
    spec.n_features = D;
    spec.intercept = intercept;
    spec.n_classes = family == MOE_FAMILY_MULTINOMIAL ? CLASSES : 0;
    struct moe_model *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    size_t p = model->n_inputs, rows = model->expert_rows;
    double gate[8 * (D + 1)] = {0}, experts[8 * CLASSES * (D + 1)] = {0}, variances[8];
    for (size_t a = 0; a < (K - 1) * p; ++a)
        gate[a] = 1.5 * test_normal(rng);
    for (size_t a = 0; a < K * rows * p; ++a)
        experts[a] = test_normal(rng);
    if (family == MOE_FAMILY_MULTINOMIAL)
        for (size_t k = 0; k < K; ++k)
            memset(experts + (k * rows + rows - 1) * p, 0, p * sizeof(double));
    for (size_t k = 0; k < K; ++k)
        variances[k] = 0.3 + test_uniform(rng);
    ck_assert_int_eq(moe_model_set_gate(model, gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, experts, K * rows * p), MOE_OK);
    if (family == MOE_FAMILY_GAUSSIAN || family == MOE_FAMILY_STUDENT_T)
        ck_assert_int_eq(moe_model_set_variances(model, variances, K), MOE_OK);
    if (family == MOE_FAMILY_STUDENT_T) {
        double degrees[8];
        for (size_t k = 0; k < K; ++k)
            degrees[k] = 0.5 + 20.0 * test_uniform(rng);
        ck_assert_int_eq(moe_model_set_degrees(model, degrees, K), MOE_OK);
    }
    return model;
}

static struct moe_model *random_model(moe_family family, size_t K, int intercept,
                                      test_rng *rng)
{
    return random_linked_model(family, MOE_LINK_IDENTITY, K, intercept, rng);
}

static void check_linked_pass(moe_family family, moe_link link, size_t K, int intercept,
                              int weighted)
{
    test_rng rng = {1000 + 17 * K + 5 * (size_t)family + 2 * (size_t)intercept + weighted +
                    101 * (size_t)link};
    struct moe_model *model = random_linked_model(family, link, K, intercept, &rng);
    size_t p = model->n_inputs, J = K - 1;
    double *X = malloc(N * D * sizeof(double)), *y = malloc(N * sizeof(double));
    double *w = malloc(N * sizeof(double)), *previous = malloc(N * K * sizeof(double));
    double *resp = malloc(N * K * sizeof(double));
    for (size_t i = 0; i < N; ++i) {
        for (size_t a = 0; a < D; ++a)
            X[i * D + a] = test_normal(&rng);
        double v = test_uniform(&rng);
        y[i] = family == MOE_FAMILY_GAUSSIAN || family == MOE_FAMILY_STUDENT_T
                   ? 3.0 * test_normal(&rng)
               : family == MOE_FAMILY_LOGISTIC ? (v < 0.5 ? 1.0 : 0.0)
               : family == MOE_FAMILY_POISSON  ? (double)(size_t)(8.0 * v * v)
                                               : (double)(size_t)(v * CLASSES);
        w[i] = i % 11 == 3 ? 0.0 : 0.2 + 2.0 * test_uniform(&rng);
        double sum = 0.0;
        for (size_t k = 0; k < K; ++k)
            sum += previous[i * K + k] = (i + k) % 5 == 0 ? 0.0 : test_uniform(&rng);
        for (size_t k = 0; k < K; ++k)
            previous[i * K + k] = sum > 0.0 ? previous[i * K + k] / sum : 1.0 / (double)K;
    }
    moe_data data = {N, D, D, intercept, X, y, weighted ? w : NULL};
    reference ref;
    ref.resp = calloc(N * K, sizeof(double));
    ref.gradient = calloc(J * p + 1, sizeof(double));
    ref.previous_gradient = calloc(J * p + 1, sizeof(double));
    ref.parts = calloc(J * J * p * p + 1, sizeof(double));
    ref.grams = calloc(K * p * p, sizeof(double));
    ref.rhs = calloc(K * p, sizeof(double));
    ref.totals = calloc(K, sizeof(double));
    ref.squares = calloc(K, sizeof(double));
    reference_pass(model, &data, previous, &ref);

    memcpy(resp, previous, N * K * sizeof(double));
    moe_pass_request request = {1, 1, 1, 1};
    moe_pass_sums sums;
    ck_assert_int_eq(moe_pass_sums_allocate(model, &request, &sums, NULL), MOE_OK);
    ck_assert_int_eq(moe_pass_run(model, &data, resp, &request, &sums, NULL), MOE_OK);

    double scale = ref.weight;
    assert_close(sums.posterior.loglik, ref.loglik, scale, "loglik", 0, K);
    assert_close(sums.posterior.entropy, ref.entropy, scale, "entropy", 0, K);
    assert_close(sums.weight, ref.weight, scale, "weight", 0, K);
    for (size_t a = 0; a < N * K; ++a)
        assert_close(resp[a], ref.resp[a], 1.0, "resp", a, K);
    if (K > 1) {
        assert_close(sums.gate_data, ref.gate_data, scale, "gate data", 0, K);
        assert_close(sums.previous_gate_data, ref.previous_data, scale, "previous data", 0, K);
        for (size_t a = 0; a < J * p; ++a) {
            assert_close(sums.gate_gradient[a], ref.gradient[a], scale, "gradient", a, K);
            assert_close(sums.previous_gate_gradient[a], ref.previous_gradient[a], scale,
                         "previous gradient", a, K);
        }
        for (size_t part = 0; part < J * (J + 1) / 2; ++part)
            for (size_t s = 0; s < p; ++s)
                for (size_t t = s; t < p; ++t) {
                    size_t at = part * p * p + s * p + t;
                    assert_close(sums.gate_hessian_parts[at], ref.parts[at], scale, "parts", at,
                                 K);
                }
    }
    ck_assert_int_eq(sums.experts != NULL, moe_family_has_statistics(model));
    if (family == MOE_FAMILY_GAUSSIAN && sums.experts != NULL) {
        const double *grams = sums.experts, *rhs = grams + K * p * p, *totals = rhs + K * p;
        const double *squares = totals + K;
        for (size_t k = 0; k < K; ++k) {
            assert_close(totals[k], ref.totals[k], scale, "totals", k, K);
            assert_close(squares[k], ref.squares[k], scale, "squares", k, K);
            for (size_t s = 0; s < p; ++s) {
                assert_close(rhs[k * p + s], ref.rhs[k * p + s], scale, "rhs", k * p + s, K);
                for (size_t t = s; t < p; ++t)
                    assert_close(grams[k * p * p + s * p + t], ref.grams[k * p * p + s * p + t],
                                 scale, "grams", k * p * p + s * p + t, K);
            }
        }
    }
    moe_pass_sums_free(&sums);
    free(ref.resp);
    free(ref.gradient);
    free(ref.previous_gradient);
    free(ref.parts);
    free(ref.grams);
    free(ref.rhs);
    free(ref.totals);
    free(ref.squares);
    free(X);
    free(y);
    free(w);
    free(previous);
    free(resp);
    moe_model_free(model);
}

static void check_pass(moe_family family, size_t K, int intercept, int weighted)
{
    check_linked_pass(family, MOE_LINK_IDENTITY, K, intercept, weighted);
}

START_TEST(gaussian_pass_matches_rows)
{
    for (size_t K = 1; K <= 6; ++K)
        for (int intercept = 0; intercept <= 1; ++intercept)
            check_pass(MOE_FAMILY_GAUSSIAN, K, intercept, (int)(K + (size_t)intercept) % 2);
}
END_TEST

/* A Gaussian link other than the identity: the densities come from the family, not from
   the per-row loop's own normal density, and there are no one-pass statistics. */
START_TEST(linked_gaussian_pass_matches_rows)
{
    for (size_t K = 1; K <= 5; K += 2)
        check_linked_pass(MOE_FAMILY_GAUSSIAN, MOE_LINK_SIGMOID, K, 1, (int)K % 4 == 1);
}
END_TEST

START_TEST(classification_passes_match_rows)
{
    for (size_t K = 1; K <= 6; ++K) {
        check_pass(MOE_FAMILY_LOGISTIC, K, 1, (int)K % 2);
        check_pass(MOE_FAMILY_MULTINOMIAL, K, (int)K % 2, 1);
        check_pass(MOE_FAMILY_POISSON, K, 1, (int)K % 2);
        check_pass(MOE_FAMILY_STUDENT_T, K, (int)K % 2, 1);
    }
}
END_TEST

/* A row no expert can have produced is reported by its index, whatever its block. */
START_TEST(impossible_row_is_reported)
{
    const size_t rows[] = {0, 457, 4100, N - 1};
    for (size_t K = 2; K <= 5; K += 3)
        for (size_t t = 0; t < sizeof rows / sizeof rows[0]; ++t) {
            test_rng rng = {77 + t};
            struct moe_model *model = random_model(MOE_FAMILY_GAUSSIAN, K, 1, &rng);
            double *X = malloc(N * D * sizeof(double)), *y = malloc(N * sizeof(double));
            for (size_t i = 0; i < N * D; ++i)
                X[i] = test_normal(&rng);
            for (size_t i = 0; i < N; ++i)
                y[i] = test_normal(&rng);
            y[rows[t]] = 1e300; /* every density underflows: log f = -inf */
            moe_data data = {N, D, D, 1, X, y, NULL};
            moe_posterior_result result;
            char message[512] = "";
            ck_assert_int_eq(moe_posterior_pass(model, &data, NULL, 1, &result, message),
                             MOE_ERR_NUMERICAL);
            char expected[64];
            snprintf(expected, sizeof expected, "row %zu: ", rows[t]);
            ck_assert_msg(strncmp(message, expected, strlen(expected)) == 0, "K = %zu: \"%s\" lacks \"%s\"", K,
                          message, expected);
            free(X);
            free(y);
            moe_model_free(model);
        }
}
END_TEST

static Suite *pass_suite(void)
{
    Suite *suite = suite_create("estep_pass");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, gaussian_pass_matches_rows);
    tcase_add_test(core, linked_gaussian_pass_matches_rows);
    tcase_add_test(core, classification_passes_match_rows);
    tcase_add_test(core, impossible_row_is_reported);
    suite_add_tcase(suite, core);
    return suite;
}

int main(void)
{
    return run_suite(pass_suite());
}
