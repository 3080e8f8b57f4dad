/*
 * The observed information (moe_model_information) and the covariance (moe_model_vcov):
 * against central second differences of the log-likelihood at random parameters for the
 * three families, with and without intercept and weights; the least-squares closed forms for
 * one Gaussian expert; the gradient of the log-likelihood vanishing at a fit; and the errors.
 */
#include "support/runner.h"
#include "support/synthetic.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 400, D = 2 };

static double X[N * D], Y[N], W[N];

static void data(moe_family family, size_t classes, uint64_t seed)
{
    test_rng rng = {seed};
    for (int i = 0; i < N; ++i) {
        X[i * D] = test_normal(&rng);
        X[i * D + 1] = test_normal(&rng);
        W[i] = 0.5 + test_uniform(&rng);
        double signal = X[i * D] - 0.5 * X[i * D + 1] + 0.3 * test_normal(&rng);
        if (family == MOE_FAMILY_GAUSSIAN)
            Y[i] = signal + (test_uniform(&rng) < 0.5 ? 1.0 : -1.0);
        else if (family == MOE_FAMILY_LOGISTIC)
            Y[i] = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.0 * signal));
        else
            Y[i] = (double)(size_t)(test_uniform(&rng) * (double)classes);
    }
}

/* Random parameters through a flat vector in the information's order. */
static size_t parameter_count(const moe_model_t *model)
{
    return moe_model_n_free_params(model);
}

static void set_parameters(moe_model_t *model, const double *theta)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    size_t rows = moe_model_expert_rows(model);
    int multinomial = moe_model_family(model) == MOE_FAMILY_MULTINOMIAL;
    size_t R = multinomial ? rows - 1 : 1;
    double gate[16 * 8] = {0}, experts[16 * 8 * 4] = {0};
    memcpy(gate, theta, (K - 1) * p * sizeof(double));
    const double *e = theta + (K - 1) * p;
    for (size_t k = 0; k < K; ++k)
        for (size_t q = 0; q < R; ++q)
            memcpy(experts + (k * rows + q) * p, e + (k * R + q) * p, p * sizeof(double));
    ck_assert_int_eq(moe_model_set_gate(model, gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, experts, K * rows * p), MOE_OK);
    if (moe_model_family(model) == MOE_FAMILY_GAUSSIAN)
        ck_assert_int_eq(moe_model_set_variances(model, e + K * R * p, K), MOE_OK);
}

static double loglik_at(moe_model_t *model, const double *theta, int weighted)
{
    set_parameters(model, theta);
    double value = 0.0;
    ck_assert_int_eq(moe_model_loglik(model, N, X, D, Y, weighted ? W : NULL, &value), MOE_OK);
    return value;
}

/* -Hessian by central second differences, each entry. */
static void check_against_differences(moe_model_t *model, const double *theta, int weighted,
                                      const char *what)
{
    size_t P = parameter_count(model);
    double *information = malloc(P * P * sizeof(double));
    set_parameters(model, theta);
    ck_assert_int_eq(moe_model_information(model, N, X, D, Y, weighted ? W : NULL, information,
                                           P * P),
                     MOE_OK);
    double *t = malloc(P * sizeof(double));
    double largest = 0.0, worst = 0.0;
    for (size_t a = 0; a < P; ++a)
        for (size_t b = a; b < P; ++b) {
            double ha = 1e-4 * (1.0 + fabs(theta[a])), hb = 1e-4 * (1.0 + fabs(theta[b]));
            double f[4];
            for (int s = 0; s < 4; ++s) {
                memcpy(t, theta, P * sizeof(double));
                t[a] += (s & 1 ? -ha : ha);
                t[b] += (s & 2 ? -hb : hb);
                f[s] = loglik_at(model, t, weighted);
            }
            double second = (f[0] - f[1] - f[2] + f[3]) / (4.0 * ha * hb);
            double analytic = information[a * P + b];
            ck_assert_double_eq_tol(information[a * P + b], information[b * P + a], 1e-9);
            if (fabs(second) > largest)
                largest = fabs(second);
            double error = fabs(analytic + second);
            if (error > worst)
                worst = error;
        }
    ck_assert_msg(worst <= 1e-4 * largest + 1e-6, "%s: information differs from -Hessian by %g "
                  "(largest entry %g)",
                  what, worst, largest);
    free(t);
    free(information);
}

