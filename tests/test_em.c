/* EM on Gaussian experts: recovery of known truth, monotonicity, determinism, robustness. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "support/synthetic.h"
#include "support/runner.h"

static moe_model_t *new_model(size_t K, size_t d)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

static moe_model_t *truth_model(const synthetic_truth *truth)
{
    size_t K = truth->n_experts, p = truth->n_features + 1;
    moe_model_t *model = new_model(K, truth->n_features);
    ck_assert_int_eq(moe_model_set_gate(model, truth->gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, truth->experts, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(model, truth->variances, K), MOE_OK);
    return model;
}

static moe_fit_report get_report(const moe_fitter_t *fitter)
{
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    return report;
}

START_TEST(recovers_known_parameters)
{
    const size_t K = 3, d = 5, n = 20000, p = d + 1;
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, K, d, 4.0, 1.5, 7);
    synthetic_data_make(&data, &truth, n, 11);
    moe_model_t *model = new_model(K, d);
    moe_model_t *reference = truth_model(&truth);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_SEED, 3), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, n, data.X, d, data.y, NULL), MOE_OK);
    moe_fit_report report = get_report(fitter);

    double gate[3 * 6], experts[3 * 6], variances[3];
    ck_assert_int_eq(moe_model_get_gate(model, gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_get_experts(model, experts, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_get_variances(model, variances, K), MOE_OK);
    size_t perm[3];
    synthetic_align(K, p, truth.experts, experts, perm);
    double expert_error = 0.0, gate_error = 0.0, variance_error = 0.0;
    for (size_t k = 0; k < K; ++k) {
        for (size_t j = 0; j < p; ++j) {
            expert_error = fmax(expert_error, fabs(experts[perm[k] * p + j] - truth.experts[k * p + j]));
            /* Gates are identified up to a common shift: compare differences to the
               expert that is the reference in the truth. */
            double fitted = gate[perm[k] * p + j] - gate[perm[K - 1] * p + j];
            double expected = truth.gate[k * p + j] - truth.gate[(K - 1) * p + j];
            gate_error = fmax(gate_error, fabs(fitted - expected));
        }
        variance_error = fmax(variance_error, fabs(variances[perm[k]] / truth.variances[k] - 1.0));
    }
    double loglik_truth, loglik_fit;
    ck_assert_int_eq(moe_model_loglik(reference, n, data.X, d, data.y, NULL, &loglik_truth), MOE_OK);
    ck_assert_int_eq(moe_model_loglik(model, n, data.X, d, data.y, NULL, &loglik_fit), MOE_OK);
    printf("recovery K=3 d=5 n=20000: max|expert err| %.4f, max|gate err| %.4f, "
           "max rel variance err %.4f, loglik fit %.4f truth %.4f, %zu iterations, %.3f s\n",
           expert_error, gate_error, variance_error, loglik_fit, loglik_truth, report.iterations,
           report.seconds);
    ck_assert(report.converged);
    ck_assert_double_lt(expert_error, 0.08);
    ck_assert_double_lt(gate_error, 0.25);
    ck_assert_double_lt(variance_error, 0.1);
    /* The MLE cannot be worse than the truth on its own data. */
    ck_assert_double_ge(loglik_fit, loglik_truth - 1e-6 * fabs(loglik_truth));
    ck_assert_double_eq_tol(report.loglik, loglik_fit, 1e-9 * fabs(loglik_fit));
    moe_fitter_free(fitter);
    moe_model_free(model);
    moe_model_free(reference);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

