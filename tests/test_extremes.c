/*
 * Extreme but legal inputs: parameters near the overflow threshold, sizes whose products
 * overflow, sums that overflow, estimators that report non-finite values, and option text
 * that is not decimal. The rule under test: no public function returns MOE_OK with a
 * non-finite value in any output, and no size makes the library read outside the caller's
 * arrays.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "moe/estimator.h"
#include "common/checksum.h"
#include "common/linalg.h"
#include "support/runner.h"
#include "support/synthetic.h"

#define LOG_SQRT_TWO_PI 0.91893853320467274178

static moe_model_t *gaussian(size_t K, size_t d, const double *gate, const double *experts,
                             const double *variances)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    size_t p = d + 1;
    if (gate != NULL)
        EXPECT_STATUS(moe_model_set_gate(model, gate, K * p), MOE_OK);
    if (experts != NULL)
        EXPECT_STATUS(moe_model_set_experts(model, experts, K * p), MOE_OK);
    if (variances != NULL)
        EXPECT_STATUS(moe_model_set_variances(model, variances, K), MOE_OK);
    return model;
}

static int message_has(const char *needle)
{
    return strstr(moe_last_error(), needle) != NULL;
}

/* ------------------------------------------------------------------------ */
/* Log-softmax at huge logits                                               */
/* ------------------------------------------------------------------------ */

/* Softmax is shift-invariant: {L, L, L - 64} must give what {0, 0, -64} gives, for every L
   at which those values are exact. */
START_TEST(log_softmax_is_shift_invariant_at_huge_logits)
{
    double reference[3] = {0.0, 0.0, -64.0}, reference_proba[3];
    double reference_total = moe_softmax_with_log(reference, 3, reference_proba);
    (void)reference_total;
    for (int exponent = 0; exponent <= 1000; exponent += 7) {
        double L = ldexp(1.0, exponent);
        double one[3] = {L, L, L - 64.0}, rows[6] = {L, L, L - 64.0, -L, -L, -L - 64.0};
        double proba[3], rows_proba[6], lse[2];
        if (L - 64.0 == L)
            continue; /* 64 no longer representable next to L */
        double plain[3] = {L, L, L - 64.0};
        moe_log_softmax(plain, 3);
        moe_softmax_with_log(one, 3, proba);
        moe_softmax_rows(2, 3, rows, rows_proba, lse);
        for (int k = 0; k < 3; ++k) {
            ck_assert_msg(fabs(plain[k] - reference[k]) <= 1e-15,
                          "moe_log_softmax at L = 2^%d: log p[%d] = %.17g, expected %.17g",
                          exponent, k, plain[k], reference[k]);
            ck_assert_msg(fabs(one[k] - reference[k]) <= 1e-15,
                          "moe_softmax_with_log at L = 2^%d: log p[%d] = %.17g, expected %.17g",
                          exponent, k, one[k], reference[k]);
            ck_assert_msg(fabs(rows[k] - reference[k]) <= 1e-15,
                          "moe_softmax_rows at L = 2^%d: log p[%d] = %.17g, expected %.17g",
                          exponent, k, rows[k], reference[k]);
            ck_assert(fabs(proba[k] - reference_proba[k]) <= 1e-15);
            ck_assert(fabs(rows_proba[k] - reference_proba[k]) <= 1e-15);
        }
    }
}
END_TEST

/* The case the fuzzer found: K = 3, d = 0, gate {1e17, 1e17, 0}, experts all 1. */
START_TEST(gaussian_with_tied_huge_gate_logits)
{
    double gate[3] = {1e17, 1e17, 0.0}, experts[3] = {1.0, 1.0, 1.0}, variances[3] = {1, 1, 1};
    moe_model_t *model = gaussian(3, 0, gate, experts, variances);
    double proba[3], prediction, y = 1.0, loglik, posterior[3];
    EXPECT_STATUS(moe_model_gate_proba(model, 1, NULL, 0, proba, 3), MOE_OK);
    ck_assert_msg(fabs(proba[0] - 0.5) < 1e-15 && fabs(proba[1] - 0.5) < 1e-15 && proba[2] == 0,
                  "gate probabilities %g %g %g, expected 0.5 0.5 0", proba[0], proba[1],
                  proba[2]);
    EXPECT_STATUS(moe_model_predict(model, 1, NULL, 0, &prediction, 1), MOE_OK);
    ck_assert_msg(fabs(prediction - 1.0) < 1e-15, "prediction %.17g, expected 1", prediction);
    EXPECT_STATUS(moe_model_loglik(model, 1, NULL, 0, &y, NULL, &loglik), MOE_OK);
    ck_assert_msg(fabs(loglik + LOG_SQRT_TWO_PI) < 1e-14, "loglik %.17g, expected %.17g",
                  loglik, -LOG_SQRT_TWO_PI);
    EXPECT_STATUS(moe_model_posterior(model, 1, NULL, 0, &y, posterior, 3), MOE_OK);
    ck_assert(fabs(posterior[0] + posterior[1] + posterior[2] - 1.0) < 1e-15);
    moe_model_free(model);
}
END_TEST

