/* The model handle: structure, parameters, prediction, posterior, likelihood, criteria. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "support/runner.h"

/* A fixed 3-expert, 2-feature model with an intercept, and six rows of data. */
static const double gate_values[9] = {0.5, 1.0, -2.0, -0.3, 0.7, 0.4, 0.0, 0.0, 0.0};
static const double expert_values[9] = {1.0, 2.0, -1.0, -2.0, 0.5, 0.5, 3.0, 0.0, 1.5};
static const double variance_values[3] = {0.5, 1.0, 2.0};
static const double X[12] = {0.1, 0.2, -1.0, 0.5, 2.0, -1.5, 0.0, 0.0, 1.2, 1.1, -0.7, -0.9};
static const double y[6] = {1.3, -2.0, 4.0, 0.0, 2.2, -0.5};

static moe_model_t *fixed_model(void)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    spec.n_features = 2;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    ck_assert_int_eq(moe_model_set_gate(model, gate_values, 9), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, expert_values, 9), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(model, variance_values, 3), MOE_OK);
    return model;
}

/* Straightforward reference computations in linear space (fine for these small values). */
static void reference_row(size_t i, double *pi, double *density, double *mean)
{
    double x[3] = {1.0, X[2 * i], X[2 * i + 1]};
    double logits[3], total = 0.0;
    for (int k = 0; k < 3; ++k) {
        logits[k] = 0.0;
        mean[k] = 0.0;
        for (int j = 0; j < 3; ++j) {
            logits[k] += gate_values[k * 3 + j] * x[j];
            mean[k] += expert_values[k * 3 + j] * x[j];
        }
        total += exp(logits[k]);
    }
    for (int k = 0; k < 3; ++k) {
        pi[k] = exp(logits[k]) / total;
        double r = y[i] - mean[k];
        density[k] = exp(-0.5 * r * r / variance_values[k]) / sqrt(6.283185307179586 * variance_values[k]);
    }
}

START_TEST(structure_getters)
{
    moe_model_t *model = fixed_model();
    ck_assert_int_eq(moe_model_family(model), MOE_FAMILY_GAUSSIAN);
    ck_assert_int_eq(moe_model_link(model), MOE_LINK_IDENTITY);
    ck_assert_uint_eq(moe_model_n_experts(model), 3);
    ck_assert_uint_eq(moe_model_n_features(model), 2);
    ck_assert_uint_eq(moe_model_n_inputs(model), 3);
    ck_assert_uint_eq(moe_model_expert_rows(model), 1);
    ck_assert_uint_eq(moe_model_n_classes(model), 0);
    ck_assert_int_eq(moe_model_has_intercept(model), 1);
    /* gate (K-1) p + experts K p + variances K */
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 * 3 + 3 * 3 + 3);
    moe_model_spec spec;
    ck_assert_int_eq(moe_model_spec_init(&spec, MOE_MODEL_SPEC_VERSION), MOE_OK);
    ck_assert_int_eq(moe_model_get_spec(model, &spec), MOE_OK);
    ck_assert_uint_eq(spec.n_experts, 3);
    ck_assert_uint_eq(spec.n_features, 2);
    ck_assert_int_eq(spec.intercept, 1);
    moe_model_free(model);
}
END_TEST

START_TEST(new_model_is_neutral)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 4;
    spec.n_features = 3;
    spec.intercept = 0;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    ck_assert_uint_eq(moe_model_n_inputs(model), 3);
    double proba[8];
    double x[6] = {1, 2, 3, 4, 5, 6};
    ck_assert_int_eq(moe_model_gate_proba(model, 2, x, 3, proba, 8), MOE_OK);
    for (int i = 0; i < 8; ++i)
        ck_assert_double_eq_tol(proba[i], 0.25, 1e-15);
    double variances[4];
    EXPECT_STATUS(moe_model_get_variances(model, variances, 4), MOE_OK);
    for (int k = 0; k < 4; ++k)
        ck_assert_double_eq(variances[k], 1.0);
    moe_model_free(model);
}
END_TEST

