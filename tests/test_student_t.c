/*
 * Student-t experts (MOE_FAMILY_STUDENT_T): the log-density against the t formula written
 * out here, the degrees-of-freedom accessors and their errors, em's monotone
 * log-likelihood, the M-step that never lowers its objective, recovery of two regression
 * regimes through 5% gross outliers that pull Gaussian experts away, the Gaussian limit as
 * nu grows, the pinned update_degrees option, save/load bit for bit and the loader's range
 * check, the observed information (nu included) against second differences and its
 * Gaussian limit, and the estimators that refuse the family.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/checksum.h"
#include "model/family.h"
#include "model/model_impl.h"
#include "support/runner.h"
#include "support/synthetic.h"

enum { N = 1000, SMALL = 200, SEEDS = 5 };

static double X[N], Y[N];

/*
 * Two regimes by a gate on x: y = -2.5 x (x < 0 mostly) or 2.5 x (x > 0 mostly), soft gate
 * sigmoid(6 x), noise sd 0.3, x uniform on (-2, 2); then every 20th row's y (5%) replaced
 * by a gross outlier of either sign, 20 to 40 in size.
 */
static void make_data(size_t n, uint64_t seed, int outliers)
{
    test_rng rng = {seed};
    for (size_t i = 0; i < n; ++i) {
        double x = -2.0 + 4.0 * test_uniform(&rng);
        int rising = test_uniform(&rng) < 1.0 / (1.0 + exp(-6.0 * x));
        X[i] = x;
        Y[i] = (rising ? 2.5 : -2.5) * x + 0.3 * test_normal(&rng);
        double size = 20.0 + 20.0 * test_uniform(&rng);
        double sign = test_uniform(&rng) < 0.5 ? -1.0 : 1.0;
        if (outliers && i % 20 == 7)
            Y[i] = sign * size;
    }
}

static moe_model_t *new_model(moe_family family, size_t K)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = K;
    spec.n_features = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

START_TEST(names_and_degrees)
{
    ck_assert_int_eq(MOE_FAMILY_STUDENT_T, 5);
    ck_assert_str_eq(moe_family_name(MOE_FAMILY_STUDENT_T), "t");
    moe_family family = MOE_FAMILY_GAUSSIAN;
    EXPECT_STATUS(moe_family_from_name("t", &family), MOE_OK);
    ck_assert_int_eq(family, MOE_FAMILY_STUDENT_T);
    family = MOE_FAMILY_GAUSSIAN;
    EXPECT_STATUS(moe_family_from_name("student_t", &family), MOE_OK);
    ck_assert_int_eq(family, MOE_FAMILY_STUDENT_T);
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
    double nu[2] = {0.0, 0.0};
    EXPECT_STATUS(moe_model_get_degrees(model, nu, 2), MOE_OK);
    ck_assert(nu[0] == 4.0 && nu[1] == 4.0);
    double variances[2];
    EXPECT_STATUS(moe_model_get_variances(model, variances, 2), MOE_OK);
    ck_assert(variances[0] == 1.0);
    /* coefficients (2) + scale + nu per expert, and one gate row of 2 */
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 + 2 * 4);
    const double good[2] = {MOE_DEGREES_MIN, MOE_DEGREES_MAX};
    EXPECT_STATUS(moe_model_set_degrees(model, good, 2), MOE_OK);
    const double low[2] = {3.0, 0.05}, high[2] = {2e6, 3.0}, nan[2] = {3.0, NAN};
    EXPECT_STATUS(moe_model_set_degrees(model, low, 2), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(moe_model_last_error(model), "degrees of freedom 1"));
    EXPECT_STATUS(moe_model_set_degrees(model, high, 2), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_model_set_degrees(model, nan, 2), MOE_ERR_NON_FINITE);
    EXPECT_STATUS(moe_model_set_degrees(model, good, 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_get_degrees(model, nu, 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_set_degrees(NULL, good, 2), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_degrees(model, NULL, 2), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_degrees(model, nu, 2), MOE_OK);
    ck_assert(nu[0] == MOE_DEGREES_MIN && nu[1] == MOE_DEGREES_MAX); /* unchanged by errors */
    /* The pinned option that holds nu: integer 0 or 1, default 1. */
    ck_assert_str_eq(moe_option_name(MOE_OPT_UPDATE_DEGREES), "update_degrees");
    ck_assert_int_eq(MOE_OPT_UPDATE_DEGREES, 28);
    moe_fitter_t *fitter = test_fitter("em", 0);
    long long update = -1;
    EXPECT_STATUS(moe_fitter_get_int(fitter, MOE_OPT_UPDATE_DEGREES, &update), MOE_OK);
    ck_assert_int_eq(update, 1);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_UPDATE_DEGREES, 2), MOE_ERR_INVALID_ARGUMENT);
    moe_fitter_free(fitter);
    moe_model_t *gaussian = new_model(MOE_FAMILY_GAUSSIAN, 2);
    EXPECT_STATUS(moe_model_get_degrees(gaussian, nu, 2), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_model_set_degrees(gaussian, good, 2), MOE_ERR_UNSUPPORTED);
    /* The clone and the parameter copy carry nu. */
    moe_model_t *copy = NULL;
    EXPECT_STATUS(moe_model_clone(&copy, model), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(copy, nu, 2), MOE_OK);
    ck_assert(nu[0] == MOE_DEGREES_MIN && nu[1] == MOE_DEGREES_MAX);
    moe_model_free(copy);
    moe_model_free(gaussian);
    moe_model_free(model);
}
END_TEST