START_TEST(never_decreases_loglik)
{
    size_t fits = 0, steps = 0, violations = 0;
    double worst = 0.0;
    for (unsigned seed = 1; seed <= 48; ++seed) {
        size_t K = 2 + seed % 3, d = 1 + seed % 4, n = 300 + 37 * seed, p = d + 1;
        synthetic_truth truth;
        synthetic_data data;
        synthetic_truth_make(&truth, K, d, 1.0 + (seed % 5), 2.0, 100 + seed);
        synthetic_data_make(&data, &truth, n, 200 + seed);
        moe_model_t *model = new_model(K, d);
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, seed), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 150), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
        long long init = seed % 2 ? MOE_INIT_RANDOM : MOE_INIT_KMEANS;
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, init), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, n, data.X, d, data.y, NULL), MOE_OK);
        size_t length = 0;
        EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
        double *trace = malloc(length * sizeof(double));
        EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, length, &length), MOE_OK);
        for (size_t t = 1; t < length; ++t) {
            double relative = (trace[t - 1] - trace[t]) / fabs(trace[t - 1]);
            if (relative > worst)
                worst = relative;
            violations += relative > 1e-10;
            ++steps;
        }
        moe_fit_report report = get_report(fitter);
        ck_assert_uint_eq(report.monotonicity_violations, 0);
        ck_assert_uint_eq(length, report.iterations + 1);
        ++fits;
        free(trace);
        moe_fitter_free(fitter);
        moe_model_free(model);
        synthetic_data_free(&data);
        synthetic_truth_free(&truth);
        (void)p;
    }
    printf("monotonicity: %zu fits, %zu EM iterations, %zu violations, worst relative "
           "decrease %.3g (positive means a decrease)\n",
           fits, steps, violations, worst);
    ck_assert_uint_eq(violations, 0);
}
END_TEST

/* The penalised objective of the fitters' documentation, computed here from the model's
   parameters without the library's penalty code. */
static double penalised_objective(const moe_model_t *model, const synthetic_data *data,
                                  double gate_l2, double expert_ridge)
{
    size_t K = moe_model_n_experts(model), d = data->n_features, p = d + 1;
    double gate[4 * 3], experts[4 * 3], loglik;
    ck_assert_uint_le(K * p, 12);
    ck_assert_int_eq(moe_model_get_gate(model, gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_get_experts(model, experts, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_loglik(model, data->n, data->X, d, data->y, NULL, &loglik), MOE_OK);
    double gate_sum = 0.0, expert_sum = 0.0;
    for (size_t j = 1; j < p; ++j) {
        double mean = 0.0;
        for (size_t k = 0; k < K; ++k)
            mean += gate[k * p + j] / (double)K;
        for (size_t k = 0; k < K; ++k) {
            gate_sum += (gate[k * p + j] - mean) * (gate[k * p + j] - mean);
            expert_sum += experts[k * p + j] * experts[k * p + j];
        }
    }
    return loglik - (double)data->n * (0.5 * gate_l2 * gate_sum + 0.5 * expert_ridge * expert_sum);
}

/* With both penalties on, the objective evaluated independently after 1, 2, ... EM
   iterations from one start never decreases, and the library sees no violation either. */
START_TEST(penalised_objective_never_decreases)
{
    const double gate_l2 = 0.05, expert_ridge = 0.02;
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 3, 2, 2.0, 3.0, 5);
    synthetic_data_make(&data, &truth, 800, 6);
    moe_model_t *start = new_model(3, 2);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "gate_l2", "0.05"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "expert_ridge", "0.02"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "init", "random"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 1), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, start, data.n, data.X, 2, data.y, NULL), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "init", "model"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0), MOE_OK);
    double previous = penalised_objective(start, &data, gate_l2, expert_ridge);
    size_t decreases = 0;
    for (long long t = 1; t <= 40; ++t) {
        moe_model_t *model = NULL;
        ck_assert_int_eq(moe_model_clone(&model, start), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, t), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, data.n, data.X, 2, data.y, NULL), MOE_OK);
        ck_assert_uint_eq(get_report(fitter).monotonicity_violations, 0);
        double current = penalised_objective(model, &data, gate_l2, expert_ridge);
        decreases += previous - current > 1e-10 * ((double)data.n + fabs(previous));
        previous = current;
        moe_model_free(model);
    }
    ck_assert_uint_eq(decreases, 0);
    /* Restarts: the library's own check over a longer run. */
    ck_assert_int_eq(moe_fitter_set_option(fitter, "init", "kmeans"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 4), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 300), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-13), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, start, data.n, data.X, 2, data.y, NULL), MOE_OK);
    ck_assert_uint_eq(get_report(fitter).monotonicity_violations, 0);
    moe_fitter_free(fitter);
    moe_model_free(start);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

