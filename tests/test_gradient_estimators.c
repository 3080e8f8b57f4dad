/*
 * The gem and gd estimators through the public API: gem with equal steps is
 * gd (the Fisher identity), safe default steps decrease the objective,
 * Armijo backtracking rescues a step that is far too large, mini-batches are
 * seeded, the report counts gradient evaluations, and option masks.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <moe/moe.h>

#include "support/labels.h"
#include "support/runner.h"
#include "support/synthetic.h"

typedef struct problem {
    moe_model_t *start; /* starting parameters (init = model) */
    size_t n, d;
    double *X, *y;
    synthetic_truth gaussian;
    label_truth labels;
    int is_gaussian;
} problem;

static problem problem_make(moe_family family, size_t n, uint64_t seed)
{
    problem pr;
    memset(&pr, 0, sizeof pr);
    pr.n = n;
    pr.d = 2;
    pr.X = malloc(n * 2 * sizeof(double));
    pr.y = malloc(n * sizeof(double));
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = 2;
    spec.n_features = 2;
    if (family == MOE_FAMILY_GAUSSIAN) {
        pr.is_gaussian = 1;
        synthetic_truth_make(&pr.gaussian, 2, 2, 3.0, 1.5, seed);
        synthetic_data sample;
        synthetic_data_make(&sample, &pr.gaussian, n, seed + 1);
        memcpy(pr.X, sample.X, n * 2 * sizeof(double));
        memcpy(pr.y, sample.y, n * sizeof(double));
        synthetic_data_free(&sample);
    } else {
        spec.n_classes = family == MOE_FAMILY_MULTINOMIAL ? 3 : 0;
        label_truth_make(&pr.labels, family, 2, 2, 3, 1.5, 1.5, seed);
        label_data_make(&pr.labels, n, seed + 1, pr.X, pr.y);
    }
    EXPECT_STATUS(moe_model_create(&pr.start, &spec), MOE_OK);
    /* A deterministic, non-trivial start away from the optimum. */
    test_rng rng = {seed + 2};
    size_t p = 3, rows = moe_model_expert_rows(pr.start);
    double gate[6] = {0}, experts[18] = {0}, variances[2] = {1.5, 0.7};
    for (size_t a = 0; a < p; ++a)
        gate[a] = 0.5 * test_normal(&rng);
    for (size_t a = 0; a < 2 * rows * p; ++a)
        experts[a] = test_normal(&rng);
    EXPECT_STATUS(moe_model_set_gate(pr.start, gate, 6), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(pr.start, experts, 2 * rows * p), MOE_OK);
    if (family == MOE_FAMILY_GAUSSIAN)
        EXPECT_STATUS(moe_model_set_variances(pr.start, variances, 2), MOE_OK);
    return pr;
}

static void problem_free(problem *pr)
{
    moe_model_free(pr->start);
    free(pr->X);
    free(pr->y);
    if (pr->is_gaussian)
        synthetic_truth_free(&pr->gaussian);
    else if (pr->labels.gate != NULL)
        label_truth_free(&pr->labels);
}

/* A fitter continuing from the model's parameters for exactly `iterations` iterations. */
static moe_fitter_t *stepping_fitter(const char *estimator, long long iterations)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, estimator), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, iterations), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0), MOE_OK);
    return fitter;
}

static moe_fit_report report_of(const moe_fitter_t *fitter)
{
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    return report;
}

static double *trace_of(const moe_fitter_t *fitter, size_t *length)
{
    EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, length), MOE_OK);
    double *trace = malloc(*length * sizeof(double));
    EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, *length, length), MOE_OK);
    return trace;
}

static moe_model_t *fit_from_start(const problem *pr, moe_fitter_t *fitter, moe_status expected)
{
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_clone(&model, pr->start), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, pr->n, pr->X, pr->d, pr->y, NULL), expected);
    return model;
}

