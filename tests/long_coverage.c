/*
 * Coverage of 95% Wald intervals from moe_model_vcov: a two-expert Gaussian model with
 * known parameters, 200 data sets of 2000 rows, em to convergence on each, and for every free
 * parameter the share of intervals estimate +- 1.96 SE that contain the truth. Each share
 * must be within three binomial standard errors of 0.95 (0.904 to 0.996 for 200 trials):
 * standard errors that are too small or too large by about 15% fail it.
 */
#include "support/runner.h"
#include "support/synthetic.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 2000, TRIALS = 200, K = 2, P_INPUTS = 2, FREE = (K - 1) * P_INPUTS + K * P_INPUTS + K };

/* Parameters in the information's order: gate free row, expert rows, variances. */
static void flatten(const moe_model_t *model, double *theta)
{
    double gate[K * P_INPUTS], experts[K * P_INPUTS], variances[K];
    EXPECT_STATUS(moe_model_get_gate(model, gate, K * P_INPUTS), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, K * P_INPUTS), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, variances, K), MOE_OK);
    size_t at = 0;
    for (int j = 0; j < (K - 1) * P_INPUTS; ++j)
        theta[at++] = gate[j];
    for (int j = 0; j < K * P_INPUTS; ++j)
        theta[at++] = experts[j];
    for (int k = 0; k < K; ++k)
        theta[at++] = variances[k];
}

START_TEST(wald_intervals_cover_95_percent)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = 1;
    moe_model_t *truth = NULL;
    EXPECT_STATUS(moe_model_create(&truth, &spec), MOE_OK);
    const double gate[K * P_INPUTS] = {0.3, 2.0, 0.0, 0.0};
    const double experts[K * P_INPUTS] = {1.0, 2.0, -1.0, -1.0};
    const double variances[K] = {0.25, 0.5};
    EXPECT_STATUS(moe_model_set_gate(truth, gate, K * P_INPUTS), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(truth, experts, K * P_INPUTS), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(truth, variances, K), MOE_OK);
    /* Fits come back in canonical order; put the truth in the same one. */
    EXPECT_STATUS(moe_model_canonicalize(truth), MOE_OK);
    double true_theta[FREE], true_gate[K * P_INPUTS], true_experts[K * P_INPUTS], true_var[K];
    flatten(truth, true_theta);
    EXPECT_STATUS(moe_model_get_gate(truth, true_gate, K * P_INPUTS), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(truth, true_experts, K * P_INPUTS), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(truth, true_var, K), MOE_OK);

    double *X = malloc(N * sizeof *X), *y = malloc(N * sizeof *y);
    double *covariance = malloc(FREE * FREE * sizeof *covariance);
    ck_assert_ptr_nonnull(X);
    ck_assert_ptr_nonnull(y);
    ck_assert_ptr_nonnull(covariance);
    int covered[FREE] = {0};
    test_rng rng = {20261125};
    for (int trial = 0; trial < TRIALS; ++trial) {
        for (int i = 0; i < N; ++i) {
            X[i] = test_normal(&rng);
            double logit = (true_gate[0] - true_gate[2]) + (true_gate[1] - true_gate[3]) * X[i];
            int k = test_uniform(&rng) < 1.0 / (1.0 + exp(-logit)) ? 0 : 1;
            y[i] = true_experts[k * P_INPUTS] + true_experts[k * P_INPUTS + 1] * X[i] +
                   sqrt(true_var[k]) * test_normal(&rng);
        }
        moe_model_t *model = NULL;
        moe_fitter_t *fitter = NULL;
        EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
        EXPECT_STATUS(moe_fitter_create(&fitter, "em"), MOE_OK);
        char seed[32];
        snprintf(seed, sizeof seed, "%d", trial + 1);
        EXPECT_STATUS(moe_fitter_set_option(fitter, "seed", seed), MOE_OK);
        /* Wald intervals are about the maximum: converge well past the default tolerance. */
        EXPECT_STATUS(moe_fitter_set_option(fitter, "tol", "1e-12"), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_option(fitter, "max_iter", "5000"), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, y, NULL), MOE_OK);
        EXPECT_STATUS(moe_model_vcov(model, N, X, 1, y, NULL, covariance, FREE * FREE), MOE_OK);
        double theta[FREE];
        flatten(model, theta);
        for (int j = 0; j < FREE; ++j) {
            double error = sqrt(covariance[j * FREE + j]);
            if (fabs(theta[j] - true_theta[j]) <= 1.959964 * error)
                covered[j]++;
        }
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    double sd = sqrt(0.95 * 0.05 / TRIALS);
    for (int j = 0; j < FREE; ++j) {
        double share = (double)covered[j] / TRIALS;
        printf("parameter %d: true %.4f, coverage %.3f\n", j, true_theta[j], share);
        ck_assert_msg(fabs(share - 0.95) <= 3.0 * sd,
                      "parameter %d: coverage %.3f outside 0.95 +- %.3f", j, share, 3.0 * sd);
    }
    free(X);
    free(y);
    free(covariance);
    moe_model_free(truth);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("coverage_long");
    TCase *cases = tcase_create("wald");
    tcase_set_timeout(cases, 1800);
    tcase_add_test(cases, wald_intervals_cover_95_percent);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