/* The ridge shrinks: a single expert's penalised slope is the closed-form ridge solution
   (X'X + N ridge sigma^2 I) beta = X'y at the fitted variance, smaller than plain OLS. */
START_TEST(expert_ridge_shrinks_coefficients)
{
    const size_t n = 400;
    double X[400], y[400];
    test_rng rng = {21};
    for (size_t i = 0; i < n; ++i) {
        X[i] = test_normal(&rng);
        y[i] = 3.0 * X[i] + 0.5 * test_normal(&rng);
    }
    double slopes[2];
    for (int penalised = 0; penalised < 2; ++penalised) {
        moe_model_t *model = new_model(1, 1);
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_EXPERT_RIDGE, penalised ? 1.0 : 0.0),
                         MOE_OK);
        ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-14), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, n, X, 1, y, NULL), MOE_OK);
        double beta[2], variance;
        EXPECT_STATUS(moe_model_get_experts(model, beta, 2), MOE_OK);
        EXPECT_STATUS(moe_model_get_variances(model, &variance, 1), MOE_OK);
        slopes[penalised] = beta[1];
        /* Stationarity of the penalised objective in (intercept, slope) at the fitted
           variance: X~'(y - X~ beta) / sigma^2 = N ridge (0, slope). */
        double score0 = 0.0, score1 = 0.0;
        for (size_t i = 0; i < n; ++i) {
            double residual = y[i] - beta[0] - beta[1] * X[i];
            score0 += residual / variance;
            score1 += residual * X[i] / variance;
        }
        ck_assert_double_eq_tol(score0, 0.0, 1e-6 * (double)n);
        ck_assert_double_eq_tol(score1, (penalised ? 1.0 : 0.0) * (double)n * beta[1],
                                1e-6 * (double)n);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    ck_assert_double_gt(slopes[0], 2.8);
    ck_assert_double_lt(slopes[1], 0.5 * slopes[0]);
    ck_assert_double_gt(slopes[1], 0.0);
}
END_TEST

/* Units must not matter: the same data with one feature in 1e-7 units and one in 1e6 units
   gives the same fit, with the coefficients rescaled. */
START_TEST(feature_units_do_not_matter)
{
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 2, 2, 3.0, 2.0, 31);
    synthetic_data_make(&data, &truth, 1200, 32);
    const double unit[2] = {1e-7, 1e6};
    double *scaled = malloc(data.n * 2 * sizeof(double));
    for (size_t i = 0; i < data.n; ++i)
        for (size_t j = 0; j < 2; ++j)
            scaled[i * 2 + j] = data.X[i * 2 + j] * unit[j];
    double expert[2][6], loglik[2];
    for (int run = 0; run < 2; ++run) {
        moe_model_t *model = new_model(2, 2);
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_SEED, 4), MOE_OK);
        ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, data.n, run ? scaled : data.X, 2, data.y,
                                        NULL), MOE_OK);
        moe_fit_report report = get_report(fitter);
        ck_assert_uint_eq(report.ridge_fallbacks, 0);
        loglik[run] = report.loglik;
        EXPECT_STATUS(moe_model_get_experts(model, expert[run], 6), MOE_OK);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    ck_assert_double_eq_tol(loglik[1], loglik[0], 1e-6 * fabs(loglik[0]));
    for (size_t k = 0; k < 2; ++k) {
        ck_assert_double_eq_tol(expert[1][k * 3], expert[0][k * 3], 1e-5);
        for (size_t j = 0; j < 2; ++j)
            ck_assert_double_eq_tol(expert[1][k * 3 + 1 + j] * unit[j], expert[0][k * 3 + 1 + j],
                                    1e-5);
    }
    free(scaled);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