START_TEST(gate_is_rereferenced_to_last_expert)
{
    moe_model_t *model = fixed_model();
    double before[18];
    ck_assert_int_eq(moe_model_gate_proba(model, 6, X, 2, before, 18), MOE_OK);
    double shifted[9];
    for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 3; ++j)
            shifted[k * 3 + j] = gate_values[k * 3 + j] + (j == 0 ? 10.0 : -0.25 * j);
    ck_assert_int_eq(moe_model_set_gate(model, shifted, 9), MOE_OK);
    double gate[9], after[18];
    EXPECT_STATUS(moe_model_get_gate(model, gate, 9), MOE_OK);
    for (int j = 0; j < 3; ++j)
        ck_assert_double_eq(gate[6 + j], 0.0);
    for (int i = 0; i < 6; ++i)
        ck_assert_double_eq_tol(gate[i], gate_values[i], 1e-12);
    EXPECT_STATUS(moe_model_gate_proba(model, 6, X, 2, after, 18), MOE_OK);
    for (int i = 0; i < 18; ++i)
        ck_assert_double_eq_tol(after[i], before[i], 1e-12);
    moe_model_free(model);
}
END_TEST

START_TEST(gate_proba_predict_posterior_match_reference)
{
    moe_model_t *model = fixed_model();
    double proba[18], posterior[18], prediction[6];
    ck_assert_int_eq(moe_model_gate_proba(model, 6, X, 2, proba, 18), MOE_OK);
    ck_assert_int_eq(moe_model_posterior(model, 6, X, 2, y, posterior, 18), MOE_OK);
    ck_assert_int_eq(moe_model_predict(model, 6, X, 2, prediction, 6), MOE_OK);
    for (size_t i = 0; i < 6; ++i) {
        double pi[3], density[3], mean[3], mixture = 0.0, expected = 0.0;
        reference_row(i, pi, density, mean);
        for (int k = 0; k < 3; ++k) {
            mixture += pi[k] * density[k];
            expected += pi[k] * mean[k];
        }
        for (int k = 0; k < 3; ++k) {
            ck_assert_double_eq_tol(proba[i * 3 + k], pi[k], 1e-13);
            ck_assert_double_eq_tol(posterior[i * 3 + k], pi[k] * density[k] / mixture, 1e-12);
        }
        ck_assert_double_eq_tol(prediction[i], expected, 1e-12);
    }
    moe_model_free(model);
}
END_TEST

START_TEST(loglik_and_criteria_match_reference)
{
    moe_model_t *model = fixed_model();
    double weights[6] = {1.0, 0.5, 2.0, 0.0, 3.0, 1.0};
    double expected = 0.0, expected_weighted = 0.0, entropy = 0.0, n_obs = 0.0;
    for (size_t i = 0; i < 6; ++i) {
        double pi[3], density[3], mean[3], mixture = 0.0;
        reference_row(i, pi, density, mean);
        for (int k = 0; k < 3; ++k)
            mixture += pi[k] * density[k];
        expected += log(mixture);
        expected_weighted += weights[i] * log(mixture);
        for (int k = 0; k < 3; ++k) {
            double r = pi[k] * density[k] / mixture;
            if (r > 0.0)
                entropy -= weights[i] * r * log(r);
        }
        n_obs += weights[i];
    }
    double loglik;
    ck_assert_int_eq(moe_model_loglik(model, 6, X, 2, y, NULL, &loglik), MOE_OK);
    ck_assert_double_eq_tol(loglik, expected, 1e-12);
    ck_assert_int_eq(moe_model_loglik(model, 6, X, 2, y, weights, &loglik), MOE_OK);
    ck_assert_double_eq_tol(loglik, expected_weighted, 1e-12);
    moe_criteria criteria = MOE_CRITERIA_INIT;
    ck_assert_int_eq(moe_model_criteria(model, 6, X, 2, y, weights, &criteria), MOE_OK);
    double k = 18.0;
    ck_assert_double_eq_tol(criteria.loglik, expected_weighted, 1e-12);
    ck_assert_double_eq(criteria.n_params, k);
    ck_assert_double_eq_tol(criteria.n_obs, n_obs, 1e-15);
    ck_assert_double_eq_tol(criteria.aic, -2.0 * expected_weighted + 2.0 * k, 1e-11);
    ck_assert_double_eq_tol(criteria.bic, -2.0 * expected_weighted + k * log(n_obs), 1e-11);
    ck_assert_double_eq_tol(criteria.entropy, entropy, 1e-12);
    ck_assert_double_eq_tol(criteria.icl, criteria.bic + 2.0 * entropy, 1e-11);
    moe_model_free(model);
}
END_TEST

