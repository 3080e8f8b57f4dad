/*
 * Logistic and multinomial experts through the public API: recovery of known
 * parameters, monotone EM with exact and inexact M-steps, label checks,
 * separable data, persistence, predictions and the classification helpers.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <moe/moe.h>

#include "support/labels.h"
#include "support/runner.h"
#include "support/synthetic.h"

typedef struct sample {
    size_t n, d;
    double *X, *y;
} sample;

static sample sample_make(const label_truth *truth, size_t n, uint64_t seed)
{
    sample s = {n, truth->n_features, malloc(n * truth->n_features * sizeof(double)),
                malloc(n * sizeof(double))};
    label_data_make(truth, n, seed, s.X, s.y);
    return s;
}

static void sample_free(sample *s)
{
    free(s->X);
    free(s->y);
}

static moe_fitter_t *fitter_with(const char *estimator, long long n_init, uint64_t seed)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, estimator), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, n_init), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, (long long)seed), MOE_OK);
    return fitter;
}

static moe_fit_report report_of(const moe_fitter_t *fitter)
{
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    return report;
}

/*
 * Largest error of the fitted experts and of the gate's logit differences against the
 * truth, after the best relabelling of the experts.
 */
static void recovery_errors(const label_truth *truth, const moe_model_t *model,
                            double *expert_error, double *gate_error)
{
    size_t K = truth->n_experts, p = truth->n_features + 1, block = truth->expert_rows * p;
    double *experts = malloc(K * block * sizeof(double)), *gate = malloc(K * p * sizeof(double));
    EXPECT_STATUS(moe_model_get_experts(model, experts, K * block), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(model, gate, K * p), MOE_OK);
    size_t perm[16];
    synthetic_align(K, block, truth->experts, experts, perm);
    *expert_error = 0.0;
    for (size_t k = 0; k < K; ++k)
        for (size_t a = 0; a < block; ++a)
            *expert_error = fmax(*expert_error, fabs(experts[perm[k] * block + a] -
                                                     truth->experts[k * block + a]));
    /* Gates are identified up to a common row: compare differences to the last expert. */
    *gate_error = 0.0;
    for (size_t k = 0; k + 1 < K; ++k)
        for (size_t j = 0; j < p; ++j) {
            double fitted = gate[perm[k] * p + j] - gate[perm[K - 1] * p + j];
            double true_value = truth->gate[k * p + j] - truth->gate[(K - 1) * p + j];
            *gate_error = fmax(*gate_error, fabs(fitted - true_value));
        }
    free(experts);
    free(gate);
}

/*
 * Two experts that disagree about the effect of x2, the gate choosing by x1: well separated,
 * so EM converges in tens of iterations and the estimates are close to the truth.
 */
static void well_separated_truth(label_truth *truth, moe_family family)
{
    size_t C = family == MOE_FAMILY_MULTINOMIAL ? 3 : 0;
    label_truth_make(truth, family, 2, 2, C, 0.0, 0.0, 1);
    truth->gate[1] = 3.0;
    double *e = truth->experts;
    if (family == MOE_FAMILY_LOGISTIC) {
        /* Not the mirror image [-0.5, 0, -3]: with binary y only P(y = 1 | x) is
           identified, and sigma(a) sigma(b) + sigma(-a) sigma(-b) is symmetric in a and b,
           so a mirrored truth fits as well with the roles of x1 and x2 exchanged. */
        const double values[] = {0.5, 0.0, 3.0, -1.0, 0.0, -1.0};
        memcpy(e, values, sizeof values);
    } else {
        const double values[] = {0.5, 0.0, 3.0, 0.0, 0.0, -3.0, 0.0, 0.0, 0.0,
                                 0.0, 0.0, -3.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0};
        memcpy(e, values, sizeof values);
    }
}

