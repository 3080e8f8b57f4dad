/*
 * moe_fitter_summarize: the criteria (bit for bit), the mean gate and the covariance equal
 * what moe_model_criteria, moe_model_gate_proba and moe_model_vcov_penalized (with the
 * fitter's penalties) give separately, on every family's shapes that matter (Gaussian with
 * weights, t's extra parameter, multinomial's class rows); the same bits on 1, 2 and 3
 * threads; a covariance that does not exist leaves the rest; the errors.
 */
#include "support/runner.h"
#include "support/synthetic.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 5000, D = 2 };

static double X[N * D], Y[N], W[N];

/* Two regimes gated by x1; y by family. */
static void data(moe_family family, uint64_t seed)
{
    test_rng rng = {seed};
    for (int i = 0; i < N; ++i) {
        X[i * D] = test_normal(&rng);
        X[i * D + 1] = test_normal(&rng);
        W[i] = 0.5 + test_uniform(&rng);
        int upper = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.0 * X[i * D]));
        double signal = (upper ? 1.0 : -1.0) + X[i * D + 1] * (upper ? 0.5 : -1.0);
        if (family == MOE_FAMILY_MULTINOMIAL)
            Y[i] = test_uniform(&rng) < 0.6 ? (signal > 0.0 ? 2.0 : 0.0)
                                             : (double)(size_t)(test_uniform(&rng) * 3.0);
        else
            Y[i] = signal + 0.3 * test_normal(&rng) * (test_uniform(&rng) < 0.05 ? 10.0 : 1.0);
    }
}

static moe_model_t *fitted(moe_family family, moe_fitter_t *fitter, const double *weights)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = 2;
    spec.n_features = D;
    spec.n_classes = family == MOE_FAMILY_MULTINOMIAL ? 3 : 0;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, N, X, D, Y, weights), MOE_OK);
    return model;
}

static void expect_close(double value, double expected, double tolerance, const char *what)
{
    ck_assert_msg(fabs(value - expected) <= tolerance * (fabs(expected) + 1e-300),
                  "%s: %.17g, expected %.17g", what, value, expected);
}

/* The summary against the separate calls, for one family, with and without weights. */
static void check_family(moe_family family, uint64_t seed)
{
    data(family, seed);
    for (int weighted = 0; weighted < 2; ++weighted) {
        const double *weights = weighted ? W : NULL;
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_GATE_L2, 0.01), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_EXPERT_RIDGE, 0.01), MOE_OK);
        moe_model_t *model = fitted(family, fitter, weights);
        size_t K = moe_model_n_experts(model), P = moe_model_n_free_params(model);
        moe_criteria criteria = MOE_CRITERIA_INIT, separate = MOE_CRITERIA_INIT;
        double mean_gate[2], *covariance = malloc(P * P * sizeof(double));
        double *expected = malloc(P * P * sizeof(double));
        double *proba = malloc(N * K * sizeof(double));
        moe_status covariance_status = MOE_ERR_INTERNAL;
        ck_assert_int_eq(moe_fitter_summarize(fitter, model, N, X, D, Y, weights, &criteria,
                                              mean_gate, 2, covariance, P * P,
                                              &covariance_status),
                         MOE_OK);
        ck_assert_int_eq(moe_model_criteria(model, N, X, D, Y, weights, &separate), MOE_OK);
        /* the same bits: a user compares them with moe_model_loglik's */
        ck_assert(memcmp(&criteria, &separate, sizeof criteria) == 0);
        ck_assert_int_eq(moe_model_gate_proba(model, N, X, D, proba, N * K), MOE_OK);
        for (size_t k = 0; k < K; ++k) {
            double sum = 0.0, total = 0.0;
            for (size_t i = 0; i < N; ++i) {
                double w = weights != NULL ? weights[i] : 1.0;
                sum += w * proba[i * K + k];
                total += w;
            }
            expect_close(mean_gate[k], sum / total, 1e-12, "mean gate");
        }
        /* Whether the covariance exists depends on where em stopped, which the BLAS kernels'
           rounding can move (a multinomial expert near separation): the summary must say
           what the separate call says, and give its numbers when there are some. */
        moe_status separate_status = moe_model_vcov_penalized(model, N, X, D, Y, weights, 0.01,
                                                              0.01, expected, P * P);
        ck_assert_msg(covariance_status == separate_status, "family %d, weighted %d: %d, "
                      "separately %d (%s)", (int)family, weighted, (int)covariance_status,
                      (int)separate_status, moe_fitter_last_error(fitter));
        if (family == MOE_FAMILY_GAUSSIAN)
            ck_assert_int_eq(covariance_status, MOE_OK); /* so that the values are compared */
        for (size_t a = 0; a < P && separate_status == MOE_OK; ++a)
            for (size_t b = 0; b < P; ++b)
                ck_assert_msg(fabs(covariance[a * P + b] - expected[a * P + b]) <=
                                  1e-12 * sqrt(expected[a * P + a] * expected[b * P + b]),
                              "covariance (%zu, %zu): %g, expected %g", a, b,
                              covariance[a * P + b], expected[a * P + b]);
        free(proba);
        free(expected);
        free(covariance);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
}

START_TEST(summary_equals_the_separate_calls)
{
    check_family(MOE_FAMILY_GAUSSIAN, 3);
    check_family(MOE_FAMILY_STUDENT_T, 5);
    check_family(MOE_FAMILY_MULTINOMIAL, 7);
}
END_TEST