/* Multinomial experts whose class logits are huge and tied: rows must still sum to 1. */
START_TEST(multinomial_rows_sum_to_one_at_huge_logits)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_experts = 2;
    spec.n_features = 0;
    spec.n_classes = 3;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    double experts[6] = {4.8e148, 4.8e148, 0.0, 1e300, -1e300, 0.0};
    EXPECT_STATUS(moe_model_set_experts(model, experts, 6), MOE_OK);
    double proba[3];
    EXPECT_STATUS(moe_model_predict(model, 1, NULL, 0, proba, 3), MOE_OK);
    double sum = proba[0] + proba[1] + proba[2];
    ck_assert_msg(fabs(sum - 1.0) < 1e-12, "class probabilities sum to %.17g", sum);
    ck_assert(fabs(proba[0] - 0.75) < 1e-12 && fabs(proba[1] - 0.25) < 1e-12);
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Sizes that overflow                                                      */
/* ------------------------------------------------------------------------ */

START_TEST(sizes_that_overflow_are_dimension_errors)
{
    double gate[4] = {0.5, -1.0, 0.0, 0.0}, experts[4] = {1.0, 2.0, -1.0, 0.5};
    moe_model_t *model = gaussian(2, 1, gate, experts, NULL);
    double X[4] = {0.1, 0.2, 0.3, 0.4}, y[4] = {1, 2, 3, 4}, out[8] = {0};
    double loglik = 0.0;
    const size_t huge = SIZE_MAX / 2, wide = SIZE_MAX / 16;
    /* Two rows a huge stride apart: X + ldx would be far outside X. */
    EXPECT_STATUS(moe_model_predict(model, 2, X, huge, out, 8), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_gate_proba(model, 2, X, huge, out, 8), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_posterior(model, 2, X, huge, y, out, 8), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_loglik(model, 2, X, huge, y, NULL, &loglik), MOE_ERR_DIMENSION);
    /* A huge row count with a small output buffer: refused before X is scanned. */
    EXPECT_STATUS(moe_model_predict(model, huge, X, 1, out, 8), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_gate_proba(model, huge, X, 1, out, 8), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_posterior(model, huge, X, 1, y, out, 8), MOE_ERR_DIMENSION);
    /* A row count whose output would fit a size_t but whose rows do not fit in memory. */
    EXPECT_STATUS(moe_model_predict(model, wide, X, 4, out, SIZE_MAX), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_loglik(model, wide, X, 4, y, NULL, &loglik), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_cross_entropy(model, huge, X, 1, y, NULL, &loglik),
                  MOE_ERR_DIMENSION);
    moe_criteria criteria = MOE_CRITERIA_INIT;
    EXPECT_STATUS(moe_model_criteria(model, huge, X, 1, y, NULL, &criteria), MOE_ERR_DIMENSION);
    ck_assert(loglik == 0.0);
    for (int i = 0; i < 8; ++i)
        ck_assert(out[i] == 0.0);

    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, 2, X, huge, y, NULL), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, huge, X, 1, y, NULL), MOE_ERR_DIMENSION);
    moe_fitter_free(fitter);
    moe_model_free(model);

    /* Without features X is not read, but y is: n must still be addressable. */
    moe_model_t *constant = gaussian(1, 0, NULL, NULL, NULL);
    EXPECT_STATUS(moe_model_loglik(constant, SIZE_MAX / 4, NULL, 0, y, NULL, &loglik),
                  MOE_ERR_DIMENSION);
    moe_model_free(constant);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Outputs that would not be finite                                          */
/* ------------------------------------------------------------------------ */