static void assert_same_parameters(const moe_model_t *a, const moe_model_t *b, double tolerance)
{
    size_t size = moe_model_n_experts(a) * moe_model_expert_rows(a) * moe_model_n_inputs(a);
    double x[32], y[32];
    EXPECT_STATUS(moe_model_get_experts(a, x, size), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(b, y, size), MOE_OK);
    for (size_t i = 0; i < size; ++i)
        ck_assert_msg(fabs(x[i] - y[i]) <= tolerance * (1.0 + fabs(x[i])),
                      "expert value %zu: %.17g vs %.17g", i, x[i], y[i]);
    size = moe_model_n_experts(a) * moe_model_n_inputs(a);
    EXPECT_STATUS(moe_model_get_gate(a, x, size), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(b, y, size), MOE_OK);
    for (size_t i = 0; i < size; ++i)
        ck_assert_msg(fabs(x[i] - y[i]) <= tolerance * (1.0 + fabs(x[i])),
                      "gate value %zu: %.17g vs %.17g", i, x[i], y[i]);
}

static void check_gem_is_gd(moe_family family, double step)
{
    problem pr = problem_make(family, 400, 11 + (uint64_t)family);
    moe_fitter_t *gem = stepping_fitter("gem", 25), *gd = stepping_fitter("gd", 25);
    EXPECT_STATUS(moe_fitter_set_double(gem, MOE_OPT_STEP, step), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(gem, MOE_OPT_GATE_STEP, step), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(gd, MOE_OPT_STEP, step), MOE_OK);
    moe_model_t *a = fit_from_start(&pr, gem, MOE_OK), *b = fit_from_start(&pr, gd, MOE_OK);
    size_t length_a = 0, length_b = 0;
    double *trace_a = trace_of(gem, &length_a), *trace_b = trace_of(gd, &length_b);
    ck_assert_int_eq((int)length_a, 26);
    ck_assert_int_eq((int)length_b, 26);
    for (size_t t = 0; t < length_a; ++t)
        ck_assert_msg(fabs(trace_a[t] - trace_b[t]) <= 1e-12 * fabs(trace_a[t]),
                      "iteration %zu: gem %.17g, gd %.17g", t, trace_a[t], trace_b[t]);
    /* The objective moved: the comparison is not between two idle runs. */
    ck_assert_msg(trace_a[25] > trace_a[0] + 1e-3 * fabs(trace_a[0]), "%.6f -> %.6f",
                  trace_a[0], trace_a[25]);
    assert_same_parameters(a, b, 1e-12);
    ck_assert_int_eq((int)report_of(gem).gradient_evaluations, 25);
    ck_assert_int_eq((int)report_of(gd).gradient_evaluations, 25);
    free(trace_a);
    free(trace_b);
    moe_model_free(a);
    moe_model_free(b);
    moe_fitter_free(gem);
    moe_fitter_free(gd);
    problem_free(&pr);
}

START_TEST(gem_with_equal_steps_is_gd)
{
    check_gem_is_gd(MOE_FAMILY_GAUSSIAN, 0.05);
    check_gem_is_gd(MOE_FAMILY_LOGISTIC, 0.5);
    check_gem_is_gd(MOE_FAMILY_MULTINOMIAL, 0.5);
}
END_TEST

START_TEST(gem_differs_from_gd_with_unequal_steps)
{
    /* The control for the test above: per-block steps do change the iterates. */
    problem pr = problem_make(MOE_FAMILY_LOGISTIC, 400, 12);
    moe_fitter_t *gem = stepping_fitter("gem", 10), *gd = stepping_fitter("gd", 10);
    EXPECT_STATUS(moe_fitter_set_double(gem, MOE_OPT_STEP, 0.5), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(gem, MOE_OPT_GATE_STEP, 1.0), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(gd, MOE_OPT_STEP, 0.5), MOE_OK);
    moe_model_t *a = fit_from_start(&pr, gem, MOE_OK), *b = fit_from_start(&pr, gd, MOE_OK);
    ck_assert(fabs(report_of(gem).loglik - report_of(gd).loglik) > 1e-6);
    moe_model_free(a);
    moe_model_free(b);
    moe_fitter_free(gem);
    moe_fitter_free(gd);
    problem_free(&pr);
}
END_TEST