START_TEST(extreme_residuals_stay_in_log_space)
{
    /* A response 1e6 standard deviations away underflows every density in linear space. */
    moe_model_t *model = fixed_model();
    double far[6];
    for (int i = 0; i < 6; ++i)
        far[i] = 1e6 * (i % 2 ? 1.0 : -1.0);
    double loglik, posterior[18];
    ck_assert_int_eq(moe_model_loglik(model, 6, X, 2, far, NULL, &loglik), MOE_OK);
    ck_assert(isfinite(loglik));
    ck_assert_int_eq(moe_model_posterior(model, 6, X, 2, far, posterior, 18), MOE_OK);
    for (int i = 0; i < 6; ++i) {
        double sum = 0.0;
        for (int k = 0; k < 3; ++k) {
            ck_assert(isfinite(posterior[i * 3 + k]));
            sum += posterior[i * 3 + k];
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-12);
        /* The widest expert (variance 2, the last) explains far outliers. */
        ck_assert_double_gt(posterior[i * 3 + 2], 0.999);
    }
    moe_model_free(model);
}
END_TEST

/* When even log space cannot hold the density (log f = -inf for every expert), there is
   no posterior: the functions say so instead of returning NaN with MOE_OK. */
START_TEST(impossible_row_is_a_numerical_error)
{
    moe_model_t *model = fixed_model();
    const double tiny[3] = {1e-300, 1e-300, 1e-300};
    ck_assert_int_eq(moe_model_set_variances(model, tiny, 3), MOE_OK);
    double far[6] = {1.3, -2.0, 1e200, 0.0, 2.2, -0.5};
    double loglik = 0.0, posterior[18];
    moe_criteria criteria = MOE_CRITERIA_INIT;
    ck_assert_int_eq(moe_model_loglik(model, 6, X, 2, far, NULL, &loglik), MOE_ERR_NUMERICAL);
    ck_assert_int_eq(moe_model_posterior(model, 6, X, 2, far, posterior, 18), MOE_ERR_NUMERICAL);
    ck_assert_ptr_nonnull(strstr(moe_last_error(), "row 2")); /* const calls: thread slot */
    ck_assert_int_eq(moe_model_criteria(model, 6, X, 2, far, NULL, &criteria), MOE_ERR_NUMERICAL);
    moe_model_free(model);
}
END_TEST

START_TEST(ldx_larger_than_features)
{
    moe_model_t *model = fixed_model();
    double wide[24];
    for (int i = 0; i < 6; ++i) {
        wide[4 * i] = X[2 * i];
        wide[4 * i + 1] = X[2 * i + 1];
        wide[4 * i + 2] = NAN; /* padding is never read */
        wide[4 * i + 3] = 1e300;
    }
    double a[6], b[6];
    ck_assert_int_eq(moe_model_predict(model, 6, X, 2, a, 6), MOE_OK);
    ck_assert_int_eq(moe_model_predict(model, 6, wide, 4, b, 6), MOE_OK);
    ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
    moe_model_free(model);
}
END_TEST

