/*
 * EM's one pass per iteration and the threads option: one fitted iteration equals an
 * E-step and M-step computed separately with the kernels it replaces; results do not
 * depend on the thread count; the three gate solvers are monotone and reach the same
 * optimum.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/data.h"
#include "model/family.h"
#include "pass/gate.h"
#include "model/model_impl.h"
#include "pass/posterior.h"
#include "support/labels.h"
#include "support/runner.h"
#include "support/synthetic.h"

/* More rows than one chunk (common/parallel.h), so that threads share the work. */
enum { N = 9000, D = 3, K = 3, P = D + 1 };

typedef struct fixture {
    synthetic_truth truth;
    synthetic_data data;
    moe_model_t *start; /* the truth, perturbed: where the fits begin */
} fixture;

static void fixture_make(fixture *f, uint64_t seed)
{
    synthetic_truth_make(&f->truth, K, D, 2.0, 1.5, seed);
    synthetic_data_make(&f->data, &f->truth, N, seed + 1);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    ck_assert_int_eq(moe_model_create(&f->start, &spec), MOE_OK);
    test_rng rng = {seed + 2};
    double gate[K * P], experts[K * P], variances[K];
    for (size_t a = 0; a < K * P; ++a) {
        gate[a] = f->truth.gate[a] + 0.4 * test_normal(&rng);
        experts[a] = f->truth.experts[a] + 0.3 * test_normal(&rng);
    }
    for (size_t k = 0; k < K; ++k)
        variances[k] = f->truth.variances[k] * (1.0 + 0.5 * test_uniform(&rng));
    ck_assert_int_eq(moe_model_set_gate(f->start, gate, K * P), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(f->start, experts, K * P), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(f->start, variances, K), MOE_OK);
}

static void fixture_free(fixture *f)
{
    moe_model_free(f->start);
    synthetic_data_free(&f->data);
    synthetic_truth_free(&f->truth);
}

static moe_fitter_t *em_from_start(const char *solver, size_t max_iter, double tolerance)
{
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "gate_solver", solver), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, (long long)max_iter), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, tolerance), MOE_OK);
    return fitter;
}

static double relative_gap(const double *a, const double *b, size_t count)
{
    double gap = 0.0;
    for (size_t i = 0; i < count; ++i) {
        double relative = fabs(a[i] - b[i]) / (1.0 + fabs(b[i]));
        if (relative > gap)
            gap = relative;
    }
    return gap;
}

/*
 * One iteration from the start, by the separate kernels: the E-step, the Gaussian M-step
 * and the gate's Newton solver with max_newton steps (1: newton_step; many: the exact
 * M-step), all to a tight gate tolerance.
 */
static void reference_iteration(const fixture *f, size_t max_newton, struct moe_model *out)
{
    moe_data data = {N, D, D, 1, f->data.X, f->data.y, NULL};
    double *resp = malloc(N * K * sizeof(double));
    moe_posterior_result posterior;
    ck_assert_int_eq(moe_posterior_pass(out, &data, resp, 1, &posterior, NULL), MOE_OK);
    double mean = 0.0, variance = 0.0;
    for (size_t i = 0; i < N; ++i)
        mean += f->data.y[i] / N;
    for (size_t i = 0; i < N; ++i)
        variance += (f->data.y[i] - mean) * (f->data.y[i] - mean) / N;
    moe_expert_mstep_options options = {0.0, N, 1e-6 * variance, 1e-6 * N, 1, 0, 0.0, 25,
                                        1e-10, 1, 0};
    moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
    ck_assert_int_eq(out->family_ops->m_step(out, &data, resp, &options, &report, NULL), MOE_OK);
    moe_gate_options gate = {0.0, max_newton, 1e-14, 1, NULL};
    moe_gate_report gate_report = MOE_GATE_REPORT_INIT;
    ck_assert_int_eq(moe_gate_newton(out, &data, resp, &gate, &gate_report, NULL), MOE_OK);
    ck_assert_int_eq(moe_model_canonicalize(out), MOE_OK);
    free(resp);
}