/* The t density written out with tgamma and pow, independent of the library's form. */
static double t_density(double e, double scale_squared, double nu)
{
    double norm = tgamma(0.5 * (nu + 1.0)) /
                  (tgamma(0.5 * nu) * sqrt(nu * 3.14159265358979323846 * scale_squared));
    return norm * pow(1.0 + e * e / (nu * scale_squared), -0.5 * (nu + 1.0));
}

START_TEST(log_density_matches_the_formula)
{
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
    const double experts[4] = {0.5, -1.0, -0.2, 2.0}, variances[2] = {0.7, 2.3};
    const double gate[4] = {0.3, 1.1, 0.0, 0.0};
    const double cases[][2] = {{1.0, 1.0}, {3.5, 0.6}, {30.0, 150.0}, {0.3, 7.0}};
    EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, 2), MOE_OK);
    EXPECT_STATUS(moe_model_set_gate(model, gate, 4), MOE_OK);
    const double x[5] = {-1.5, -0.2, 0.0, 0.7, 2.0}, y[5] = {0.1, 3.0, -8.0, 1.2, 40.0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        EXPECT_STATUS(moe_model_set_degrees(model, cases[c], 2), MOE_OK);
        double expected = 0.0;
        for (int i = 0; i < 5; ++i) {
            double logit = gate[0] + gate[1] * x[i], pi = 1.0 / (1.0 + exp(-logit));
            double first = t_density(y[i] - experts[0] - experts[1] * x[i], variances[0],
                                     cases[c][0]);
            double second = t_density(y[i] - experts[2] - experts[3] * x[i], variances[1],
                                      cases[c][1]);
            expected += log(pi * first + (1.0 - pi) * second);
        }
        double loglik = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, 5, x, 1, y, NULL, &loglik), MOE_OK);
        ck_assert_msg(fabs(loglik - expected) <= 1e-10 * fabs(expected),
                      "nu (%g, %g): %.15g, the formula %.15g", cases[c][0], cases[c][1],
                      loglik, expected);
    }
    /* nu = 1 is the Cauchy density. */
    const double cauchy[2] = {1.0, 1.0};
    EXPECT_STATUS(moe_model_set_degrees(model, cauchy, 2), MOE_OK);
    double loglik = 0.0, e = 2.0 - 0.5 - (-1.0) * 1.0;
    const double one_x = 1.0, one_y = 2.0;
    EXPECT_STATUS(moe_model_loglik(model, 1, &one_x, 1, &one_y, NULL, &loglik), MOE_OK);
    double pi = 1.0 / (1.0 + exp(-1.4));
    double f1 = 1.0 / (3.14159265358979323846 * sqrt(0.7) * (1.0 + e * e / 0.7));
    double e2 = 2.0 + 0.2 - 2.0;
    double f2 = 1.0 / (3.14159265358979323846 * sqrt(2.3) * (1.0 + e2 * e2 / 2.3));
    ck_assert_double_eq_tol(loglik, log(pi * f1 + (1.0 - pi) * f2), 1e-12);
    moe_model_free(model);
}
END_TEST

START_TEST(em_is_monotone)
{
    make_data(N, 21, 1);
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 3);
    test_assert_em_monotone(model, N, X, 1, Y, NULL, 4, 6);
    double nu[3];
    EXPECT_STATUS(moe_model_get_degrees(model, nu, 3), MOE_OK);
    for (int k = 0; k < 3; ++k)
        ck_assert(nu[k] >= MOE_DEGREES_MIN && nu[k] <= MOE_DEGREES_MAX);
    moe_model_free(model);
}
END_TEST

/* The weighted t objective of expert k, as the M-step's contract states it. */
static double expert_objective(const moe_model_t *model, size_t k, const double *resp)
{
    double beta[4], variances[2], nu[2];
    EXPECT_STATUS(moe_model_get_experts(model, beta, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, variances, 2), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(model, nu, 2), MOE_OK);
    double sum = 0.0;
    for (size_t i = 0; i < SMALL; ++i) {
        double e = Y[i] - beta[2 * k] - beta[2 * k + 1] * X[i];
        sum += resp[i * 2 + k] * log(t_density(e, variances[k], nu[k]));
    }
    return sum;
}