START_TEST(information_is_the_negative_hessian)
{
    test_rng rng = {7};
    for (int family = 0; family < 3; ++family)
        for (int intercept = 0; intercept < 2; ++intercept)
            for (int weighted = 0; weighted < 2; ++weighted) {
                moe_model_spec spec = MOE_MODEL_SPEC_INIT;
                spec.family = family == 0   ? MOE_FAMILY_GAUSSIAN
                              : family == 1 ? MOE_FAMILY_LOGISTIC
                                            : MOE_FAMILY_MULTINOMIAL;
                spec.n_classes = family == 2 ? 3 : 0;
                spec.n_experts = 3;
                spec.n_features = D;
                spec.intercept = intercept;
                data(spec.family, 3, 11 + (uint64_t)family);
                moe_model_t *model = NULL;
                ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
                size_t P = parameter_count(model);
                double theta[128];
                for (size_t i = 0; i < P; ++i)
                    theta[i] = 0.5 * test_normal(&rng);
                if (family == 0)
                    for (size_t k = 0; k < 3; ++k)
                        theta[P - 3 + k] = 0.5 + test_uniform(&rng);
                char what[64];
                snprintf(what, sizeof what, "family %d intercept %d weights %d", family,
                         intercept, weighted);
                check_against_differences(model, theta, weighted, what);
                moe_model_free(model);
            }
}
END_TEST

/* One Gaussian expert: least squares. At the MLE, SE(beta) = sqrt(sigma^2 diag((X'X)^-1))
   and SE(sigma^2) = sigma^2 sqrt(2 / n). */
START_TEST(one_expert_is_least_squares)
{
    data(MOE_FAMILY_GAUSSIAN, 0, 3);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 1;
    spec.n_features = D;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
    double covariance[16];
    ck_assert_int_eq(moe_model_vcov(model, N, X, D, Y, NULL, covariance, 16), MOE_OK);
    double variance = 0.0;
    moe_model_get_variances(model, &variance, 1);
    /* (X~'X~)^-1 by hand: 3 x 3 */
    double G[9] = {0};
    for (int i = 0; i < N; ++i) {
        double x[3] = {1.0, X[i * D], X[i * D + 1]};
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                G[a * 3 + b] += x[a] * x[b];
    }
    double det = G[0] * (G[4] * G[8] - G[5] * G[7]) - G[1] * (G[3] * G[8] - G[5] * G[6]) +
                 G[2] * (G[3] * G[7] - G[4] * G[6]);
    double inverse_diagonal[3] = {(G[4] * G[8] - G[5] * G[7]) / det,
                                  (G[0] * G[8] - G[2] * G[6]) / det,
                                  (G[0] * G[4] - G[1] * G[3]) / det};
    for (int a = 0; a < 3; ++a)
        ck_assert_double_eq_tol(covariance[a * 4 + a], variance * inverse_diagonal[a],
                                1e-6 * variance * inverse_diagonal[a]);
    ck_assert_double_eq_tol(covariance[15], 2.0 * variance * variance / N,
                            1e-6 * 2.0 * variance * variance / N);
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

/* Errors: NULL, short buffers, NaN, unsupported links, and a degenerate information. */
START_TEST(errors)
{
    data(MOE_FAMILY_GAUSSIAN, 0, 5);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = D;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    size_t P = moe_model_n_free_params(model);
    double *out = malloc(P * P * sizeof(double));
    EXPECT_STATUS(moe_model_information(NULL, N, X, D, Y, NULL, out, P * P), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, NULL, P * P),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, out, P * P - 1),
                  MOE_ERR_DIMENSION);
    double bad = Y[3];
    Y[3] = NAN;
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, out, P * P), MOE_ERR_NON_FINITE);
    Y[3] = bad;
    /* The neutral model's two experts are equal: the information is singular. */
    EXPECT_STATUS(moe_model_vcov(model, N, X, D, Y, NULL, out, P * P), MOE_ERR_NUMERICAL);
    moe_model_free(model);
    spec.link = MOE_LINK_SIGMOID;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, out, P * P),
                  MOE_ERR_UNSUPPORTED);
    moe_model_free(model);
    free(out);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("information");
    TCase *cases = tcase_create("information");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, information_is_the_negative_hessian);
    tcase_add_test(cases, one_expert_is_least_squares);
    tcase_add_test(cases, errors);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