START_TEST(safe_default_steps_never_increase_the_objective)
{
    const char *estimators[] = {"gd", "gem"};
    for (int family = MOE_FAMILY_GAUSSIAN; family <= MOE_FAMILY_MULTINOMIAL; ++family)
        for (size_t e = 0; e < 2; ++e) {
            problem pr = problem_make((moe_family)family, 500, 30 + (uint64_t)family);
            moe_fitter_t *fitter = stepping_fitter(estimators[e], 150);
            /* The Gaussian log-variance step is not covered by the curvature bound: keep
               the variances fixed for this check. */
            EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_UPDATE_VARIANCE, 0), MOE_OK);
            EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_GATE_L2, 0.01), MOE_OK);
            moe_model_t *model = fit_from_start(&pr, fitter, MOE_OK);
            moe_fit_report report = report_of(fitter);
            ck_assert_msg(report.monotonicity_violations == 0,
                          "%s family %d: %zu violations (worst %.3g)", estimators[e], family,
                          report.monotonicity_violations, report.worst_relative_decrease);
            ck_assert(report.step > 0.0);
            size_t length = 0;
            double *trace = trace_of(fitter, &length);
            ck_assert_msg(trace[length - 1] > trace[0], "%s family %d made no progress",
                          estimators[e], family);
            /* Fixed variances stay as the model had them. */
            if (family == MOE_FAMILY_GAUSSIAN) {
                double variances[2];
                EXPECT_STATUS(moe_model_get_variances(model, variances, 2), MOE_OK);
                ck_assert(fmin(variances[0], variances[1]) == 0.7 &&
                          fmax(variances[0], variances[1]) == 1.5);
            }
            free(trace);
            moe_model_free(model);
            moe_fitter_free(fitter);
            problem_free(&pr);
        }
}
END_TEST

START_TEST(default_gd_step_is_the_smallest_safe_block_step)
{
    /* No intercept, one feature: lambda = mean(x^2). Unit variances: the Gaussian experts'
       bound 1/lambda is below the two-expert gate's 4/lambda. */
    const size_t n = 200;
    double X[200], y[200], squares = 0.0;
    test_rng rng = {4};
    for (size_t i = 0; i < n; ++i) {
        X[i] = 2.0 * test_normal(&rng);
        y[i] = X[i] + test_normal(&rng);
        squares += X[i] * X[i];
    }
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.intercept = 0;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    double experts[2] = {0.5, -0.5};
    EXPECT_STATUS(moe_model_set_experts(model, experts, 2), MOE_OK);
    moe_fitter_t *fitter = stepping_fitter("gd", 3);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_UPDATE_VARIANCE, 0), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, 1, y, NULL), MOE_OK);
    double lambda = squares / (double)n;
    ck_assert_double_eq_tol(report_of(fitter).step, 1.0 / lambda, 1e-12 / lambda);
    moe_fitter_free(fitter);
    fitter = stepping_fitter("gem", 3);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_UPDATE_VARIANCE, 0), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, 1, y, NULL), MOE_OK);
    ck_assert_double_eq_tol(report_of(fitter).step, 1.0 / lambda, 1e-12 / lambda);
    ck_assert_double_eq_tol(report_of(fitter).gate_step, 4.0 / lambda, 1e-12 / lambda);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(armijo_rescues_a_step_far_too_large)
{
    problem pr = problem_make(MOE_FAMILY_GAUSSIAN, 500, 40);
    moe_fitter_t *plain = stepping_fitter("gd", 30), *armijo = stepping_fitter("gd", 30);
    EXPECT_STATUS(moe_fitter_set_double(plain, MOE_OPT_STEP, 20.0), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(armijo, MOE_OPT_STEP, 20.0), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(armijo, "line_search", "armijo"), MOE_OK);
    moe_model_t *model = fit_from_start(&pr, armijo, MOE_OK);
    moe_fit_report report = report_of(armijo);
    ck_assert_int_eq((int)report.monotonicity_violations, 0);
    size_t length = 0;
    double *trace = trace_of(armijo, &length);
    ck_assert(trace[length - 1] > trace[0]);
    /* Without the line search the same step diverges or oscillates. */
    moe_model_t *other = NULL;
    EXPECT_STATUS(moe_model_clone(&other, pr.start), MOE_OK);
    moe_status status = moe_fitter_fit(plain, other, pr.n, pr.X, pr.d, pr.y, NULL);
    moe_fit_report plain_report = report_of(plain);
    ck_assert_msg(status != MOE_OK || plain_report.monotonicity_violations > 0,
                  "the plain step of 20 behaved: the control does not control anything");
    free(trace);
    moe_model_free(model);
    moe_model_free(other);
    moe_fitter_free(plain);
    moe_fitter_free(armijo);
    problem_free(&pr);
}
END_TEST