static void check_recovery(moe_family family, double tolerance)
{
    label_truth truth;
    well_separated_truth(&truth, family);
    sample s = sample_make(&truth, 20000, 42);
    moe_model_t *model = label_model_like(&truth);
    moe_fitter_t *fitter = fitter_with("em", 2, 7);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, s.n, s.X, s.d, s.y, NULL), MOE_OK);
    moe_fit_report report = report_of(fitter);
    ck_assert_int_eq(report.converged, 1);
    ck_assert_int_eq((int)report.monotonicity_violations, 0);
    double expert_error, gate_error;
    recovery_errors(&truth, model, &expert_error, &gate_error);
    ck_assert_msg(expert_error < tolerance && gate_error < tolerance,
                  "%s: expert error %.3f, gate error %.3f", family == MOE_FAMILY_LOGISTIC ?
                  "logistic" : "multinomial", expert_error, gate_error);
    /* The fit is at least as likely as the truth on its own training data. */
    moe_model_t *true_model = label_truth_model(&truth);
    double fitted = 0.0, true_loglik = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, s.n, s.X, s.d, s.y, NULL, &fitted), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(true_model, s.n, s.X, s.d, s.y, NULL, &true_loglik), MOE_OK);
    ck_assert_msg(fitted >= true_loglik - 1e-6 * fabs(true_loglik), "fit %.6f < truth %.6f",
                  fitted, true_loglik);
    moe_model_free(true_model);
    moe_model_free(model);
    moe_fitter_free(fitter);
    sample_free(&s);
    label_truth_free(&truth);
}

START_TEST(logistic_em_recovers_known_parameters)
{
    check_recovery(MOE_FAMILY_LOGISTIC, 0.3);
}
END_TEST

START_TEST(multinomial_em_recovers_known_parameters)
{
    check_recovery(MOE_FAMILY_MULTINOMIAL, 0.3);
}
END_TEST

START_TEST(em_never_decreases_the_objective)
{
    size_t fits = 0, iterations = 0;
    for (int family = MOE_FAMILY_LOGISTIC; family <= MOE_FAMILY_MULTINOMIAL; ++family)
        for (size_t K = 2; K <= 3; ++K)
            for (uint64_t seed = 1; seed <= 3; ++seed) {
                label_truth truth;
                label_truth_make(&truth, (moe_family)family, K, 2, 3, 1.5, 1.5, seed);
                sample s = sample_make(&truth, 600, seed + 100);
                moe_model_t *model = label_model_like(&truth);
                moe_fitter_t *fitter = fitter_with("em", 2, seed);
                EXPECT_STATUS(moe_fitter_set_option(fitter, "init", seed % 2 ? "random" : "kmeans"),
                             MOE_OK);
                EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
                EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_GATE_L2, seed == 3 ? 0.01 : 0.0),
                             MOE_OK);
                EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_EXPERT_RIDGE,
                                                   seed == 3 ? 0.01 : 0.0),
                             MOE_OK);
                EXPECT_STATUS(moe_fitter_fit(fitter, model, s.n, s.X, s.d, s.y, NULL), MOE_OK);
                moe_fit_report report = report_of(fitter);
                ck_assert_msg(report.monotonicity_violations == 0,
                              "family %d K %zu seed %llu: %zu violations, worst %.3g", family, K,
                              (unsigned long long)seed, report.monotonicity_violations,
                              report.worst_relative_decrease);
                fits++;
                iterations += report.total_iterations;
                moe_model_free(model);
                moe_fitter_free(fitter);
                sample_free(&s);
                label_truth_free(&truth);
            }
    ck_assert_int_eq((int)fits, 12);
    ck_assert_msg(iterations > 100, "only %zu iterations exercised", iterations);
}
END_TEST

START_TEST(inexact_em_counts_its_gradient_steps)
{
    label_truth truth;
    label_truth_make(&truth, MOE_FAMILY_MULTINOMIAL, 2, 2, 3, 2.0, 2.0, 5);
    sample s = sample_make(&truth, 2000, 6);
    moe_model_t *model = label_model_like(&truth);
    moe_fitter_t *fitter = fitter_with("em", 1, 3);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INNER_STEPS, 3), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 40), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, s.n, s.X, s.d, s.y, NULL), MOE_OK);
    moe_fit_report report = report_of(fitter);
    ck_assert_int_eq((int)report.iterations, 40);
    ck_assert_int_eq((int)report.gradient_evaluations, 3 * 40);
    /* Safe gradient steps decrease the surrogate, so the inexact EM is still monotone. */
    ck_assert_int_eq((int)report.monotonicity_violations, 0);
    ck_assert(report.step > 0.0 && report.gate_step > 0.0);
    /* Exact EM reaches at least the inexact one's objective. */
    moe_model_t *exact = label_model_like(&truth);
    moe_fitter_t *exact_fitter = fitter_with("em", 1, 3);
    EXPECT_STATUS(moe_fitter_fit(exact_fitter, exact, s.n, s.X, s.d, s.y, NULL), MOE_OK);
    moe_fit_report exact_report = report_of(exact_fitter);
    ck_assert_int_eq((int)exact_report.gradient_evaluations, 0);
    ck_assert_msg(exact_report.loglik >= report.loglik - 1e-6 * fabs(report.loglik),
                  "exact %.6f < inexact %.6f", exact_report.loglik, report.loglik);
    moe_model_free(exact);
    moe_fitter_free(exact_fitter);
    moe_model_free(model);
    moe_fitter_free(fitter);
    sample_free(&s);
    label_truth_free(&truth);
}
END_TEST