START_TEST(one_iteration_is_an_em_step)
{
    const char *solvers[] = {"newton_step", "newton"};
    const size_t newton_steps[] = {1, 100};
    const double tolerances[] = {1e-9, 1e-6}; /* two Newton solves to 1e-14 agree to ~1e-7 */
    for (size_t s = 0; s < 2; ++s) {
        fixture f;
        fixture_make(&f, 40 + s);
        moe_fitter_t *fitter = em_from_start(solvers[s], 1, 0.0);
        ck_assert_int_eq(moe_fitter_set_option(fitter, "gate_tol", "1e-14"), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_GATE_MAX_NEWTON, 100), MOE_OK);
        moe_model_t *fitted = NULL;
        ck_assert_int_eq(moe_model_clone(&fitted, f.start), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(fitter, fitted, N, f.data.X, D, f.data.y, NULL), MOE_OK);
        moe_model_t *reference = NULL;
        ck_assert_int_eq(moe_model_clone(&reference, f.start), MOE_OK);
        reference_iteration(&f, newton_steps[s], reference);
        double gate = relative_gap(fitted->gate, reference->gate, K * P);
        double experts = relative_gap(fitted->experts, reference->experts, K * P);
        double variances = relative_gap(fitted->variances, reference->variances, K);
        printf("one iteration, %s: gaps gate %.2e experts %.2e variances %.2e\n", solvers[s],
               gate, experts, variances);
        ck_assert_msg(gate < tolerances[s], "%s: gate differs by %g", solvers[s], gate);
        ck_assert_msg(experts < 1e-10 && variances < 1e-10, "%s: experts differ (%g, %g)",
                      solvers[s], experts, variances);
        /* The start really moved: the comparison is not of two copies of it. */
        ck_assert(relative_gap(fitted->gate, f.start->gate, K * P) > 1e-3);
        moe_model_free(reference);
        moe_model_free(fitted);
        moe_fitter_free(fitter);
        fixture_free(&f);
    }
}
END_TEST

static void fit_with_threads(const fixture *f, const char *estimator, const char *solver,
                             size_t threads, double *parameters, double *loglik)
{
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, estimator), MOE_OK);
    if (solver != NULL)
        ck_assert_int_eq(moe_fitter_set_option(fitter, "gate_solver", solver), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_THREADS, (long long)threads), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 2), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 15), MOE_OK);
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_clone(&model, f->start), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, N, f->data.X, D, f->data.y, NULL), MOE_OK);
    memcpy(parameters, model->gate, K * P * sizeof(double));
    memcpy(parameters + K * P, model->experts, K * P * sizeof(double));
    memcpy(parameters + 2 * K * P, model->variances, K * sizeof(double));
    ck_assert_int_eq(moe_model_loglik(model, N, f->data.X, D, f->data.y, NULL, loglik), MOE_OK);
    moe_model_free(model);
    moe_fitter_free(fitter);
}

START_TEST(threads_do_not_change_results)
{
    fixture f;
    fixture_make(&f, 60);
    const char *estimators[] = {"em", "em", "em", "em", "gem", "gd"};
    const char *solvers[] = {"newton_step", "newton", "bound", "hessian_free", NULL, NULL};
    enum { SIZE = 2 * K * P + K };
    for (size_t e = 0; e < 6; ++e) {
        double one[SIZE], many[SIZE], loglik_one = 0.0, loglik_many = 0.0;
        fit_with_threads(&f, estimators[e], solvers[e], 1, one, &loglik_one);
        const size_t counts[] = {2, 3, 0};
        for (size_t c = 0; c < 3; ++c) {
            fit_with_threads(&f, estimators[e], solvers[e], counts[c], many, &loglik_many);
            ck_assert_msg(memcmp(one, many, sizeof one) == 0,
                          "%s %s: parameters with %zu threads differ from 1 thread",
                          estimators[e], solvers[e] ? solvers[e] : "", counts[c]);
            ck_assert(loglik_one == loglik_many);
        }
    }
    fixture_free(&f);
}
END_TEST