START_TEST(overflowing_gate_logits_are_numerical_errors)
{
    double gate[4] = {1e308, 1e308, 0.0, 0.0};
    moe_model_t *model = gaussian(2, 1, gate, NULL, NULL);
    double x = 2.0, y = 0.0, out[2], loglik;
    EXPECT_STATUS(moe_model_predict(model, 1, &x, 1, out, 2), MOE_ERR_NUMERICAL);
    ck_assert(message_has("row 0"));
    EXPECT_STATUS(moe_model_gate_proba(model, 1, &x, 1, out, 2), MOE_ERR_NUMERICAL);
    EXPECT_STATUS(moe_model_posterior(model, 1, &x, 1, &y, out, 2), MOE_ERR_NUMERICAL);
    EXPECT_STATUS(moe_model_loglik(model, 1, &x, 1, &y, NULL, &loglik), MOE_ERR_NUMERICAL);
    /* The same model is fine where the logit does not overflow. */
    x = 0.5;
    EXPECT_STATUS(moe_model_gate_proba(model, 1, &x, 1, out, 2), MOE_OK);
    ck_assert(out[0] == 1.0 && out[1] == 0.0);
    moe_model_free(model);
}
END_TEST

START_TEST(overflowing_expert_means_are_numerical_errors)
{
    double experts[4] = {1e308, 1e308, 1e308, 1e308};
    moe_model_t *model = gaussian(2, 1, NULL, experts, NULL);
    double x = 2.0, out;
    EXPECT_STATUS(moe_model_predict(model, 1, &x, 1, &out, 1), MOE_ERR_NUMERICAL);
    ck_assert(message_has("row 0"));
    moe_model_free(model);

    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_experts = 1;
    spec.n_classes = 2;
    moe_model_t *multinomial = NULL;
    EXPECT_STATUS(moe_model_create(&multinomial, &spec), MOE_OK);
    double classes[4] = {1e308, 1e308, 0.0, 0.0}, proba[2], label = 0.0, accuracy;
    EXPECT_STATUS(moe_model_set_experts(multinomial, classes, 4), MOE_OK);
    EXPECT_STATUS(moe_model_predict(multinomial, 1, &x, 1, proba, 2), MOE_ERR_NUMERICAL);
    EXPECT_STATUS(moe_model_accuracy(multinomial, 1, &x, 1, &label, NULL, &accuracy),
                  MOE_ERR_NUMERICAL);
    moe_model_free(multinomial);
}
END_TEST

/* Every row's log-density is finite; their sum is not. */
START_TEST(overflowing_sums_are_numerical_errors)
{
    enum { ROWS = 400 };
    double y[ROWS], variance = 1e-306, loglik = 0.0, cross_entropy = 0.0;
    for (int i = 0; i < ROWS; ++i)
        y[i] = 1.0;
    double zero = 0.0;
    moe_model_t *model = gaussian(1, 0, &zero, &zero, &variance);
    EXPECT_STATUS(moe_model_loglik(model, 1, NULL, 0, y, NULL, &loglik), MOE_OK);
    ck_assert(isfinite(loglik) && loglik < -4e305);
    EXPECT_STATUS(moe_model_loglik(model, ROWS, NULL, 0, y, NULL, &loglik), MOE_ERR_NUMERICAL);
    ck_assert(message_has("overflows"));
    EXPECT_STATUS(moe_model_cross_entropy(model, ROWS, NULL, 0, y, NULL, &cross_entropy),
                  MOE_ERR_NUMERICAL);
    moe_criteria criteria = MOE_CRITERIA_INIT;
    EXPECT_STATUS(moe_model_criteria(model, ROWS, NULL, 0, y, NULL, &criteria),
                  MOE_ERR_NUMERICAL);
    /* 300 rows: a finite log-likelihood of about -1.5e308 whose AIC (-2 loglik) overflows. */
    EXPECT_STATUS(moe_model_loglik(model, 300, NULL, 0, y, NULL, &loglik), MOE_OK);
    ck_assert(isfinite(loglik));
    EXPECT_STATUS(moe_model_criteria(model, 300, NULL, 0, y, NULL, &criteria),
                  MOE_ERR_NUMERICAL);
    ck_assert(criteria.aic == 0.0 && criteria.bic == 0.0); /* untouched */
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Re-referencing that overflows                                             */
/* ------------------------------------------------------------------------ */

START_TEST(canonicalize_refuses_an_overflowing_reference)
{
    /* Expert 1 sorts last (largest coefficient), so its gate row -1e308 becomes the
       reference, and expert 0's row would become 1e308 - (-1e308). */
    double gate[3] = {1e308, -1e308, 0.0}, experts[3] = {0.0, 5.0, 1.0};
    moe_model_t *model = gaussian(3, 0, gate, experts, NULL);
    double before_gate[3], before_experts[3], after_gate[3], after_experts[3];
    EXPECT_STATUS(moe_model_get_gate(model, before_gate, 3), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, before_experts, 3), MOE_OK);
    EXPECT_STATUS(moe_model_canonicalize(model), MOE_ERR_NUMERICAL);
    ck_assert(strstr(moe_model_last_error(model), "overflow") != NULL);
    EXPECT_STATUS(moe_model_get_gate(model, after_gate, 3), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, after_experts, 3), MOE_OK);
    ck_assert(memcmp(before_gate, after_gate, sizeof after_gate) == 0);
    ck_assert(memcmp(before_experts, after_experts, sizeof after_experts) == 0);
    moe_model_free(model);
}
END_TEST