START_TEST(m_step_never_lowers_the_objective)
{
    make_data(SMALL, 31, 1);
    test_rng rng = {5};
    double resp[2 * SMALL];
    for (size_t i = 0; i < SMALL; ++i) {
        resp[2 * i] = test_uniform(&rng);
        resp[2 * i + 1] = 1.0 - resp[2 * i];
    }
    moe_data data = {SMALL, 1, 1, 1, X, Y, NULL};
    for (int start = 0; start < 4; ++start) {
        moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
        double experts[4], variances[2], nu[2];
        for (int j = 0; j < 4; ++j)
            experts[j] = 2.0 * test_normal(&rng);
        for (int k = 0; k < 2; ++k) {
            variances[k] = 0.1 + 10.0 * test_uniform(&rng);
            nu[k] = 0.5 + 50.0 * test_uniform(&rng);
        }
        EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
        EXPECT_STATUS(moe_model_set_variances(model, variances, 2), MOE_OK);
        EXPECT_STATUS(moe_model_set_degrees(model, nu, 2), MOE_OK);
        moe_expert_mstep_options options = {0.0, SMALL, 1e-12, 1e-9, 1, 0, 0.0, 1, 0.0, 1, 1};
        for (int round = 0; round < 20; ++round) {
            double before[2] = {expert_objective(model, 0, resp),
                                expert_objective(model, 1, resp)};
            moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
            char message[MOE_MESSAGE_SIZE] = "";
            EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options, &report,
                                                    message),
                          MOE_OK);
            for (size_t k = 0; k < 2; ++k) {
                double after = expert_objective(model, k, resp);
                ck_assert_msg(after >= before[k] - 1e-9 * fabs(before[k]),
                              "start %d round %d expert %zu: %.15g -> %.15g", start, round, k,
                              before[k], after);
            }
        }
        moe_model_free(model);
    }
}
END_TEST

/* The weighted t objective of expert k of a two-expert model on n rows, with the library's
   form of the density (lgamma, log1p) so that its rounding is the library's. */
static double lgamma_objective(const moe_model_t *model, size_t n, const double *resp, size_t k)
{
    double beta[4], variances[2], nu[2], sum = 0.0;
    EXPECT_STATUS(moe_model_get_experts(model, beta, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, variances, 2), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(model, nu, 2), MOE_OK);
    double v = variances[k], d = nu[k];
    double constant = lgamma(0.5 * (d + 1.0)) - lgamma(0.5 * d) -
                      0.5 * log(3.14159265358979323846 * d * v);
    for (size_t i = 0; i < n; ++i) {
        double e = Y[i] - beta[2 * k] - beta[2 * k + 1] * X[i];
        sum += resp[i * 2 + k] * (constant - 0.5 * (d + 1.0) * log1p(e * e / (d * v)));
    }
    return sum;
}

/*
 * What the check on the nu step (family_student.c, ecm_cycle) guards against. On Gaussian
 * data with nu near 1000 the ECM step's true gain in the weighted log-likelihood is below
 * the rounding of that sum (the lgamma difference of the t constant, summed over the rows),
 * so an unchecked step can lower the computed objective: of these 200 seeds, two (82 and
 * 160, the second expert's nu creeping near 999.5) fall by up to 8e-13 relative from the
 * fifth M-step on; with the check no M-step falls (at most 6e-16 over 200 rounds, the
 * rounding of the least squares). A rounding-level effect: the seeds that show it depend
 * on the arithmetic, so the test runs all 200.
 */
START_TEST(nu_step_never_lowers_the_computed_objective)
{
    enum { ROWS = 400, ROUNDS = 20, SEEDS_CHECKED = 200 };
    double resp[2 * ROWS], worst = 0.0;
    size_t drops = 0;
    for (uint64_t seed = 1; seed <= SEEDS_CHECKED; ++seed) {
        test_rng rng = {seed};
        for (size_t i = 0; i < ROWS; ++i) {
            X[i] = test_normal(&rng);
            Y[i] = 1.0 + 2.0 * X[i] + test_normal(&rng);
            resp[2 * i] = test_uniform(&rng);
            resp[2 * i + 1] = 1.0 - resp[2 * i];
        }
        moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
        const double experts[4] = {1.0, 2.0, 0.5, 1.5};
        const double nu[2] = {5.0 + (double)(seed % 50), 1e3};
        EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
        EXPECT_STATUS(moe_model_set_degrees(model, nu, 2), MOE_OK);
        moe_data data = {ROWS, 1, 1, 1, X, Y, NULL};
        moe_expert_mstep_options options = {0.0, ROWS, 1e-12, 1e-9, 1, 0, 0.0, 1, 0.0, 1, 1};
        for (int round = 0; round < ROUNDS; ++round) {
            double before[2] = {lgamma_objective(model, ROWS, resp, 0),
                                lgamma_objective(model, ROWS, resp, 1)};
            moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
            char message[MOE_MESSAGE_SIZE] = "";
            EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options, &report,
                                                    message),
                          MOE_OK);
            for (size_t k = 0; k < 2; ++k) {
                double fall = (before[k] - lgamma_objective(model, ROWS, resp, k)) /
                              fabs(before[k]);
                worst = fmax(worst, fall);
                drops += fall > 1e-13;
            }
        }
        moe_model_free(model);
    }
    printf("nu step: largest relative fall %.3e, %zu falls beyond 1e-13\n", worst, drops);
    ck_assert_msg(drops == 0, "%zu M-steps lowered the objective (worst %.3e relative)", drops,
                  worst);
}
END_TEST

/* Distance of the two fitted slopes from -2.5 and 2.5 (the larger of the two). */
static double slope_error(const moe_model_t *model)
{
    double experts[4];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
    double low = fmin(experts[1], experts[3]), high = fmax(experts[1], experts[3]);
    return fmax(fabs(low + 2.5), fabs(high - 2.5));
}

static double fit_slopes(moe_family family, uint64_t seed)
{
    moe_model_t *model = new_model(family, 2);
    moe_fitter_t *fitter = test_fitter("em", seed);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, Y, NULL), MOE_OK);
    double error = slope_error(model);
    moe_fitter_free(fitter);
    moe_model_free(model);
    return error;
}