static double mini_batch_fit(const problem *pr, long long seed, double *gate_out)
{
    moe_fitter_t *fitter = stepping_fitter("gd", 20);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_BATCH_SIZE, 64), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, seed), MOE_OK);
    moe_model_t *model = fit_from_start(pr, fitter, MOE_OK);
    moe_fit_report report = report_of(fitter);
    ck_assert_int_eq((int)report.iterations, 20);
    ck_assert_int_eq((int)report.gradient_evaluations, 20); /* one pass over the data each */
    EXPECT_STATUS(moe_model_get_gate(model, gate_out, 6), MOE_OK);
    moe_model_free(model);
    moe_fitter_free(fitter);
    return report.loglik;
}

START_TEST(mini_batches_are_seeded_and_make_progress)
{
    problem pr = problem_make(MOE_FAMILY_LOGISTIC, 1000, 50);
    double gate_a[6], gate_b[6], gate_c[6];
    double a = mini_batch_fit(&pr, 1, gate_a), b = mini_batch_fit(&pr, 1, gate_b);
    double c = mini_batch_fit(&pr, 2, gate_c);
    ck_assert(memcmp(gate_a, gate_b, sizeof gate_a) == 0 && a == b);
    ck_assert(memcmp(gate_a, gate_c, sizeof gate_a) != 0);
    /* Both runs improve on the start by more than the noise between them. */
    double start = 0.0;
    EXPECT_STATUS(moe_model_loglik(pr.start, pr.n, pr.X, pr.d, pr.y, NULL, &start), MOE_OK);
    ck_assert_msg(a - start > 5.0 * fabs(a - c) && c - start > 5.0 * fabs(a - c),
                  "start %.4f, seeds 1 and 2: %.4f, %.4f", start, a, c);
    problem_free(&pr);
}
END_TEST