START_TEST(setters_refuse_an_overflowing_reference)
{
    double gate[3] = {1e308, -1e308, 0.0};
    moe_model_t *model = gaussian(3, 0, NULL, NULL, NULL);
    double reversed[3] = {1e308, 0.0, -1e308}, stored[3];
    EXPECT_STATUS(moe_model_set_gate(model, gate, 3), MOE_OK);
    EXPECT_STATUS(moe_model_set_gate(model, reversed, 3), MOE_ERR_NON_FINITE);
    EXPECT_STATUS(moe_model_get_gate(model, stored, 3), MOE_OK);
    ck_assert(memcmp(stored, gate, sizeof gate) == 0);
    moe_model_free(model);

    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_experts = 2;
    spec.n_features = 0;
    spec.n_classes = 2;
    moe_model_t *multinomial = NULL;
    EXPECT_STATUS(moe_model_create(&multinomial, &spec), MOE_OK);
    double good[4] = {1.0, 0.0, 2.0, 0.0}, bad[4] = {0.0, 0.0, 1e308, -1e308}, held[4];
    EXPECT_STATUS(moe_model_set_experts(multinomial, good, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(multinomial, bad, 4), MOE_ERR_NON_FINITE);
    EXPECT_STATUS(moe_model_get_experts(multinomial, held, 4), MOE_OK);
    ck_assert(memcmp(held, good, sizeof good) == 0);
    moe_model_free(multinomial);
}
END_TEST

/* A loaded multinomial model must have zero reference classes, as every saved one has. */
START_TEST(loader_refuses_a_nonzero_reference_class)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_experts = 2;
    spec.n_features = 1;
    spec.n_classes = 3;
    moe_model_t *model = NULL, *loaded = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    unsigned char bytes[512];
    size_t size = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, bytes, sizeof bytes, &size), MOE_OK);
    EXPECT_STATUS(moe_model_load_buffer(&loaded, bytes, size), MOE_OK);
    moe_model_free(loaded);
    /* Expert 1, class 2 (the reference), input 1: after the header and the K x p gate. */
    size_t K = 2, p = 2, C = 3, offset = 64 + 8 * (K * p) + 8 * ((1 * C + 2) * p + 1);
    double value = 0.25;
    uint64_t bits;
    memcpy(&bits, &value, 8);
    for (int b = 0; b < 8; ++b)
        bytes[offset + (size_t)b] = (unsigned char)(bits >> (8 * b));
    uint32_t crc = moe_crc32(bytes, size - 4);
    for (int b = 0; b < 4; ++b)
        bytes[size - 4 + (size_t)b] = (unsigned char)(crc >> (8 * b));
    loaded = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&loaded, bytes, size), MOE_ERR_FORMAT);
    ck_assert(loaded == NULL);
    ck_assert(message_has("reference"));
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Estimators that report non-finite or impossible results                  */
/* ------------------------------------------------------------------------ */

typedef struct behaviour {
    double loglik;        /* recorded at iteration 0 (if record) */
    int record;           /* call moe_context_iteration */
    size_t result;        /* restart index passed to set_result (if claim) */
    int claim;            /* call moe_context_set_result */
    moe_status returned;  /* the fit's status */
    moe_status iteration_status, result_status;
} behaviour;

static behaviour act;

static moe_status plain_create(void **state)
{
    *state = NULL;
    return MOE_OK;
}

static void plain_destroy(void *state)
{
    (void)state;
}