/* Every entry point that reads labels rejects values outside the classes, naming the row. */
static void expect_bad_label(moe_family family, size_t C, double bad, size_t row)
{
    label_truth truth;
    label_truth_make(&truth, family, 2, 1, C, 1.0, 1.0, 9);
    sample s = sample_make(&truth, 50, 10);
    s.y[row] = bad;
    moe_model_t *model = label_truth_model(&truth);
    moe_model_t *before = NULL;
    EXPECT_STATUS(moe_model_clone(&before, model), MOE_OK);
    moe_fitter_t *fitter = fitter_with("em", 1, 1);
    char row_text[32];
    snprintf(row_text, sizeof row_text, "row %zu, response: ", row);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, s.n, s.X, s.d, s.y, NULL),
                 MOE_ERR_INVALID_LABEL);
    ck_assert_msg(strstr(moe_fitter_last_error(fitter), row_text) != NULL,
                  "message '%s' does not name %s", moe_fitter_last_error(fitter), row_text);
    double value = 0.0, out[50 * 2];
    EXPECT_STATUS(moe_model_loglik(model, s.n, s.X, s.d, s.y, NULL, &value),
                 MOE_ERR_INVALID_LABEL);
    ck_assert_msg(strstr(moe_last_error(), row_text) != NULL, "'%s'", moe_last_error());
    EXPECT_STATUS(moe_model_posterior(model, s.n, s.X, s.d, s.y, out, 100),
                 MOE_ERR_INVALID_LABEL);
    EXPECT_STATUS(moe_model_accuracy(model, s.n, s.X, s.d, s.y, NULL, &value),
                 MOE_ERR_INVALID_LABEL);
    EXPECT_STATUS(moe_model_cross_entropy(model, s.n, s.X, s.d, s.y, NULL, &value),
                 MOE_ERR_INVALID_LABEL);
    /* The failed fit left the model as it was. */
    size_t size = 2 * truth.expert_rows * 2;
    double a[64], b[64];
    EXPECT_STATUS(moe_model_get_experts(model, a, size), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(before, b, size), MOE_OK);
    ck_assert(memcmp(a, b, size * sizeof(double)) == 0);
    moe_model_free(before);
    moe_model_free(model);
    moe_fitter_free(fitter);
    sample_free(&s);
    label_truth_free(&truth);
}

START_TEST(labels_outside_the_classes_are_rejected)
{
    expect_bad_label(MOE_FAMILY_LOGISTIC, 0, 2.0, 7);
    expect_bad_label(MOE_FAMILY_LOGISTIC, 0, -1.0, 0);
    expect_bad_label(MOE_FAMILY_LOGISTIC, 0, 0.5, 49);
    expect_bad_label(MOE_FAMILY_MULTINOMIAL, 3, 3.0, 12);
    expect_bad_label(MOE_FAMILY_MULTINOMIAL, 3, 1.5, 3);
    expect_bad_label(MOE_FAMILY_MULTINOMIAL, 3, -0.0 - 1e-300, 4);
}
END_TEST

static int all_finite(const moe_model_t *model)
{
    size_t p = moe_model_n_inputs(model), K = moe_model_n_experts(model);
    size_t size = K * moe_model_expert_rows(model) * p;
    double *values = malloc((size + K * p) * sizeof(double));
    EXPECT_STATUS(moe_model_get_experts(model, values, size), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(model, values + size, K * p), MOE_OK);
    int finite = 1;
    for (size_t a = 0; a < size + K * p; ++a)
        finite = finite && isfinite(values[a]);
    free(values);
    return finite;
}