/*
 * The recovery of issue 27: n = 1000 from the two regimes with 5% gross outliers, em from
 * the defaults, five data seeds. Gaussian experts spend themselves on the outliers (their
 * worst slope misses by 0.50 to 2.67 on these seeds); t experts must find both slopes
 * within 0.2 on every seed (they do within 0.07).
 */
START_TEST(t_experts_recover_slopes_through_outliers)
{
    double worst_t = 0.0, best_gaussian = INFINITY;
    for (uint64_t seed = 1; seed <= SEEDS; ++seed) {
        make_data(N, 300 + seed, 1);
        double gaussian = fit_slopes(MOE_FAMILY_GAUSSIAN, seed);
        double t = fit_slopes(MOE_FAMILY_STUDENT_T, seed);
        printf("seed %d: slope error gaussian %.4f, t %.4f\n", (int)seed, gaussian, t);
        worst_t = fmax(worst_t, t);
        best_gaussian = fmin(best_gaussian, gaussian);
    }
    printf("t recovery over %d seeds: worst t slope error %.4f, best gaussian %.4f\n", SEEDS,
           worst_t, best_gaussian);
    ck_assert_msg(worst_t < 0.2, "worst t slope error %g", worst_t);
    ck_assert_msg(best_gaussian > 0.4, "gaussian experts were not pulled away (%g)",
                  best_gaussian);
}
END_TEST

/* Clean data, nu held at 1e5: the t fit is the Gaussian fit to within O(1/nu). */
START_TEST(large_nu_tends_to_the_gaussian_fit)
{
    make_data(N, 77, 0);
    moe_model_t *gaussian = new_model(MOE_FAMILY_GAUSSIAN, 2);
    moe_model_t *t = new_model(MOE_FAMILY_STUDENT_T, 2);
    const double large[2] = {1e5, 1e5};
    EXPECT_STATUS(moe_model_set_degrees(t, large, 2), MOE_OK);
    moe_fitter_t *first = test_fitter("em", 3), *second = test_fitter("em", 3);
    EXPECT_STATUS(moe_fitter_set_double(first, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(second, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(second, MOE_OPT_UPDATE_DEGREES, 0), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(first, gaussian, N, X, 1, Y, NULL), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(second, t, N, X, 1, Y, NULL), MOE_OK);
    double nu[2];
    EXPECT_STATUS(moe_model_get_degrees(t, nu, 2), MOE_OK);
    ck_assert(nu[0] == 1e5 && nu[1] == 1e5); /* held by update_degrees = 0 */
    double a[4], b[4], va[2], vb[2];
    EXPECT_STATUS(moe_model_get_experts(gaussian, a, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(t, b, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(gaussian, va, 2), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(t, vb, 2), MOE_OK);
    int swap = (a[1] < a[3]) != (b[1] < b[3]);
    double worst = 0.0;
    for (int k = 0; k < 2; ++k) {
        int l = swap ? 1 - k : k;
        worst = fmax(worst, fmax(fabs(a[2 * k] - b[2 * l]), fabs(a[2 * k + 1] - b[2 * l + 1])));
        ck_assert_double_eq_tol(va[k], vb[l], 1e-3 * va[k]);
    }
    printf("nu = 1e5 against gaussian: largest coefficient difference %.2e\n", worst);
    ck_assert_msg(worst < 1e-3, "largest coefficient difference %g", worst);
    moe_fitter_free(first);
    moe_fitter_free(second);
    moe_model_free(gaussian);
    moe_model_free(t);
}
END_TEST

/* Canonical order moves each expert's nu with its coefficients and scale: the fitter puts
   every fitted model in that order, so a nu left behind would belong to another expert. */
START_TEST(canonical_order_keeps_nu_with_its_expert)
{
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 3);
    /* Experts in descending order of intercept: canonical order reverses them. */
    const double experts[] = {3.0, 1.0, 2.0, -1.0, 1.0, 0.5};
    const double scales[] = {0.5, 0.25, 2.0}, degrees[] = {1.5, 30.0, 7.0};
    const double gate[] = {0.3, -0.2, 0.1, 0.4, 0.0, 0.0};
    EXPECT_STATUS(moe_model_set_experts(model, experts, 6), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, scales, 3), MOE_OK);
    EXPECT_STATUS(moe_model_set_degrees(model, degrees, 3), MOE_OK);
    EXPECT_STATUS(moe_model_set_gate(model, gate, 6), MOE_OK);
    EXPECT_STATUS(moe_model_canonicalize(model), MOE_OK);
    double sorted[6], sorted_scales[3], sorted_degrees[3];
    EXPECT_STATUS(moe_model_get_experts(model, sorted, 6), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, sorted_scales, 3), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(model, sorted_degrees, 3), MOE_OK);
    for (size_t k = 0; k < 3; ++k) {
        size_t was = 0;
        while (was < 3 && experts[2 * was] != sorted[2 * k])
            ++was;
        ck_assert_uint_lt(was, 3);
        ck_assert(sorted[2 * k + 1] == experts[2 * was + 1]);
        ck_assert(sorted_scales[k] == scales[was]);
        ck_assert_msg(sorted_degrees[k] == degrees[was], "expert %zu (was %zu): nu %g, not %g",
                      k, was, sorted_degrees[k], degrees[was]);
    }
    ck_assert(sorted[0] < sorted[2] && sorted[2] < sorted[4]);
    moe_model_free(model);
}
END_TEST

START_TEST(save_load_round_trip)
{
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
    const double experts[4] = {0.5, -1.0, -0.2, 2.0}, variances[2] = {0.7, 2.3};
    const double gate[4] = {0.3, 1.1, 0.0, 0.0}, nu[2] = {2.75, 31.5};
    EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, 2), MOE_OK);
    EXPECT_STATUS(moe_model_set_gate(model, gate, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_degrees(model, nu, 2), MOE_OK);
    unsigned char buffer[512];
    size_t written = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, buffer, sizeof buffer, &written), MOE_OK);
    /* 64 header + 8 (gate 4, experts 4, variances 2, degrees 2) + 4 checksum */
    ck_assert_uint_eq(written, 64 + 8 * 12 + 4);
    moe_model_t *loaded = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&loaded, buffer, written), MOE_OK);
    ck_assert_int_eq(moe_model_family(loaded), MOE_FAMILY_STUDENT_T);
    double back[2];
    EXPECT_STATUS(moe_model_get_degrees(loaded, back, 2), MOE_OK);
    ck_assert(memcmp(back, nu, sizeof nu) == 0);
    unsigned char again[512];
    size_t rewritten = 0;
    EXPECT_STATUS(moe_model_save_buffer(loaded, again, sizeof again, &rewritten), MOE_OK);
    ck_assert_uint_eq(rewritten, written);
    ck_assert(memcmp(buffer, again, written) == 0);
    /* A file whose nu is out of range, with a valid checksum, is refused. */
    const double bad[] = {0.01, 2e6, -3.0};
    for (int b = 0; b < 3; ++b) {
        moe_put_double(again + 64 + 8 * 10, bad[b]);
        moe_put_u32(again + written - 4, moe_crc32(again, written - 4));
        moe_model_t *refused = NULL;
        EXPECT_STATUS(moe_model_load_buffer(&refused, again, written), MOE_ERR_FORMAT);
        ck_assert_ptr_nonnull(strstr(moe_last_error(), "degrees of freedom 0"));
        ck_assert_ptr_null(refused);
    }
    moe_model_free(loaded);
    moe_model_free(model);
}
END_TEST