static moe_status scripted_fit(void *state, moe_fit_context *context)
{
    (void)state;
    double experts[2] = {0.5, -0.5};
    moe_status status = moe_model_set_experts(moe_context_model(context), experts, 2);
    if (status != MOE_OK)
        return status;
    act.iteration_status = MOE_OK;
    act.result_status = MOE_OK;
    if (act.record)
        act.iteration_status = moe_context_iteration(context, 0, 0, act.loglik);
    if (act.claim)
        act.result_status = moe_context_set_result(context, act.result, 1);
    return act.returned;
}

static const moe_estimator_ops scripted_ops = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "scripted",
    .create = plain_create,
    .destroy = plain_destroy,
    .set_option = NULL,
    .fit = scripted_fit,
    .partial_fit = NULL,
    .options = MOE_OPTIONS_ALL,
};

static moe_status run_scripted(behaviour how, moe_fit_report *report, double *loglik_of_model)
{
    act = how;
    double y[6] = {0.1, -0.3, 0.7, 1.1, -0.2, 0.4};
    moe_model_t *model = gaussian(2, 0, NULL, NULL, NULL);
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &scripted_ops), MOE_OK);
    moe_status status = moe_fitter_fit(fitter, model, 6, NULL, 0, y, NULL);
    report->version = MOE_FIT_REPORT_VERSION;
    EXPECT_STATUS(moe_fitter_get_report(fitter, report), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(model, 6, NULL, 0, y, NULL, loglik_of_model), MOE_OK);
    moe_fitter_free(fitter);
    moe_model_free(model);
    return status;
}

START_TEST(estimator_reporting_nan_is_refused)
{
    moe_fit_report report;
    double loglik;
    behaviour nan_then_ok = {NAN, 1, 0, 0, MOE_OK, MOE_OK, MOE_OK};
    /* The recording fails; an estimator that ignores that and returns MOE_OK still gives a
       finite report, evaluated on its model. */
    EXPECT_STATUS(run_scripted(nan_then_ok, &report, &loglik), MOE_OK);
    ck_assert_int_eq(act.iteration_status, MOE_ERR_NUMERICAL);
    ck_assert_msg(isfinite(report.loglik) && fabs(report.loglik - loglik) < 1e-12,
                  "report loglik %g, model loglik %g", report.loglik, loglik);
    ck_assert_int_eq(report.converged, 0);

    behaviour infinite = {-INFINITY, 1, 0, 0, MOE_OK, MOE_OK, MOE_OK};
    run_scripted(infinite, &report, &loglik);
    ck_assert_int_eq(act.iteration_status, MOE_ERR_NUMERICAL);
    ck_assert(isfinite(report.loglik));
}
END_TEST

START_TEST(estimator_claiming_an_unrecorded_restart_is_refused)
{
    moe_fit_report report;
    double loglik;
    behaviour past_n_init = {-3.0, 1, 5, 1, MOE_OK, MOE_OK, MOE_OK};
    EXPECT_STATUS(run_scripted(past_n_init, &report, &loglik), MOE_OK);
    ck_assert_int_eq(act.result_status, MOE_ERR_INVALID_ARGUMENT);
    /* The one recorded restart is taken as the result, with the value recorded. */
    ck_assert(report.loglik == -3.0);

    behaviour nothing_recorded = {0.0, 0, 0, 1, MOE_OK, MOE_OK, MOE_OK};
    EXPECT_STATUS(run_scripted(nothing_recorded, &report, &loglik), MOE_OK);
    ck_assert_int_eq(act.result_status, MOE_ERR_INVALID_ARGUMENT);
    ck_assert(isfinite(report.loglik) && fabs(report.loglik - loglik) < 1e-12);
    ck_assert_int_eq(report.converged, 0);
}
END_TEST