START_TEST(canonicalize_keeps_the_distribution)
{
    moe_model_t *model = fixed_model();
    double before_proba[18], before_prediction[6], before_loglik;
    EXPECT_STATUS(moe_model_gate_proba(model, 6, X, 2, before_proba, 18), MOE_OK);
    EXPECT_STATUS(moe_model_predict(model, 6, X, 2, before_prediction, 6), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(model, 6, X, 2, y, NULL, &before_loglik), MOE_OK);
    ck_assert_int_eq(moe_model_canonicalize(model), MOE_OK);
    double experts[9], gate[9], variances[3];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 9), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(model, gate, 9), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, variances, 3), MOE_OK);
    /* sorted by intercept: -2 (variance 1), 1 (0.5), 3 (2) */
    ck_assert_double_eq(experts[0], -2.0);
    ck_assert_double_eq(experts[3], 1.0);
    ck_assert_double_eq(experts[6], 3.0);
    ck_assert_double_eq(variances[0], 1.0);
    ck_assert_double_eq(variances[2], 2.0);
    for (int j = 0; j < 3; ++j)
        ck_assert_double_eq(gate[6 + j], 0.0);
    double after_prediction[6], after_loglik, after_proba[18];
    EXPECT_STATUS(moe_model_predict(model, 6, X, 2, after_prediction, 6), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(model, 6, X, 2, y, NULL, &after_loglik), MOE_OK);
    EXPECT_STATUS(moe_model_gate_proba(model, 6, X, 2, after_proba, 18), MOE_OK);
    for (int i = 0; i < 6; ++i)
        ck_assert_double_eq_tol(after_prediction[i], before_prediction[i], 1e-12);
    ck_assert_double_eq_tol(after_loglik, before_loglik, 1e-12);
    /* probabilities permute with the experts: old order (1, -2, 3) -> new (-2, 1, 3) */
    for (int i = 0; i < 6; ++i) {
        ck_assert_double_eq_tol(after_proba[i * 3 + 0], before_proba[i * 3 + 1], 1e-12);
        ck_assert_double_eq_tol(after_proba[i * 3 + 1], before_proba[i * 3 + 0], 1e-12);
        ck_assert_double_eq_tol(after_proba[i * 3 + 2], before_proba[i * 3 + 2], 1e-12);
    }
    moe_model_free(model);
}
END_TEST

START_TEST(clone_is_deep)
{
    moe_model_t *model = fixed_model(), *copy = NULL;
    ck_assert_int_eq(moe_model_clone(&copy, model), MOE_OK);
    double zeros[9] = {0};
    ck_assert_int_eq(moe_model_set_experts(model, zeros, 9), MOE_OK);
    double experts[9];
    EXPECT_STATUS(moe_model_get_experts(copy, experts, 9), MOE_OK);
    ck_assert_int_eq(memcmp(experts, expert_values, sizeof experts), 0);
    moe_model_free(model);
    moe_model_free(copy);
}
END_TEST

START_TEST(no_intercept_and_no_features)
{
    /* d = 0 with an intercept: a plain mixture of K Gaussians with constant weights. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = 0;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    double gate[2] = {log(3.0), 0.0}, experts[2] = {-1.0, 2.0}, proba[2], prediction[1];
    EXPECT_STATUS(moe_model_set_gate(model, gate, 2), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, experts, 2), MOE_OK);
    ck_assert_int_eq(moe_model_gate_proba(model, 1, NULL, 0, proba, 2), MOE_OK);
    ck_assert_double_eq_tol(proba[0], 0.75, 1e-15);
    ck_assert_int_eq(moe_model_predict(model, 1, NULL, 0, prediction, 1), MOE_OK);
    ck_assert_double_eq_tol(prediction[0], 0.75 * -1.0 + 0.25 * 2.0, 1e-15);
    moe_model_free(model);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *suite = suite_create("model");
    TCase *core = tcase_create("core");
    tcase_add_test(core, structure_getters);
    tcase_add_test(core, new_model_is_neutral);
    tcase_add_test(core, gate_is_rereferenced_to_last_expert);
    tcase_add_test(core, gate_proba_predict_posterior_match_reference);
    tcase_add_test(core, loglik_and_criteria_match_reference);
    tcase_add_test(core, extreme_residuals_stay_in_log_space);
    tcase_add_test(core, impossible_row_is_a_numerical_error);
    tcase_add_test(core, ldx_larger_than_features);
    tcase_add_test(core, canonicalize_keeps_the_distribution);
    tcase_add_test(core, clone_is_deep);
    tcase_add_test(core, no_intercept_and_no_features);
    suite_add_tcase(suite, core);
    return suite;
}

int main(void)
{
    return run_suite(model_suite());
}