static void fit_parameters(uint64_t seed, const synthetic_data *data, size_t K, double *out)
{
    size_t d = data->n_features, p = d + 1;
    moe_model_t *model = new_model(K, d);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_SEED, (long long)seed), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 3), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, data->n, data->X, d, data->y, NULL), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(model, out, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, out + K * p, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, out + 2 * K * p, K), MOE_OK);
    moe_fitter_free(fitter);
    moe_model_free(model);
}

START_TEST(same_seed_same_result_bit_for_bit)
{
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 3, 3, 2.0, 1.0, 21);
    synthetic_data_make(&data, &truth, 3000, 22);
    size_t size = 3 * 4 * 2 + 3;
    double first[27], second[27];
    fit_parameters(99, &data, 3, first);
    fit_parameters(99, &data, 3, second);
    ck_assert_int_eq(memcmp(first, second, size * sizeof(double)), 0);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

START_TEST(experts_in_canonical_order)
{
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 4, 1, 3.0, 1.0, 31);
    synthetic_data_make(&data, &truth, 4000, 32);
    moe_model_t *model = new_model(4, 1);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, data.n, data.X, 1, data.y, NULL), MOE_OK);
    double experts[8], gate[8];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 8), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(model, gate, 8), MOE_OK);
    for (size_t k = 1; k < 4; ++k)
        ck_assert_double_le(experts[(k - 1) * 2], experts[k * 2]);
    ck_assert_double_eq(gate[6], 0.0);
    ck_assert_double_eq(gate[7], 0.0);
    moe_fitter_free(fitter);
    moe_model_free(model);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

START_TEST(starts_from_model_parameters)
{
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 3, 2, 3.0, 1.0, 41);
    synthetic_data_make(&data, &truth, 5000, 42);
    moe_model_t *model = truth_model(&truth);
    double loglik_truth;
    EXPECT_STATUS(moe_model_loglik(model, data.n, data.X, 2, data.y, NULL, &loglik_truth), MOE_OK);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "init", "model"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, data.n, data.X, 2, data.y, NULL), MOE_OK);
    size_t length = 0;
    ck_assert_int_eq(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
    double *trace = malloc((length + 1) * sizeof(double));
    ck_assert_ptr_nonnull(trace);
    ck_assert_int_eq(moe_fitter_get_trace(fitter, trace, length, &length), MOE_OK);
    ck_assert_uint_ge(length, 1);
    /* The trace starts exactly at the caller's parameters. */
    ck_assert_double_eq_tol(trace[0], loglik_truth, 1e-9 * fabs(loglik_truth));
    free(trace);
    moe_fit_report report = get_report(fitter);
    ck_assert(report.converged);
    ck_assert_double_ge(report.loglik, loglik_truth);
    moe_fitter_free(fitter);
    moe_model_free(model);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

static int all_finite(const moe_model_t *model)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    double values[64];
    EXPECT_STATUS(moe_model_get_gate(model, values, 64), MOE_OK);
    for (size_t i = 0; i < K * p; ++i)
        if (!isfinite(values[i]))
            return 0;
    EXPECT_STATUS(moe_model_get_experts(model, values, 64), MOE_OK);
    for (size_t i = 0; i < K * p; ++i)
        if (!isfinite(values[i]))
            return 0;
    EXPECT_STATUS(moe_model_get_variances(model, values, 64), MOE_OK);
    for (size_t k = 0; k < K; ++k)
        if (!isfinite(values[k]) || !(values[k] > 0.0))
            return 0;
    return 1;
}