START_TEST(failed_fit_does_not_report_converged)
{
    moe_fit_report report;
    double loglik;
    behaviour fails = {-3.0, 1, 0, 1, MOE_ERR_NUMERICAL, MOE_OK, MOE_OK};
    EXPECT_STATUS(run_scripted(fails, &report, &loglik), MOE_ERR_NUMERICAL);
    ck_assert_int_eq(act.result_status, MOE_OK);
    ck_assert_int_eq(report.converged, 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Option text                                                              */
/* ------------------------------------------------------------------------ */

START_TEST(option_text_is_decimal)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "em"), MOE_OK);
    const char *bad_integers[] = {"0x10", "1e5", "5.0", " 5", "5 ", "", "+", "1_000", "0x",
                                  "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_integers / sizeof bad_integers[0]; ++i)
        EXPECT_STATUS(moe_fitter_set_option(fitter, "max_iter", bad_integers[i]),
                      MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "max_iter", "99999999999999999999"),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert(message_has("overflows"));
    long long integer = 0;
    EXPECT_STATUS(moe_fitter_set_option(fitter, "max_iter", "+250"), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_int(fitter, MOE_OPT_MAX_ITER, &integer), MOE_OK);
    ck_assert_int_eq(integer, 250);

    const char *bad_reals[] = {"0x10", "0x1p-3", "inf", "nan", "-infinity", "1e", "e5",
                               ".", "1e+", " 1e-8", "1e-8 ", "1,5"};
    for (size_t i = 0; i < sizeof bad_reals / sizeof bad_reals[0]; ++i)
        EXPECT_STATUS(moe_fitter_set_option(fitter, "tol", bad_reals[i]),
                      MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "tol", "1e-400"), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(message_has("underflows"), "message: %s", moe_last_error());
    EXPECT_STATUS(moe_fitter_set_option(fitter, "tol", "1e400"), MOE_ERR_INVALID_ARGUMENT);
    ck_assert(message_has("overflows"));
    const char *good_reals[] = {"1e-8", "0.5", ".5", "1.", "0", "0.0e0", "+1E-3"};
    const double values[] = {1e-8, 0.5, 0.5, 1.0, 0.0, 0.0, 1e-3};
    for (size_t i = 0; i < sizeof good_reals / sizeof good_reals[0]; ++i) {
        double value = -1.0;
        EXPECT_STATUS(moe_fitter_set_option(fitter, "tol", good_reals[i]), MOE_OK);
        EXPECT_STATUS(moe_fitter_get_double(fitter, MOE_OPT_TOLERANCE, &value), MOE_OK);
        ck_assert(value == values[i]);
    }
    moe_fitter_free(fitter);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Invariants over random models with extreme but finite parameters         */
/* ------------------------------------------------------------------------ */

enum { ROWS = 40, MAX_D = 3, MAX_K = 5, MAX_C = 4, MAX_P = MAX_D + 1 };

typedef struct extreme_case {
    moe_family family;
    size_t K, d, C, p, width;
    double scale;
    double X[ROWS * MAX_D], y[ROWS];
} extreme_case;

static moe_model_t *random_model(extreme_case *c, test_rng *rng)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = c->family;
    spec.n_experts = c->K;
    spec.n_features = c->d;
    spec.n_classes = c->family == MOE_FAMILY_MULTINOMIAL ? c->C : 0;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    size_t rows = c->family == MOE_FAMILY_MULTINOMIAL ? c->C : 1;
    double gate[MAX_K * MAX_P], experts[MAX_K * MAX_C * MAX_P], variances[MAX_K];
    /* Half the gate rows at the extreme scale, the others ordinary, so that some rows are
       near ties and some are decided by huge logits. */
    for (size_t a = 0; a < c->K * c->p; ++a)
        gate[a] = test_normal(rng) * ((a / c->p) % 2 == 0 ? c->scale : 1.0);
    for (size_t a = 0; a < c->K * c->p; ++a)
        gate[(c->K - 1) * c->p + a % c->p] = 0.0;
    for (size_t a = 0; a < c->K * rows * c->p; ++a)
        experts[a] = test_normal(rng) * (test_uniform(rng) < 0.5 ? c->scale : 1.0);
    for (size_t k = 0; k < c->K; ++k)
        variances[k] = 0.1 + test_uniform(rng);
    EXPECT_STATUS(moe_model_set_gate(model, gate, c->K * c->p), MOE_OK);
    moe_status status = moe_model_set_experts(model, experts, c->K * rows * c->p);
    ck_assert(status == MOE_OK || status == MOE_ERR_NON_FINITE);
    if (c->family == MOE_FAMILY_GAUSSIAN)
        EXPECT_STATUS(moe_model_set_variances(model, variances, c->K), MOE_OK);
    return model;
}