START_TEST(separable_data_is_flagged_not_fatal)
{
    /* y = [x > 0]: each expert's labels are perfectly separable. */
    const size_t n = 400;
    double X[400], y[400];
    test_rng rng = {77};
    for (size_t i = 0; i < n; ++i) {
        X[i] = test_normal(&rng);
        y[i] = X[i] > 0.0 ? 1.0 : 0.0;
    }
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_LOGISTIC;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = fitter_with("em", 2, 1);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 30), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, 1, y, NULL), MOE_OK);
    moe_fit_report report = report_of(fitter);
    ck_assert(all_finite(model));
    ck_assert_msg(report.separation_events > 0, "separation not reported");
    double accuracy = 0.0;
    EXPECT_STATUS(moe_model_accuracy(model, n, X, 1, y, NULL, &accuracy), MOE_OK);
    ck_assert_double_eq(accuracy, 1.0);
    /* The gradient estimators start from the same separated M-step and say so. */
    moe_fitter_t *gd = fitter_with("gd", 1, 1);
    EXPECT_STATUS(moe_fitter_fit(gd, model, n, X, 1, y, NULL), MOE_OK);
    ck_assert_msg(report_of(gd).separation_events > 0, "gd did not report the separation");
    ck_assert(all_finite(model));
    moe_fitter_free(gd);
    /* A penalty makes the optimum finite: no separation, a converged fit. */
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_EXPERT_RIDGE, 1e-2), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_GATE_L2, 1e-2), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 500), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, 1, y, NULL), MOE_OK);
    report = report_of(fitter);
    ck_assert_int_eq((int)report.separation_events, 0);
    ck_assert_int_eq(report.converged, 1);
    ck_assert(all_finite(model));
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

static void check_round_trip(moe_family family, size_t C)
{
    label_truth truth;
    label_truth_make(&truth, family, 3, 2, C, 1.0, 1.0, 13);
    sample s = sample_make(&truth, 500, 14);
    moe_model_t *model = label_model_like(&truth);
    moe_fitter_t *fitter = fitter_with("em", 1, 2);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, s.n, s.X, s.d, s.y, NULL), MOE_OK);
    size_t size = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &size), MOE_OK);
    unsigned char *buffer = malloc(size), *again = malloc(size);
    EXPECT_STATUS(moe_model_save_buffer(model, buffer, size, &size), MOE_OK);
    moe_model_t *loaded = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&loaded, buffer, size), MOE_OK);
    ck_assert_int_eq(moe_model_family(loaded), family);
    ck_assert_int_eq((int)moe_model_n_classes(loaded), (int)truth.n_classes);
    size_t written = 0;
    EXPECT_STATUS(moe_model_save_buffer(loaded, again, size, &written), MOE_OK);
    ck_assert(written == size && memcmp(buffer, again, size) == 0);
    size_t width = family == MOE_FAMILY_MULTINOMIAL ? C : 1;
    double *a = malloc(s.n * width * sizeof(double)), *b = malloc(s.n * width * sizeof(double));
    EXPECT_STATUS(moe_model_predict(model, s.n, s.X, s.d, a, s.n * width), MOE_OK);
    EXPECT_STATUS(moe_model_predict(loaded, s.n, s.X, s.d, b, s.n * width), MOE_OK);
    ck_assert(memcmp(a, b, s.n * width * sizeof(double)) == 0);
    free(a);
    free(b);
    free(buffer);
    free(again);
    moe_model_free(loaded);
    moe_model_free(model);
    moe_fitter_free(fitter);
    sample_free(&s);
    label_truth_free(&truth);
}

START_TEST(save_and_load_round_trip_exactly)
{
    check_round_trip(MOE_FAMILY_LOGISTIC, 0);
    check_round_trip(MOE_FAMILY_MULTINOMIAL, 4);
}
END_TEST