/* ---- The observed information --------------------------------------------------------- */

enum { K2 = 2, P2 = 2 + K2 * 4 }; /* gate row (2), experts (2 x 2), scales (2), nu (2) */

/* theta in the information's order: gate free row, experts, squared scales, nu. */
static void set_theta(moe_model_t *model, const double *theta)
{
    double gate[4] = {theta[0], theta[1], 0.0, 0.0};
    EXPECT_STATUS(moe_model_set_gate(model, gate, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, theta + 2, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, theta + 6, 2), MOE_OK);
    if (moe_model_family(model) == MOE_FAMILY_STUDENT_T)
        EXPECT_STATUS(moe_model_set_degrees(model, theta + 8, 2), MOE_OK);
}

static void get_theta(const moe_model_t *model, double *theta)
{
    double gate[4];
    EXPECT_STATUS(moe_model_get_gate(model, gate, 4), MOE_OK);
    theta[0] = gate[0] - gate[2];
    theta[1] = gate[1] - gate[3];
    EXPECT_STATUS(moe_model_get_experts(model, theta + 2, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, theta + 6, 2), MOE_OK);
    if (moe_model_family(model) == MOE_FAMILY_STUDENT_T)
        EXPECT_STATUS(moe_model_get_degrees(model, theta + 8, 2), MOE_OK);
}

static double W[N];

static double loglik_at(moe_model_t *model, const double *theta, const double *weights)
{
    set_theta(model, theta);
    double value = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, N, X, 1, Y, weights, &value), MOE_OK);
    return value;
}

static moe_model_t *fitted_t_model(uint64_t seed, const double *weights)
{
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, K2);
    moe_fitter_t *fitter = test_fitter("em", seed);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, Y, weights), MOE_OK);
    moe_fitter_free(fitter);
    return model;
}

/* Steps relative to the parameter: the scales and nu are positive and small. */
static double step_for(const double *theta, size_t a)
{
    return a >= 6 ? 1e-4 * theta[a] : 1e-4 * (1.0 + fabs(theta[a]));
}

/* Each entry of the information against central second differences of the (weighted)
   log-likelihood at an em fit on the outlier data, nu among the parameters. */