/* Probabilities in [0, 1] whose rows sum to 1. */
static void assert_probability_rows(const double *values, size_t rows, size_t width,
                                    const char *what)
{
    for (size_t i = 0; i < rows; ++i) {
        double sum = 0.0;
        for (size_t k = 0; k < width; ++k) {
            double v = values[i * width + k];
            ck_assert_msg(isfinite(v) && v >= 0.0 && v <= 1.0 + 1e-15, "%s row %zu: %g", what,
                          i, v);
            sum += v;
        }
        if (width > 1)
            ck_assert_msg(fabs(sum - 1.0) <= 1e-12, "%s row %zu sums to %.17g", what, i, sum);
    }
}

/* Predict, checking the documented outcome: MOE_OK with valid values, or a numerical
   error with a message. Returns the status. */
static moe_status checked_predict(const moe_model_t *model, const extreme_case *c, double *out)
{
    moe_status status = moe_model_predict(model, ROWS, c->X, c->d, out, ROWS * c->width);
    ck_assert_msg(status == MOE_OK || status == MOE_ERR_NUMERICAL, "predict returned %d",
                  (int)status);
    if (status != MOE_OK) {
        ck_assert(moe_last_error()[0] != '\0');
        return status;
    }
    if (c->family == MOE_FAMILY_GAUSSIAN)
        for (size_t i = 0; i < ROWS; ++i)
            ck_assert(isfinite(out[i]));
    else
        assert_probability_rows(out, ROWS, c->width, "predict");
    return status;
}

/*
 * How far canonicalize may move row i's prediction: it replaces each gate row g_k by
 * g_k - r (r the new reference row), rounded once, and the logits are then computed from
 * those rows; both roundings together move a logit by at most 4 eps max_k |g_k|.|x~_i|
 * (|g_k - r| <= 2 max_k |g_k|). Softmax moves the probabilities by at most twice the largest
 * logit change in total, and a Gaussian mixture mean by that times the largest expert mean.
 */
static void canonicalize_bounds(const moe_model_t *model, const extreme_case *c, double *bound)
{
    double gate[MAX_K * MAX_P], experts[MAX_K * MAX_C * MAX_P];
    EXPECT_STATUS(moe_model_get_gate(model, gate, MAX_K * MAX_P), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, MAX_K * MAX_C * MAX_P), MOE_OK);
    for (size_t i = 0; i < ROWS; ++i) {
        double x[MAX_P] = {1.0};
        for (size_t j = 0; j < c->d; ++j)
            x[j + 1] = fabs(c->X[i * c->d + j]);
        double largest_logit = 0.0, largest_mean = 0.0;
        for (size_t k = 0; k < c->K; ++k) {
            double logit = 0.0, mean = 0.0;
            for (size_t j = 0; j < c->p; ++j) {
                logit += fabs(gate[k * c->p + j]) * x[j];
                mean += fabs(experts[k * c->p + j]) * x[j];
            }
            largest_logit = fmax(largest_logit, logit);
            largest_mean = fmax(largest_mean, mean);
        }
        double logit_change = 4.0 * DBL_EPSILON * largest_logit * 1.01;
        double probability_change = 2.0 * logit_change + 1e-14;
        bound[i] = c->family == MOE_FAMILY_GAUSSIAN
                       ? probability_change * largest_mean + 1e-14 * largest_mean
                       : probability_change;
    }
}