START_TEST(predictions_are_mixture_probabilities)
{
    label_truth truth;
    label_truth_make(&truth, MOE_FAMILY_MULTINOMIAL, 3, 2, 4, 1.5, 1.5, 21);
    sample s = sample_make(&truth, 300, 22);
    moe_model_t *model = label_truth_model(&truth);
    const size_t C = 4, K = 3;
    double *proba = malloc(s.n * C * sizeof(double)), *gate = malloc(s.n * K * sizeof(double));
    EXPECT_STATUS(moe_model_predict(model, s.n, s.X, s.d, proba, s.n * C), MOE_OK);
    EXPECT_STATUS(moe_model_predict(model, s.n, s.X, s.d, proba, s.n * C - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_gate_proba(model, s.n, s.X, s.d, gate, s.n * K), MOE_OK);
    double correct = 0.0, nll = 0.0;
    for (size_t i = 0; i < s.n; ++i) {
        double sum = 0.0;
        size_t best = 0;
        for (size_t c = 0; c < C; ++c) {
            sum += proba[i * C + c];
            if (proba[i * C + c] > proba[i * C + best])
                best = c;
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-12);
        correct += (double)best == s.y[i];
        /* p(y | x) by hand from the truth: sum_k pi_k softmax(B_k x~)_y */
        double likelihood = 0.0, x1 = s.X[i * 2], x2 = s.X[i * 2 + 1];
        for (size_t k = 0; k < K; ++k) {
            double logits[4], top = -INFINITY, total = 0.0;
            for (size_t c = 0; c < C; ++c) {
                const double *row = truth.experts + (k * C + c) * 3;
                logits[c] = row[0] + row[1] * x1 + row[2] * x2;
                top = fmax(top, logits[c]);
            }
            for (size_t c = 0; c < C; ++c)
                total += exp(logits[c] - top);
            likelihood += gate[i * K + k] * exp(logits[(size_t)s.y[i]] - top) / total;
        }
        ck_assert_double_eq_tol(proba[i * C + (size_t)s.y[i]], likelihood, 1e-12);
        nll -= log(likelihood);
    }
    double accuracy = 0.0, cross_entropy = 0.0;
    EXPECT_STATUS(moe_model_accuracy(model, s.n, s.X, s.d, s.y, NULL, &accuracy), MOE_OK);
    EXPECT_STATUS(moe_model_cross_entropy(model, s.n, s.X, s.d, s.y, NULL, &cross_entropy),
                 MOE_OK);
    ck_assert_double_eq_tol(accuracy, correct / (double)s.n, 1e-15);
    ck_assert_double_eq_tol(cross_entropy, nll / (double)s.n, 1e-12);
    /* Weights act as frequencies in both summaries. */
    double *weights = malloc(s.n * sizeof(double));
    for (size_t i = 0; i < s.n; ++i)
        weights[i] = i < 10 ? 2.0 : 1.0;
    double weighted = 0.0;
    EXPECT_STATUS(moe_model_cross_entropy(model, s.n, s.X, s.d, s.y, weights, &weighted), MOE_OK);
    double expected = nll;
    for (size_t i = 0; i < 10; ++i)
        expected -= log(proba[i * C + (size_t)s.y[i]]);
    ck_assert_double_eq_tol(weighted, expected / (double)(s.n + 10), 1e-12);
    free(weights);
    free(proba);
    free(gate);
    moe_model_free(model);
    sample_free(&s);
    label_truth_free(&truth);
}
END_TEST

START_TEST(logistic_predicts_the_probability_of_one)
{
    label_truth truth;
    label_truth_make(&truth, MOE_FAMILY_LOGISTIC, 2, 2, 0, 1.5, 1.5, 23);
    sample s = sample_make(&truth, 200, 24);
    moe_model_t *model = label_truth_model(&truth);
    double proba[200], posterior[400], zero_one[200];
    EXPECT_STATUS(moe_model_predict(model, s.n, s.X, s.d, proba, s.n), MOE_OK);
    for (size_t i = 0; i < s.n; ++i) {
        ck_assert(proba[i] > 0.0 && proba[i] < 1.0);
        zero_one[i] = 1.0;
    }
    /* The log-likelihood of all-ones labels is sum log P(y = 1 | x). */
    double loglik = 0.0, expected = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, s.n, s.X, s.d, zero_one, NULL, &loglik), MOE_OK);
    for (size_t i = 0; i < s.n; ++i)
        expected += log(proba[i]);
    ck_assert_double_eq_tol(loglik, expected, 1e-10);
    EXPECT_STATUS(moe_model_posterior(model, s.n, s.X, s.d, s.y, posterior, 400), MOE_OK);
    for (size_t i = 0; i < s.n; ++i)
        ck_assert_double_eq_tol(posterior[2 * i] + posterior[2 * i + 1], 1.0, 1e-12);
    moe_model_free(model);
    sample_free(&s);
    label_truth_free(&truth);
}
END_TEST