/* Multinomial experts: their Newton M-steps run their own passes on the threads. */
START_TEST(threads_do_not_change_classification_fits)
{
    label_truth truth;
    label_truth_make(&truth, MOE_FAMILY_MULTINOMIAL, 3, 3, 3, 1.5, 1.5, 90);
    double *X = malloc(N * D * sizeof(double)), *y = malloc(N * sizeof(double));
    label_data_make(&truth, N, 91, X, y);
    double *first = NULL;
    size_t size = 0;
    const size_t counts[] = {1, 2, 3};
    for (size_t c = 0; c < 3; ++c) {
        moe_model_t *model = label_model_like(&truth);
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_THREADS, (long long)counts[c]),
                         MOE_OK);
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 10), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, N, X, D, y, NULL), MOE_OK);
        size = moe_gate_size(model) + moe_experts_size(model);
        double *parameters = malloc(size * sizeof(double));
        memcpy(parameters, model->gate, moe_gate_size(model) * sizeof(double));
        memcpy(parameters + moe_gate_size(model), model->experts,
               moe_experts_size(model) * sizeof(double));
        if (first == NULL)
            first = parameters;
        else {
            ck_assert_msg(memcmp(first, parameters, size * sizeof(double)) == 0,
                          "multinomial fit with %zu threads differs from 1 thread", counts[c]);
            free(parameters);
        }
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    free(first);
    free(X);
    free(y);
    label_truth_free(&truth);
}
END_TEST

START_TEST(gate_solvers_are_monotone_and_agree)
{
    for (uint64_t seed = 80; seed < 83; ++seed) {
        fixture f;
        fixture_make(&f, seed);
        const char *solvers[] = {"newton_step", "newton", "bound", "hessian_free"};
        double logliks[4];
        for (size_t s = 0; s < 4; ++s) {
            moe_fitter_t *fitter = em_from_start(solvers[s], 3000, 1e-13);
            moe_model_t *model = NULL;
            ck_assert_int_eq(moe_model_clone(&model, f.start), MOE_OK);
            ck_assert_int_eq(moe_fitter_fit(fitter, model, N, f.data.X, D, f.data.y, NULL),
                             MOE_OK);
            moe_fit_report report = MOE_FIT_REPORT_INIT;
            ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
            ck_assert_uint_eq(report.monotonicity_violations, 0);
            ck_assert_msg(report.converged, "%s did not converge", solvers[s]);
            size_t length = 0;
            EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
            double *trace = malloc(length * sizeof(double));
            EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, length, &length), MOE_OK);
            for (size_t t = 1; t < length; ++t)
                ck_assert_msg(trace[t] >= trace[t - 1] - 1e-12 * fabs(trace[t - 1]),
                              "%s: iteration %zu lowered the log-likelihood", solvers[s], t);
            logliks[s] = trace[length - 1];
            printf("seed %u %-11s %4zu iterations, loglik %.10f\n", (unsigned)seed, solvers[s],
                   report.iterations, logliks[s]);
            free(trace);
            moe_model_free(model);
            moe_fitter_free(fitter);
        }
        for (size_t s = 1; s < 4; ++s)
            ck_assert_msg(fabs(logliks[s] - logliks[0]) < 1e-8 * fabs(logliks[0]),
                          "%s ends at %.10f, newton_step at %.10f", solvers[s], logliks[s],
                          logliks[0]);
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("one_pass");
    TCase *cases = tcase_create("em");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, one_iteration_is_an_em_step);
    tcase_add_test(cases, threads_do_not_change_results);
    tcase_add_test(cases, threads_do_not_change_classification_fits);
    tcase_add_test(cases, gate_solvers_are_monotone_and_agree);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