START_TEST(too_many_experts_stay_finite)
{
    /* One true line fitted with six experts: most have nothing to explain. */
    const size_t n = 400;
    double *X = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    test_rng rng = {77};
    for (size_t i = 0; i < n; ++i) {
        X[i] = test_normal(&rng);
        y[i] = 2.0 * X[i] + 0.1 * test_normal(&rng);
    }
    moe_model_t *model = new_model(6, 1);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    for (int init = MOE_INIT_RANDOM; init <= MOE_INIT_KMEANS; ++init) {
        ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_INIT, init), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, n, X, 1, y, NULL), MOE_OK);
        ck_assert(all_finite(model));
        double loglik;
        ck_assert_int_eq(moe_model_loglik(model, n, X, 1, y, NULL, &loglik), MOE_OK);
        ck_assert(isfinite(loglik));
        ck_assert_uint_eq(get_report(fitter).monotonicity_violations, 0);
    }
    moe_fitter_free(fitter);
    moe_model_free(model);
    free(X);
    free(y);
}
END_TEST

START_TEST(exact_fit_hits_variance_floor_not_nan)
{
    /* Two noiseless lines: variances collapse to the floor, never to zero or NaN. */
    const size_t n = 200;
    double X[200], y[200];
    for (size_t i = 0; i < n; ++i) {
        X[i] = (double)i / 50.0 - 2.0;
        y[i] = i % 2 ? 1.0 + X[i] : -1.0 - 2.0 * X[i];
    }
    moe_model_t *model = new_model(2, 1);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    moe_status status = moe_fitter_fit(fitter, model, n, X, 1, y, NULL);
    ck_assert_int_eq(status, MOE_OK);
    ck_assert(all_finite(model));
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(single_expert_is_least_squares)
{
    const size_t n = 500;
    double X[1000], y[500];
    test_rng rng = {5};
    double sxx[9] = {0}, sxy[3] = {0};
    for (size_t i = 0; i < n; ++i) {
        X[2 * i] = test_normal(&rng);
        X[2 * i + 1] = test_normal(&rng);
        y[i] = 1.0 + 2.0 * X[2 * i] - 3.0 * X[2 * i + 1] + test_normal(&rng);
        double row[3] = {1.0, X[2 * i], X[2 * i + 1]};
        for (int a = 0; a < 3; ++a) {
            sxy[a] += row[a] * y[i];
            for (int b = 0; b < 3; ++b)
                sxx[a * 3 + b] += row[a] * row[b];
        }
    }
    /* Solve the 3x3 normal equations by Cramer's rule, independent of the library. */
    double det = sxx[0] * (sxx[4] * sxx[8] - sxx[5] * sxx[7]) -
                 sxx[1] * (sxx[3] * sxx[8] - sxx[5] * sxx[6]) +
                 sxx[2] * (sxx[3] * sxx[7] - sxx[4] * sxx[6]);
    double expected[3];
    for (int c = 0; c < 3; ++c) {
        double m[9];
        memcpy(m, sxx, sizeof m);
        for (int r = 0; r < 3; ++r)
            m[r * 3 + c] = sxy[r];
        expected[c] = (m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                       m[2] * (m[3] * m[7] - m[4] * m[6])) / det;
    }
    moe_model_t *model = new_model(1, 2);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, n, X, 2, y, NULL), MOE_OK);
    double beta[3];
    EXPECT_STATUS(moe_model_get_experts(model, beta, 3), MOE_OK);
    for (int j = 0; j < 3; ++j)
        ck_assert_double_eq_tol(beta[j], expected[j], 1e-9);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(weights_act_as_frequencies)
{
    /* Weight 2 on every odd row equals duplicating the odd rows, from the same start. */
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 2, 2, 3.0, 1.0, 51);
    synthetic_data_make(&data, &truth, 600, 52);
    size_t n = data.n, extra = n / 2;
    double *weights = malloc(n * sizeof(double));
    double *X2 = malloc((n + extra) * 2 * sizeof(double)), *y2 = malloc((n + extra) * sizeof(double));
    memcpy(X2, data.X, n * 2 * sizeof(double));
    memcpy(y2, data.y, n * sizeof(double));
    size_t m = n;
    for (size_t i = 0; i < n; ++i) {
        weights[i] = i % 2 ? 2.0 : 1.0;
        if (i % 2) {
            X2[2 * m] = data.X[2 * i];
            X2[2 * m + 1] = data.X[2 * i + 1];
            y2[m++] = data.y[i];
        }
    }
    moe_model_t *start = truth_model(&truth), *a = NULL, *b = NULL;
    EXPECT_STATUS(moe_model_clone(&a, start), MOE_OK);
    EXPECT_STATUS(moe_model_clone(&b, start), MOE_OK);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-13), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, a, n, data.X, 2, data.y, weights), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, b, m, X2, 2, y2, NULL), MOE_OK);
    double pa[6], pb[6];
    EXPECT_STATUS(moe_model_get_experts(a, pa, 6), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(b, pb, 6), MOE_OK);
    for (int j = 0; j < 6; ++j)
        ck_assert_double_eq_tol(pa[j], pb[j], 1e-6);
    double la, lb;
    EXPECT_STATUS(moe_model_loglik(a, n, data.X, 2, data.y, weights, &la), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(a, m, X2, 2, y2, NULL, &lb), MOE_OK);
    ck_assert_double_eq_tol(la, lb, 1e-9 * fabs(la));
    moe_fitter_free(fitter);
    moe_model_free(start);
    moe_model_free(a);
    moe_model_free(b);
    free(weights);
    free(X2);
    free(y2);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