START_TEST(summaries_reject_bad_arguments)
{
    double X[2] = {0.0, 1.0}, y[2] = {0.0, 1.0}, value = 0.0;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_model_t *gaussian = NULL, *logistic = NULL;
    EXPECT_STATUS(moe_model_create(&gaussian, &spec), MOE_OK);
    spec.family = MOE_FAMILY_LOGISTIC;
    EXPECT_STATUS(moe_model_create(&logistic, &spec), MOE_OK);
    EXPECT_STATUS(moe_model_accuracy(gaussian, 2, X, 1, y, NULL, &value), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_model_accuracy(NULL, 2, X, 1, y, NULL, &value), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_accuracy(logistic, 2, NULL, 1, y, NULL, &value), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_accuracy(logistic, 2, X, 1, NULL, NULL, &value), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_accuracy(logistic, 2, X, 1, y, NULL, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_cross_entropy(logistic, 2, X, 1, y, NULL, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_cross_entropy(NULL, 2, X, 1, y, NULL, &value), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_accuracy(logistic, 0, X, 1, y, NULL, &value), MOE_ERR_EMPTY_INPUT);
    double bad_x[2] = {NAN, 0.0}, negative[2] = {1.0, -1.0};
    EXPECT_STATUS(moe_model_accuracy(logistic, 2, bad_x, 1, y, NULL, &value), MOE_ERR_NON_FINITE);
    EXPECT_STATUS(moe_model_cross_entropy(logistic, 2, X, 1, y, negative, &value),
                 MOE_ERR_NEGATIVE_WEIGHT);
    /* Cross-entropy is the mean negative log-likelihood for any family. */
    EXPECT_STATUS(moe_model_cross_entropy(gaussian, 2, X, 1, y, NULL, &value), MOE_OK);
    double loglik = 0.0;
    EXPECT_STATUS(moe_model_loglik(gaussian, 2, X, 1, y, NULL, &loglik), MOE_OK);
    ck_assert_double_eq_tol(value, -loglik / 2.0, 1e-15);
    moe_model_free(gaussian);
    moe_model_free(logistic);
}
END_TEST

START_TEST(oversized_newton_is_refused_with_advice)
{
    /* 9 free class rows x 461 inputs = 4149 unknowns: above the Newton limit. One expert
       keeps the data small (the fit needs as many rows as free parameters). */
    const size_t n = 4200, d = 460;
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    test_rng rng = {5};
    for (size_t i = 0; i < n * d; ++i)
        X[i] = test_normal(&rng);
    for (size_t i = 0; i < n; ++i)
        y[i] = (double)(i % 10);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_features = d;
    spec.n_classes = 10;
    spec.n_experts = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = fitter_with("em", 3, 1);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 2), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, d, y, NULL), MOE_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(moe_fitter_last_error(fitter), "inner_steps") != NULL, "'%s'",
                  moe_fitter_last_error(fitter));
    ck_assert_int_eq((int)report_of(fitter).n_restarts, 1); /* not retried */
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INNER_STEPS, 2), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, d, y, NULL), MOE_OK);
    ck_assert(all_finite(model));
    moe_model_free(model);
    moe_fitter_free(fitter);
    free(X);
    free(y);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("classification");
    TCase *recovery = tcase_create("recovery");
    tcase_set_timeout(recovery, 60);
    tcase_add_test(recovery, logistic_em_recovers_known_parameters);
    tcase_add_test(recovery, multinomial_em_recovers_known_parameters);
    tcase_add_test(recovery, em_never_decreases_the_objective);
    tcase_add_test(recovery, inexact_em_counts_its_gradient_steps);
    suite_add_tcase(suite, recovery);
    TCase *edges = tcase_create("edges");
    tcase_set_timeout(edges, 60);
    tcase_add_test(edges, labels_outside_the_classes_are_rejected);
    tcase_add_test(edges, separable_data_is_flagged_not_fatal);
    tcase_add_test(edges, oversized_newton_is_refused_with_advice);
    suite_add_tcase(suite, edges);
    TCase *model = tcase_create("model");
    tcase_set_timeout(model, 60);
    tcase_add_test(model, save_and_load_round_trip_exactly);
    tcase_add_test(model, predictions_are_mixture_probabilities);
    tcase_add_test(model, logistic_predicts_the_probability_of_one);
    tcase_add_test(model, summaries_reject_bad_arguments);
    suite_add_tcase(suite, model);
    return run_suite(suite);
}