START_TEST(information_is_the_negative_hessian)
{
    make_data(N, 301, 1);
    test_rng rng = {9};
    for (size_t i = 0; i < N; ++i)
        W[i] = 0.5 + test_uniform(&rng);
    for (int weighted = 0; weighted < 2; ++weighted) {
        const double *weights = weighted ? W : NULL;
        moe_model_t *model = fitted_t_model(2, weights);
        ck_assert_uint_eq(moe_model_n_free_params(model), P2);
        double theta[P2], t[P2], information[P2 * P2];
        get_theta(model, theta);
        printf("fitted nu (%g, %g), scales (%g, %g)\n", theta[8], theta[9], theta[6],
               theta[7]);
        EXPECT_STATUS(moe_model_information(model, N, X, 1, Y, weights, information,
                                            P2 * P2),
                      MOE_OK);
        double worst = 0.0;
        for (size_t a = 0; a < P2; ++a)
            for (size_t b = a; b < P2; ++b) {
                double ha = step_for(theta, a), hb = step_for(theta, b);
                double f[4];
                for (int c = 0; c < 4; ++c) {
                    memcpy(t, theta, sizeof t);
                    t[a] += (c & 1 ? -ha : ha);
                    t[b] += (c & 2 ? -hb : hb);
                    f[c] = loglik_at(model, t, weights);
                }
                double second = (f[0] - f[1] - f[2] + f[3]) / (4.0 * ha * hb);
                double analytic = information[a * P2 + b];
                ck_assert(analytic == information[b * P2 + a]);
                /* on the scale of the entry's row and column (a correlation's) */
                double scale = sqrt(information[a * P2 + a] * information[b * P2 + b]);
                double error = fabs(analytic + second) / scale;
                ck_assert_msg(error < 2e-5, "weights %d entry (%zu, %zu): %.10g, -differences "
                              "%.10g", weighted, a, b, analytic, -second);
                worst = fmax(worst, error);
            }
        printf("weights %d: worst relative error against second differences %.2e\n",
               weighted, worst);
        /* A maximum: the covariance exists and is positive definite. */
        double covariance[P2 * P2];
        EXPECT_STATUS(moe_model_vcov(model, N, X, 1, Y, weights, covariance, P2 * P2),
                      MOE_OK);
        for (size_t a = 0; a < P2; ++a)
            ck_assert(covariance[a * P2 + a] > 0.0);
        set_theta(model, theta);
        moe_model_free(model);
    }
}
END_TEST

/* Standard errors from the leading block of the information (nu held fixed, as the header
   tells users to do): the square roots of the diagonal of its inverse. */
static void fixed_nu_errors(const double *information, size_t kept, double *errors)
{
    double block[P2 * P2];
    for (size_t a = 0; a < kept; ++a)
        for (size_t b = 0; b < kept; ++b)
            block[a * kept + b] = information[a * P2 + b];
    /* Gauss-Jordan on the small SPD block, column by column of the identity. */
    double inverse[P2 * P2] = {0};
    for (size_t a = 0; a < kept; ++a)
        inverse[a * kept + a] = 1.0;
    for (size_t c = 0; c < kept; ++c) {
        double pivot = block[c * kept + c];
        ck_assert(pivot > 0.0);
        for (size_t j = 0; j < kept; ++j) {
            block[c * kept + j] /= pivot;
            inverse[c * kept + j] /= pivot;
        }
        for (size_t r = 0; r < kept; ++r) {
            if (r == c)
                continue;
            double factor = block[r * kept + c];
            for (size_t j = 0; j < kept; ++j) {
                block[r * kept + j] -= factor * block[c * kept + j];
                inverse[r * kept + j] -= factor * inverse[c * kept + j];
            }
        }
    }
    for (size_t a = 0; a < kept; ++a)
        errors[a] = sqrt(inverse[a * kept + a]);
}

/* nu = 1e5 held fixed: at the Gaussian fit's parameters the t information of everything
   but nu is the Gaussian one to O(1/nu), and so are the standard errors. */
START_TEST(large_nu_standard_errors_are_gaussian)
{
    make_data(N, 77, 0);
    moe_model_t *gaussian = new_model(MOE_FAMILY_GAUSSIAN, K2);
    moe_fitter_t *fitter = test_fitter("em", 3);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, gaussian, N, X, 1, Y, NULL), MOE_OK);
    double theta[P2];
    get_theta(gaussian, theta);
    theta[8] = theta[9] = 1e5;
    moe_model_t *t = new_model(MOE_FAMILY_STUDENT_T, K2);
    set_theta(t, theta);
    double gaussian_information[P2 * P2], t_information[P2 * P2];
    double covariance[(P2 - 2) * (P2 - 2)];
    EXPECT_STATUS(moe_model_information(gaussian, N, X, 1, Y, NULL, gaussian_information,
                                        (P2 - 2) * (P2 - 2)),
                  MOE_OK);
    EXPECT_STATUS(moe_model_vcov(gaussian, N, X, 1, Y, NULL, covariance, (P2 - 2) * (P2 - 2)),
                  MOE_OK);
    EXPECT_STATUS(moe_model_information(t, N, X, 1, Y, NULL, t_information, P2 * P2), MOE_OK);
    /* The Gaussian information is (P2 - 2) square: spread it to P2's stride. */
    double spread[P2 * P2] = {0};
    for (size_t a = 0; a < P2 - 2; ++a)
        for (size_t b = 0; b < P2 - 2; ++b)
            spread[a * P2 + b] = gaussian_information[a * (P2 - 2) + b];
    double gaussian_errors[P2], t_errors[P2], worst = 0.0;
    fixed_nu_errors(spread, P2 - 2, gaussian_errors);
    fixed_nu_errors(t_information, P2 - 2, t_errors);
    for (size_t a = 0; a < P2 - 2; ++a) {
        ck_assert_double_eq_tol(gaussian_errors[a], sqrt(covariance[a * (P2 - 2) + a]),
                                1e-9 * gaussian_errors[a]);
        double relative = fabs(t_errors[a] - gaussian_errors[a]) / gaussian_errors[a];
        worst = fmax(worst, relative);
        ck_assert_msg(relative < 1e-3, "parameter %zu: t %.8g, gaussian %.8g", a, t_errors[a],
                      gaussian_errors[a]);
    }
    printf("nu = 1e5: standard errors within %.2e relative of the Gaussian ones\n", worst);
    moe_fitter_free(fitter);
    moe_model_free(gaussian);
    moe_model_free(t);
}
END_TEST