/* The pass's reduction does not depend on the thread count. */
START_TEST(summary_is_bit_identical_across_threads)
{
    data(MOE_FAMILY_GAUSSIAN, 11);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    moe_model_t *model = fitted(MOE_FAMILY_GAUSSIAN, fitter, W);
    size_t P = moe_model_n_free_params(model);
    double reference[64 * 64], covariance[64 * 64], mean_reference[2], mean_gate[2];
    ck_assert_uint_le(P, 64);
    moe_criteria first = MOE_CRITERIA_INIT;
    for (long long threads = 1; threads <= 3; ++threads) {
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_THREADS, threads), MOE_OK);
        moe_criteria criteria = MOE_CRITERIA_INIT;
        moe_status covariance_status = MOE_ERR_INTERNAL;
        ck_assert_int_eq(moe_fitter_summarize(fitter, model, N, X, D, Y, W, &criteria,
                                              threads == 1 ? mean_reference : mean_gate, 2,
                                              threads == 1 ? reference : covariance, P * P,
                                              &covariance_status),
                         MOE_OK);
        ck_assert_int_eq(covariance_status, MOE_OK);
        if (threads == 1) {
            first = criteria;
            continue;
        }
        ck_assert(memcmp(&criteria, &first, sizeof criteria) == 0);
        ck_assert(memcmp(mean_gate, mean_reference, sizeof mean_gate) == 0);
        ck_assert(memcmp(covariance, reference, P * P * sizeof(double)) == 0);
    }
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

/* No covariance (a neutral model's singular information; a link without the information):
   the criteria and the mean gate all the same, the reason in the fitter's message. */
START_TEST(a_missing_covariance_leaves_the_rest)
{
    data(MOE_FAMILY_GAUSSIAN, 13);
    for (int link = 0; link < 2; ++link) {
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.n_features = D;
        spec.link = link ? MOE_LINK_SIGMOID : MOE_LINK_IDENTITY;
        moe_model_t *model = NULL;
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        size_t P = moe_model_n_free_params(model);
        double covariance[64 * 64], mean_gate[2] = {-1.0, -1.0};
        moe_criteria criteria = MOE_CRITERIA_INIT, separate = MOE_CRITERIA_INIT;
        moe_status covariance_status = MOE_OK;
        ck_assert_int_eq(moe_fitter_summarize(fitter, model, N, X, D, Y, NULL, &criteria,
                                              mean_gate, 2, covariance, P * P,
                                              &covariance_status),
                         MOE_OK);
        ck_assert_int_eq(covariance_status, link ? MOE_ERR_UNSUPPORTED : MOE_ERR_NUMERICAL);
        ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter),
                                     link ? "identity link" : "positive definite"));
        ck_assert_int_eq(moe_model_criteria(model, N, X, D, Y, NULL, &separate), MOE_OK);
        expect_close(criteria.loglik, separate.loglik, 1e-12, "loglik");
        expect_close(mean_gate[0], 0.5, 1e-15, "neutral gate");
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
}
END_TEST

START_TEST(errors)
{
    data(MOE_FAMILY_GAUSSIAN, 17);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_features = D;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    size_t P = moe_model_n_free_params(model);
    double covariance[64 * 64], mean_gate[2];
    moe_criteria criteria = MOE_CRITERIA_INIT;
    moe_status covariance_status;
    EXPECT_STATUS(moe_fitter_summarize(NULL, model, N, X, D, Y, NULL, &criteria, NULL, 0, NULL,
                                       0, NULL),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_summarize(fitter, NULL, N, X, D, Y, NULL, &criteria, NULL, 0, NULL,
                                       0, NULL),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_summarize(fitter, model, N, X, D, Y, NULL, NULL, NULL, 0,
                                       covariance, P * P, NULL),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_fitter_summarize(fitter, model, N, X, D, Y, NULL, NULL, mean_gate, 1,
                                       NULL, 0, NULL),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_fitter_summarize(fitter, model, N, X, D, Y, NULL, NULL, NULL, 0,
                                       covariance, P * P - 1, &covariance_status),
                  MOE_ERR_DIMENSION);
    moe_criteria future = MOE_CRITERIA_INIT;
    future.version = MOE_CRITERIA_VERSION + 1;
    EXPECT_STATUS(moe_fitter_summarize(fitter, model, N, X, D, Y, NULL, &future, NULL, 0, NULL,
                                       0, NULL),
                  MOE_ERR_UNSUPPORTED);
    double saved = X[7];
    X[7] = NAN;
    EXPECT_STATUS(moe_fitter_summarize(fitter, model, N, X, D, Y, NULL, &criteria, NULL, 0,
                                       NULL, 0, NULL),
                  MOE_ERR_NON_FINITE);
    X[7] = saved;
    EXPECT_STATUS(moe_fitter_summarize(fitter, model, 0, X, D, Y, NULL, &criteria, NULL, 0,
                                       NULL, 0, NULL),
                  MOE_ERR_EMPTY_INPUT);
    W[3] = -1.0;
    EXPECT_STATUS(moe_fitter_summarize(fitter, model, N, X, D, Y, W, &criteria, NULL, 0, NULL,
                                       0, NULL),
                  MOE_ERR_NEGATIVE_WEIGHT);
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("summary");
    TCase *cases = tcase_create("summary");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, summary_equals_the_separate_calls);
    tcase_add_test(cases, summary_is_bit_identical_across_threads);
    tcase_add_test(cases, a_missing_covariance_leaves_the_rest);
    tcase_add_test(cases, errors);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