START_TEST(restarts_keep_the_best)
{
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 4, 2, 1.5, 2.0, 61);
    synthetic_data_make(&data, &truth, 1500, 62);
    moe_model_t *model = new_model(4, 2);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_RANDOM), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 6), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, data.n, data.X, 2, data.y, NULL), MOE_OK);
    moe_fit_report best = get_report(fitter);
    ck_assert_uint_eq(best.n_restarts, 6);
    /* Restart r uses its own stream whatever n_init is, so the best log-likelihood over
       the first r restarts can only grow with r, and all six reach the winner. */
    double previous = -INFINITY;
    for (long long r = 1; r <= 6; ++r) {
        moe_model_t *fewer = new_model(4, 2);
        moe_fitter_t *one = NULL;
        EXPECT_STATUS(moe_fitter_create(&one, "em"), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(one, MOE_OPT_INIT, MOE_INIT_RANDOM), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(one, MOE_OPT_N_INIT, r), MOE_OK);
        ck_assert_int_eq(moe_fitter_fit(one, fewer, data.n, data.X, 2, data.y, NULL), MOE_OK);
        double loglik = get_report(one).loglik;
        ck_assert_double_ge(loglik, previous);
        ck_assert_double_le(loglik, best.loglik);
        previous = loglik;
        moe_fitter_free(one);
        moe_model_free(fewer);
    }
    ck_assert_double_eq(previous, best.loglik);
    moe_fitter_free(fitter);
    moe_model_free(model);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

static Suite *em_suite(void)
{
    Suite *suite = suite_create("em");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, recovers_known_parameters);
    tcase_add_test(core, never_decreases_loglik);
    tcase_add_test(core, penalised_objective_never_decreases);
    tcase_add_test(core, expert_ridge_shrinks_coefficients);
    tcase_add_test(core, feature_units_do_not_matter);
    tcase_add_test(core, same_seed_same_result_bit_for_bit);
    tcase_add_test(core, experts_in_canonical_order);
    tcase_add_test(core, starts_from_model_parameters);
    tcase_add_test(core, too_many_experts_stay_finite);
    tcase_add_test(core, exact_fit_hits_variance_floor_not_nan);
    tcase_add_test(core, single_expert_is_least_squares);
    tcase_add_test(core, weights_act_as_frequencies);
    tcase_add_test(core, restarts_keep_the_best);
    suite_add_tcase(suite, core);
    return suite;
}

int main(void)
{
    return run_suite(em_suite());
}