/* ---- gem and gd --------------------------------------------------------------------------- */

/* The surrogate the family's gradient differentiates: -(1/N) sum w r log f + the ridge. */
static double surrogate(const moe_model_t *model, const double *resp, const double *weights,
                        double ridge)
{
    double beta[4], variances[2], nu[2], sum = 0.0, total = 0.0;
    EXPECT_STATUS(moe_model_get_experts(model, beta, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, variances, 2), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(model, nu, 2), MOE_OK);
    for (size_t i = 0; i < SMALL; ++i) {
        total += weights[i];
        for (size_t k = 0; k < 2; ++k) {
            double e = Y[i] - beta[2 * k] - beta[2 * k + 1] * X[i];
            sum += weights[i] * resp[i * 2 + k] * log(t_density(e, variances[k], nu[k]));
        }
    }
    return -sum / total + 0.5 * ridge * (beta[1] * beta[1] + beta[3] * beta[3]);
}

/* The gradient in the coefficients, log sigma^2 and log nu against central differences of
   the surrogate, with weights and a ridge. */
START_TEST(gradient_matches_differences)
{
    make_data(SMALL, 17, 1);
    test_rng rng = {8};
    double resp[2 * SMALL], weights[SMALL], total = 0.0, ridge = 0.03;
    for (size_t i = 0; i < SMALL; ++i) {
        resp[2 * i] = test_uniform(&rng);
        resp[2 * i + 1] = 1.0 - resp[2 * i];
        weights[i] = 0.5 + test_uniform(&rng);
        total += weights[i];
    }
    moe_data data = {SMALL, 1, 1, 1, X, Y, weights};
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
    double theta[8] = {0.3, -2.2, -0.1, 2.7, 0.2, 1.5, 1.3, 9.0}; /* beta, sigma^2, nu */
    EXPECT_STATUS(moe_model_set_experts(model, theta, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, theta + 4, 2), MOE_OK);
    EXPECT_STATUS(moe_model_set_degrees(model, theta + 6, 2), MOE_OK);
    double analytic[8];
    char message[MOE_MESSAGE_SIZE] = "";
    EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, ridge, total, 1, analytic,
                                              analytic + 4, message),
                  MOE_OK);
    ck_assert(model->family_ops->degrees_gradient != NULL);
    EXPECT_STATUS(model->family_ops->degrees_gradient(model, &data, resp, total, 1, analytic + 6,
                                                      message),
                  MOE_OK);
    for (size_t a = 0; a < 8; ++a) {
        double h = 1e-6, value[2];
        for (int side = 0; side < 2; ++side) {
            double moved[8];
            memcpy(moved, theta, sizeof moved);
            /* the scales and nu move in their logarithms */
            if (a < 4)
                moved[a] += side ? -h : h;
            else
                moved[a] *= exp(side ? -h : h);
            EXPECT_STATUS(moe_model_set_experts(model, moved, 4), MOE_OK);
            EXPECT_STATUS(moe_model_set_variances(model, moved + 4, 2), MOE_OK);
            EXPECT_STATUS(moe_model_set_degrees(model, moved + 6, 2), MOE_OK);
            value[side] = surrogate(model, resp, weights, ridge);
        }
        double difference = (value[0] - value[1]) / (2.0 * h);
        ck_assert_msg(fabs(analytic[a] - difference) <= 1e-6 * (1.0 + fabs(difference)),
                      "parameter %zu: gradient %.10g, differences %.10g", a, analytic[a],
                      difference);
    }
    moe_model_free(model);
}
END_TEST

static moe_fitter_t *continuing(const char *estimator, long long iterations, double tolerance)
{
    moe_fitter_t *fitter = test_fitter(estimator, 1);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, iterations), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, tolerance), MOE_OK);
    return fitter;
}

static void assert_monotone(moe_fitter_t *fitter, const char *what)
{
    size_t length = 0;
    double *trace = test_fit_trace(fitter, &length);
    for (size_t t = 1; t < length; ++t)
        ck_assert_msg(trace[t] >= trace[t - 1] - 1e-12 * fabs(trace[t - 1]),
                      "%s lowered the objective at iteration %zu: %.15g -> %.15g", what, t,
                      trace[t - 1], trace[t]);
    ck_assert_msg(trace[length - 1] > trace[0], "%s made no progress", what);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.monotonicity_violations, 0);
    free(trace);
}

/* From a few em iterations on the outlier data, em, gem and gd (Armijo) reach one optimum,
   nu included; gd with Armijo never lowers the objective. */