START_TEST(gradient_estimators_reach_the_em_optimum)
{
    problem pr = problem_make(MOE_FAMILY_GAUSSIAN, 2000, 60);
    moe_fitter_t *em = stepping_fitter("em", 500);
    EXPECT_STATUS(moe_fitter_set_double(em, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    moe_model_t *reference = fit_from_start(&pr, em, MOE_OK);
    double best = report_of(em).loglik;
    const char *estimators[] = {"gd", "gem"};
    for (size_t e = 0; e < 2; ++e) {
        moe_fitter_t *fitter = stepping_fitter(estimators[e], 3000);
        EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-13), MOE_OK);
        if (e == 0)
            EXPECT_STATUS(moe_fitter_set_option(fitter, "line_search", "armijo"), MOE_OK);
        moe_model_t *model = fit_from_start(&pr, fitter, MOE_OK);
        double loglik = report_of(fitter).loglik;
        ck_assert_msg(fabs(loglik - best) <= 1e-6 * fabs(best), "%s: %.8f vs em %.8f",
                      estimators[e], loglik, best);
        assert_same_parameters(model, reference, 2e-3);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    moe_model_free(reference);
    moe_fitter_free(em);
    problem_free(&pr);
}
END_TEST

START_TEST(em_with_the_bound_gate_is_monotone_and_reaches_the_optimum)
{
    problem pr = problem_make(MOE_FAMILY_GAUSSIAN, 3000, 80);
    moe_fitter_t *newton = stepping_fitter("em", 2000), *bound = stepping_fitter("em", 2000);
    EXPECT_STATUS(moe_fitter_set_double(newton, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(bound, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(bound, "gate_solver", "bound"), MOE_OK);
    moe_model_t *a = fit_from_start(&pr, newton, MOE_OK), *b = fit_from_start(&pr, bound, MOE_OK);
    moe_fit_report ra = report_of(newton), rb = report_of(bound);
    ck_assert_int_eq((int)rb.monotonicity_violations, 0);
    ck_assert_int_eq(rb.converged, 1);
    ck_assert_msg(fabs(ra.loglik - rb.loglik) <= 1e-7 * fabs(ra.loglik), "newton %.8f, bound %.8f",
                  ra.loglik, rb.loglik);
    assert_same_parameters(a, b, 1e-3);
    moe_model_free(a);
    moe_model_free(b);
    moe_fitter_free(newton);
    moe_fitter_free(bound);
    problem_free(&pr);
}
END_TEST

START_TEST(options_belong_to_their_estimators)
{
    moe_fitter_t *em = NULL, *gem = NULL, *gd = NULL;
    EXPECT_STATUS(moe_fitter_create(&em, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_create(&gem, "gem"), MOE_OK);
    EXPECT_STATUS(moe_fitter_create(&gd, "gd"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(em, MOE_OPT_BATCH_SIZE, 10), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_int(em, MOE_OPT_LINE_SEARCH, 1), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_int(em, MOE_OPT_INNER_STEPS, 3), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(gem, MOE_OPT_INNER_STEPS, 3), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_int(gem, MOE_OPT_BATCH_SIZE, 10), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_double(gem, MOE_OPT_GATE_STEP, 0.1), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(gd, MOE_OPT_GATE_STEP, 0.1), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_int(gd, MOE_OPT_INNER_STEPS, 3), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_option(gd, "line_search", "armijo"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(gd, "line_search", "wolfe"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_double(gd, MOE_OPT_STEP, -1.0), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_double(gd, MOE_OPT_STEP, NAN), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(moe_fitter_estimator_name(gem), "gem");
    ck_assert_str_eq(moe_fitter_estimator_name(gd), "gd");
    moe_fitter_free(em);
    moe_fitter_free(gem);
    moe_fitter_free(gd);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("gradient_estimators");
    TCase *identity = tcase_create("identity");
    tcase_add_test(identity, gem_with_equal_steps_is_gd);
    tcase_add_test(identity, gem_differs_from_gd_with_unequal_steps);
    suite_add_tcase(suite, identity);
    TCase *steps = tcase_create("steps");
    tcase_set_timeout(steps, 60);
    tcase_add_test(steps, safe_default_steps_never_increase_the_objective);
    tcase_add_test(steps, default_gd_step_is_the_smallest_safe_block_step);
    tcase_add_test(steps, armijo_rescues_a_step_far_too_large);
    tcase_add_test(steps, mini_batches_are_seeded_and_make_progress);
    tcase_add_test(steps, gradient_estimators_reach_the_em_optimum);
    tcase_add_test(steps, em_with_the_bound_gate_is_monotone_and_reaches_the_optimum);
    suite_add_tcase(suite, steps);
    TCase *options = tcase_create("options");
    tcase_add_test(options, options_belong_to_their_estimators);
    suite_add_tcase(suite, options);
    return run_suite(suite);
}