START_TEST(random_extreme_models_keep_the_invariants)
{
    const double scales[] = {1.0, 1e3, 1e17, 1e60, 1e150, 1e300, 1e307};
    const moe_family families[] = {MOE_FAMILY_GAUSSIAN, MOE_FAMILY_LOGISTIC,
                                   MOE_FAMILY_MULTINOMIAL};
    test_rng rng = {20261124};
    size_t ok_predictions = 0, refused_predictions = 0, canonicalized = 0;
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; ++s)
        for (size_t f = 0; f < 3; ++f)
            for (int repeat = 0; repeat < 12; ++repeat) {
                extreme_case c;
                c.family = families[f];
                c.scale = scales[s];
                c.K = 2 + (size_t)repeat % 4;
                c.d = (size_t)repeat % (MAX_D + 1);
                c.C = 2 + (size_t)repeat % 3;
                c.p = c.d + 1;
                c.width = c.family == MOE_FAMILY_MULTINOMIAL ? c.C : 1;
                size_t labels = c.family == MOE_FAMILY_LOGISTIC ? 2 : c.C;
                for (size_t i = 0; i < ROWS; ++i) {
                    /* Every eighth row far out, where the largest scale overflows. */
                    for (size_t j = 0; j < c.d; ++j)
                        c.X[i * c.d + j] = test_normal(&rng) * (i % 8 == 7 ? 50.0 : 1.0);
                    c.y[i] = c.family == MOE_FAMILY_GAUSSIAN ? test_normal(&rng)
                                                             : (double)(i % labels);
                }
                moe_model_t *model = random_model(&c, &rng);
                double gate[ROWS * MAX_K], out[ROWS * MAX_C], after[ROWS * MAX_C];
                moe_status status = moe_model_gate_proba(model, ROWS, c.X, c.d, gate,
                                                          ROWS * c.K);
                ck_assert(status == MOE_OK || status == MOE_ERR_NUMERICAL);
                if (status == MOE_OK)
                    assert_probability_rows(gate, ROWS, c.K, "gate_proba");
                status = moe_model_posterior(model, ROWS, c.X, c.d, c.y, gate, ROWS * c.K);
                ck_assert(status == MOE_OK || status == MOE_ERR_NUMERICAL);
                if (status == MOE_OK)
                    assert_probability_rows(gate, ROWS, c.K, "posterior");
                double loglik = 0.0;
                status = moe_model_loglik(model, ROWS, c.X, c.d, c.y, NULL, &loglik);
                ck_assert(status == MOE_ERR_NUMERICAL || (status == MOE_OK && isfinite(loglik)));
                moe_status predicted = checked_predict(model, &c, out);
                double bound[ROWS];
                canonicalize_bounds(model, &c, bound);
                if (predicted == MOE_OK)
                    ++ok_predictions;
                else
                    ++refused_predictions;
                status = moe_model_canonicalize(model);
                ck_assert(status == MOE_OK || status == MOE_ERR_NUMERICAL);
                if (status == MOE_OK && predicted == MOE_OK) {
                    ++canonicalized;
                    EXPECT_STATUS(checked_predict(model, &c, after), MOE_OK);
                    for (size_t i = 0; i < ROWS * c.width; ++i) {
                        ck_assert_msg(fabs(out[i] - after[i]) <= bound[i / c.width],
                                      "scale %g family %d: prediction %zu changed from %.17g "
                                      "to %.17g by canonicalize",
                                      c.scale, (int)c.family, i, out[i], after[i]);
                    }
                }
                moe_model_free(model);
            }
    /* Both outcomes were exercised. */
    ck_assert(ok_predictions > 100);
    ck_assert(refused_predictions > 0);
    ck_assert(canonicalized > 100);
}
END_TEST

static Suite *extremes_suite(void)
{
    Suite *suite = suite_create("extremes");
    TCase *softmax = tcase_create("softmax");
    tcase_add_test(softmax, log_softmax_is_shift_invariant_at_huge_logits);
    tcase_add_test(softmax, gaussian_with_tied_huge_gate_logits);
    tcase_add_test(softmax, multinomial_rows_sum_to_one_at_huge_logits);
    suite_add_tcase(suite, softmax);
    TCase *sizes = tcase_create("sizes");
    tcase_add_test(sizes, sizes_that_overflow_are_dimension_errors);
    suite_add_tcase(suite, sizes);
    TCase *outputs = tcase_create("outputs");
    tcase_add_test(outputs, overflowing_gate_logits_are_numerical_errors);
    tcase_add_test(outputs, overflowing_expert_means_are_numerical_errors);
    tcase_add_test(outputs, overflowing_sums_are_numerical_errors);
    suite_add_tcase(suite, outputs);
    TCase *reference = tcase_create("reference");
    tcase_add_test(reference, canonicalize_refuses_an_overflowing_reference);
    tcase_add_test(reference, setters_refuse_an_overflowing_reference);
    tcase_add_test(reference, loader_refuses_a_nonzero_reference_class);
    suite_add_tcase(suite, reference);
    TCase *estimators = tcase_create("estimators");
    tcase_add_test(estimators, estimator_reporting_nan_is_refused);
    tcase_add_test(estimators, estimator_claiming_an_unrecorded_restart_is_refused);
    tcase_add_test(estimators, failed_fit_does_not_report_converged);
    suite_add_tcase(suite, estimators);
    TCase *options = tcase_create("options");
    tcase_add_test(options, option_text_is_decimal);
    suite_add_tcase(suite, options);
    TCase *invariants = tcase_create("invariants");
    tcase_set_timeout(invariants, 60);
    tcase_add_test(invariants, random_extreme_models_keep_the_invariants);
    suite_add_tcase(suite, invariants);
    return suite;
}

int main(void)
{
    return run_suite(extremes_suite());
}