START_TEST(gem_and_gd_reach_the_em_fit)
{
    make_data(N, 301, 1);
    moe_model_t *start = new_model(MOE_FAMILY_STUDENT_T, 2);
    moe_fitter_t *warm = test_fitter("em", 2);
    EXPECT_STATUS(moe_fitter_set_int(warm, MOE_OPT_MAX_ITER, 3), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(warm, MOE_OPT_N_INIT, 1), MOE_OK);
    /* three iterations, not converged: that is the point */
    EXPECT_STATUS(moe_fitter_fit(warm, start, N, X, 1, Y, NULL), MOE_OK);
    moe_fitter_free(warm);
    const char *names[] = {"em", "gem", "gd"};
    double loglik[3], nu[3][2];
    for (int e = 0; e < 3; ++e) {
        moe_model_t *model = NULL;
        EXPECT_STATUS(moe_model_clone(&model, start), MOE_OK);
        moe_fitter_t *fitter = continuing(names[e], e == 0 ? 2000 : 5000, 1e-12);
        if (e == 2)
            EXPECT_STATUS(moe_fitter_set_option(fitter, "line_search", "armijo"), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, Y, NULL), MOE_OK);
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
        loglik[e] = report.loglik;
        EXPECT_STATUS(moe_model_get_degrees(model, nu[e], 2), MOE_OK);
        printf("%s: log-likelihood %.10g after %zu iterations, nu (%g, %g)\n", names[e],
               loglik[e], report.iterations, nu[e][0], nu[e][1]);
        if (e == 2)
            assert_monotone(fitter, "gd with armijo");
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    for (int e = 1; e < 3; ++e) {
        ck_assert_msg(fabs(loglik[e] - loglik[0]) <= 1e-4 * fabs(loglik[0]),
                      "%s: %.10g, em %.10g", names[e], loglik[e], loglik[0]);
        ck_assert(nu[e][0] != 4.0 && nu[e][1] != 4.0); /* nu moved */
    }
    moe_model_free(start);
}
END_TEST

/* The safe steps' promise (moe/fitter.h): with the scales and nu held, gem and gd never lower
   the objective; and update_degrees = 0 holds nu in both. */
START_TEST(safe_steps_never_lower_the_objective)
{
    make_data(N, 302, 1);
    const char *names[] = {"gem", "gd"};
    for (int e = 0; e < 2; ++e) {
        moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
        const double experts[4] = {0.5, -1.0, -0.5, 1.0}, nu[2] = {3.0, 6.0};
        EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
        EXPECT_STATUS(moe_model_set_degrees(model, nu, 2), MOE_OK);
        moe_fitter_t *fitter = continuing(names[e], 200, 0.0);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_UPDATE_VARIANCE, 0), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_UPDATE_DEGREES, 0), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, Y, NULL), MOE_OK);
        assert_monotone(fitter, names[e]);
        double held[2];
        EXPECT_STATUS(moe_model_get_degrees(model, held, 2), MOE_OK);
        ck_assert(fmin(held[0], held[1]) == 3.0 && fmax(held[0], held[1]) == 6.0);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
}
END_TEST

START_TEST(unsupported_estimators_refuse)
{
    make_data(SMALL, 44, 1);
    const char *estimators[] = {"cqt", "ismm", "ot"};
    for (int e = 0; e < 3; ++e) {
        moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
        moe_fitter_t *fitter = test_fitter(estimators[e], 1);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, SMALL, X, 1, Y, NULL), MOE_ERR_UNSUPPORTED);
        const char *message = moe_fitter_last_error(fitter);
        printf("%s refuses t experts: %s\n", estimators[e], message);
        ck_assert_msg(strstr(message, "t expert") != NULL || strstr(message, "Gaussian"),
                      "%s: '%s'", estimators[e], message);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    /* One shard is no way around the reduction's family. */
    moe_model_t *model = new_model(MOE_FAMILY_STUDENT_T, 2);
    moe_fitter_t *fitter = test_fitter("ot", 1);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "shards", "1"), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, SMALL, X, 1, Y, NULL), MOE_ERR_UNSUPPORTED);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

static Suite *student_t_suite(void)
{
    Suite *suite = suite_create("student_t");
    TCase *unit = tcase_create("unit");
    tcase_set_timeout(unit, 120);
    tcase_add_test(unit, names_and_degrees);
    tcase_add_test(unit, log_density_matches_the_formula);
    tcase_add_test(unit, em_is_monotone);
    tcase_add_test(unit, m_step_never_lowers_the_objective);
    tcase_add_test(unit, nu_step_never_lowers_the_computed_objective);
    tcase_add_test(unit, t_experts_recover_slopes_through_outliers);
    tcase_add_test(unit, large_nu_tends_to_the_gaussian_fit);
    tcase_add_test(unit, canonical_order_keeps_nu_with_its_expert);
    tcase_add_test(unit, save_load_round_trip);
    tcase_add_test(unit, information_is_the_negative_hessian);
    tcase_add_test(unit, large_nu_standard_errors_are_gaussian);
    tcase_add_test(unit, gradient_matches_differences);
    tcase_add_test(unit, gem_and_gd_reach_the_em_fit);
    tcase_add_test(unit, safe_steps_never_lower_the_objective);
    tcase_add_test(unit, unsupported_estimators_refuse);
    suite_add_tcase(suite, unit);
    return suite;
}

int main(void)
{
    return run_suite(student_t_suite());
}
