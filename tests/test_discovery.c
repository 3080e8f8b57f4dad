/*
 * What bindings and tools ask the library instead of hard-coding it: the built-in estimators,
 * family and link names, the prediction width, hard assignments and parameter copies.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "moe/kernels.h"
#include "support/runner.h"

START_TEST(every_listed_estimator_creates_a_fitter)
{
    size_t count = moe_estimator_count();
    ck_assert_uint_ge(count, 6);
    const char *expected[] = { "em", "gem", "gd", "cqt", "ismm", "ot" };
    for (size_t i = 0; i < count; ++i) {
        const char *name = moe_estimator_name(i);
        const char *description = moe_estimator_description(i);
        ck_assert_ptr_nonnull(name);
        ck_assert_ptr_nonnull(description);
        ck_assert_uint_gt(strlen(description), 10);
        ck_assert_ptr_null(strchr(description, '\n'));
        if (i < 6)
            ck_assert_str_eq(name, expected[i]);
        moe_fitter_t *fitter = NULL;
        EXPECT_STATUS(moe_fitter_create(&fitter, name), MOE_OK);
        ck_assert_str_eq(moe_fitter_estimator_name(fitter), name);
        moe_fitter_free(fitter);
    }
    ck_assert_ptr_null(moe_estimator_name(count));
    ck_assert_ptr_null(moe_estimator_description(count));
    ck_assert_ptr_null(moe_estimator_name((size_t)-1));
}
END_TEST

START_TEST(family_and_link_names_round_trip)
{
    const moe_family families[] = { MOE_FAMILY_GAUSSIAN, MOE_FAMILY_LOGISTIC,
                                    MOE_FAMILY_MULTINOMIAL, MOE_FAMILY_POISSON,
                                    MOE_FAMILY_STUDENT_T, MOE_FAMILY_BINOMIAL,
                                    MOE_FAMILY_GAMMA };
    const char *family_names[] = { "gaussian", "logistic", "multinomial", "poisson", "t",
                                   "binomial", "gamma" };
    ck_assert_uint_eq(moe_family_count(), 7);
    ck_assert_int_eq(moe_family_at(7), 0);
    for (size_t i = 0; i < 7; ++i) {
        ck_assert_int_eq(moe_family_at(i), families[i]);
        ck_assert_str_eq(moe_family_name(families[i]), family_names[i]);
        moe_family back = (moe_family)0;
        EXPECT_STATUS(moe_family_from_name(family_names[i], &back), MOE_OK);
        ck_assert_int_eq(back, families[i]);
    }
    const moe_link links[] = { MOE_LINK_IDENTITY, MOE_LINK_SIGMOID, MOE_LINK_RELU };
    const char *link_names[] = { "identity", "sigmoid", "relu" };
    for (size_t i = 0; i < 3; ++i) {
        ck_assert_str_eq(moe_link_name(links[i]), link_names[i]);
        moe_link back = (moe_link)7;
        EXPECT_STATUS(moe_link_from_name(link_names[i], &back), MOE_OK);
        ck_assert_int_eq(back, links[i]);
    }
    ck_assert_ptr_null(moe_family_name((moe_family)0));
    ck_assert_ptr_null(moe_family_name((moe_family)8));
    for (size_t i = 0; i < moe_family_count(); ++i)
        ck_assert_ptr_nonnull(moe_family_description(moe_family_at(i)));
    ck_assert_ptr_null(moe_family_description((moe_family)0));
    ck_assert_ptr_null(moe_family_description((moe_family)8));
    ck_assert_ptr_null(moe_link_name((moe_link)3));
    ck_assert_ptr_null(moe_link_name((moe_link)-1));
    moe_family family = MOE_FAMILY_LOGISTIC;
    EXPECT_STATUS(moe_family_from_name("Gaussian", &family), MOE_ERR_NOT_FOUND);
    ck_assert_int_eq(family, MOE_FAMILY_LOGISTIC);
    ck_assert_ptr_nonnull(strstr(moe_last_error(), "Gaussian"));
    EXPECT_STATUS(moe_family_from_name(NULL, &family), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_family_from_name("gaussian", NULL), MOE_ERR_NULL_POINTER);
    moe_link link = MOE_LINK_RELU;
    EXPECT_STATUS(moe_link_from_name("", &link), MOE_ERR_NOT_FOUND);
    ck_assert_int_eq(link, MOE_LINK_RELU);
    EXPECT_STATUS(moe_link_from_name(NULL, &link), MOE_ERR_NULL_POINTER);
}
END_TEST

static moe_model_t *make_model(moe_family family, size_t classes, size_t K, size_t d,
                               unsigned seed)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = K;
    spec.n_features = d;
    spec.n_classes = classes;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    size_t p = d + 1, rows = moe_model_expert_rows(model);
    double *values = malloc(K * rows * p * sizeof(double));
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0);
    for (size_t i = 0; i < K * p; ++i)
        values[i] = 2.0 * moe_rng_normal(&rng);
    EXPECT_STATUS(moe_model_set_gate(model, values, K * p), MOE_OK);
    for (size_t i = 0; i < K * rows * p; ++i)
        values[i] = 2.0 * moe_rng_normal(&rng);
    EXPECT_STATUS(moe_model_set_experts(model, values, K * rows * p), MOE_OK);
    free(values);
    return model;
}

/* n rows of d features, more than one row block of the library's passes. */
static double *make_rows(size_t n, size_t d, unsigned seed)
{
    double *X = malloc(n * d * sizeof(double));
    moe_rng rng;
    moe_rng_seed(&rng, seed, 1);
    for (size_t i = 0; i < n * d; ++i)
        X[i] = moe_rng_normal(&rng);
    return X;
}

START_TEST(prediction_width_is_what_predict_writes)
{
    moe_model_t *gaussian = make_model(MOE_FAMILY_GAUSSIAN, 0, 2, 2, 1);
    moe_model_t *logistic = make_model(MOE_FAMILY_LOGISTIC, 0, 2, 2, 2);
    moe_model_t *multinomial = make_model(MOE_FAMILY_MULTINOMIAL, 4, 3, 2, 3);
    ck_assert_uint_eq(moe_model_prediction_width(gaussian), 1);
    ck_assert_uint_eq(moe_model_prediction_width(logistic), 1);
    ck_assert_uint_eq(moe_model_prediction_width(multinomial), 4);
    ck_assert_uint_eq(moe_model_prediction_width(NULL), 0);
    double *X = make_rows(5, 2, 4), out[20];
    EXPECT_STATUS(moe_model_predict(multinomial, 5, X, 2, out, 20), MOE_OK);
    EXPECT_STATUS(moe_model_predict(multinomial, 5, X, 2, out, 19), MOE_ERR_DIMENSION);
    free(X);
    moe_model_free(gaussian);
    moe_model_free(logistic);
    moe_model_free(multinomial);
}
END_TEST

/* classify agrees with the probabilities predict gives, row by row, and with accuracy. */
static void check_classify(moe_model_t *model, size_t n, size_t d)
{
    size_t width = moe_model_prediction_width(model);
    double *X = make_rows(n, d, 11);
    double *proba = malloc(n * width * sizeof(double));
    size_t *classes = malloc(n * sizeof(size_t));
    double *labels = malloc(n * sizeof(double));
    EXPECT_STATUS(moe_model_predict(model, n, X, d, proba, n * width), MOE_OK);
    EXPECT_STATUS(moe_model_classify(model, n, X, d, classes, n), MOE_OK);
    for (size_t i = 0; i < n; ++i) {
        const double *row = proba + i * width;
        if (width == 1) {
            ck_assert_uint_eq(classes[i], row[0] > 0.5 ? 1u : 0u);
        } else {
            for (size_t c = 0; c < width; ++c) {
                ck_assert(row[classes[i]] >= row[c]);
                if (c < classes[i])
                    ck_assert(row[c] < row[classes[i]]);
            }
        }
        labels[i] = (double)classes[i];
    }
    double accuracy = 0.0;
    EXPECT_STATUS(moe_model_accuracy(model, n, X, d, labels, NULL, &accuracy), MOE_OK);
    ck_assert(accuracy == 1.0);
    free(X);
    free(proba);
    free(classes);
    free(labels);
}

START_TEST(classify_follows_the_predictive_distribution)
{
    moe_model_t *logistic = make_model(MOE_FAMILY_LOGISTIC, 0, 3, 3, 5);
    moe_model_t *multinomial = make_model(MOE_FAMILY_MULTINOMIAL, 5, 3, 3, 6);
    check_classify(logistic, 1000, 3);
    check_classify(multinomial, 1000, 3);
    moe_model_t *gaussian = make_model(MOE_FAMILY_GAUSSIAN, 0, 2, 3, 7);
    double *X = make_rows(4, 3, 8);
    size_t classes[4];
    EXPECT_STATUS(moe_model_classify(gaussian, 4, X, 3, classes, 4), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_model_classify(logistic, 4, X, 3, classes, 3), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_classify(logistic, 4, X, 3, NULL, 4), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_classify(NULL, 4, X, 3, classes, 4), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_classify(logistic, 4, NULL, 3, classes, 4), MOE_ERR_NULL_POINTER);
    X[5] = NAN;
    EXPECT_STATUS(moe_model_classify(logistic, 4, X, 3, classes, 4), MOE_ERR_NON_FINITE);
    free(X);
    moe_model_free(logistic);
    moe_model_free(multinomial);
    moe_model_free(gaussian);
}
END_TEST

/* The expert of largest value in a row of K (ties to the lower). */
static size_t argmax(const double *row, size_t K)
{
    size_t best = 0;
    for (size_t k = 1; k < K; ++k)
        if (row[k] > row[best])
            best = k;
    return best;
}

START_TEST(cluster_takes_the_posterior_or_the_gate)
{
    size_t n = 1000, d = 2, K = 4;
    moe_model_t *model = make_model(MOE_FAMILY_GAUSSIAN, 0, K, d, 9);
    double *X = make_rows(n, d, 10), *y = make_rows(n, 1, 12);
    double *proba = malloc(n * K * sizeof(double));
    size_t *experts = malloc(n * sizeof(size_t));
    EXPECT_STATUS(moe_model_posterior(model, n, X, d, y, proba, n * K), MOE_OK);
    EXPECT_STATUS(moe_model_cluster(model, n, X, d, y, experts, n), MOE_OK);
    size_t differ = 0;
    for (size_t i = 0; i < n; ++i)
        ck_assert_uint_eq(experts[i], argmax(proba + i * K, K));
    EXPECT_STATUS(moe_model_gate_proba(model, n, X, d, proba, n * K), MOE_OK);
    EXPECT_STATUS(moe_model_cluster(model, n, X, d, NULL, experts, n), MOE_OK);
    for (size_t i = 0; i < n; ++i) {
        ck_assert_uint_eq(experts[i], argmax(proba + i * K, K));
        differ += experts[i] != 0;
    }
    ck_assert_uint_gt(differ, 0);
    EXPECT_STATUS(moe_model_cluster(model, n, X, d, y, experts, n - 1), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_cluster(model, n, X, d, y, NULL, n), MOE_ERR_NULL_POINTER);
    y[700] = INFINITY;
    EXPECT_STATUS(moe_model_cluster(model, n, X, d, y, experts, n), MOE_ERR_NON_FINITE);
    ck_assert_ptr_nonnull(strstr(moe_last_error(), "700"));
    free(X);
    free(y);
    free(proba);
    free(experts);
    moe_model_free(model);
}
END_TEST

START_TEST(copy_parameters_is_exact_and_checks_the_structure)
{
    moe_model_t *source = make_model(MOE_FAMILY_MULTINOMIAL, 3, 3, 2, 13);
    moe_model_t *target = make_model(MOE_FAMILY_MULTINOMIAL, 3, 3, 2, 14);
    EXPECT_STATUS(moe_model_copy_parameters(target, source), MOE_OK);
    size_t buffer_a_size = 3 * 3 * 3;
    double a[27], b[27];
    EXPECT_STATUS(moe_model_get_experts(source, a, buffer_a_size), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(target, b, buffer_a_size), MOE_OK);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    EXPECT_STATUS(moe_model_get_gate(source, a, 9), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(target, b, 9), MOE_OK);
    ck_assert(memcmp(a, b, 9 * sizeof(double)) == 0);

    moe_model_t *gaussian = make_model(MOE_FAMILY_GAUSSIAN, 0, 3, 2, 15);
    moe_model_t *other = make_model(MOE_FAMILY_GAUSSIAN, 0, 3, 2, 16);
    double variances[3] = { 0.5, 2.0, 3.0 }, back[3];
    EXPECT_STATUS(moe_model_set_variances(gaussian, variances, 3), MOE_OK);
    EXPECT_STATUS(moe_model_copy_parameters(other, gaussian), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(other, back, 3), MOE_OK);
    ck_assert(memcmp(variances, back, sizeof back) == 0);

    EXPECT_STATUS(moe_model_get_gate(target, a, 9), MOE_OK);
    EXPECT_STATUS(moe_model_copy_parameters(target, gaussian), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_get_gate(target, b, 9), MOE_OK);
    ck_assert(memcmp(a, b, 9 * sizeof(double)) == 0);
    moe_model_t *wider = make_model(MOE_FAMILY_GAUSSIAN, 0, 3, 3, 17);
    EXPECT_STATUS(moe_model_copy_parameters(wider, gaussian), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_copy_parameters(NULL, gaussian), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_copy_parameters(gaussian, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_copy_parameters(gaussian, gaussian), MOE_OK);
    moe_model_free(source);
    moe_model_free(target);
    moe_model_free(gaussian);
    moe_model_free(other);
    moe_model_free(wider);
}
END_TEST

/* Each init function gives what its macro gives, for every version it knows, and refuses
   the others. */
START_TEST(init_functions_match_their_macros)
{
    moe_criteria criteria, criteria_macro = MOE_CRITERIA_INIT;
    memset(&criteria, 0xab, sizeof criteria);
    EXPECT_STATUS(moe_criteria_init(&criteria, MOE_CRITERIA_VERSION), MOE_OK);
    ck_assert_uint_eq(criteria.version, criteria_macro.version);
    ck_assert(criteria.loglik == 0.0 && criteria.n_params == 0.0 && criteria.n_obs == 0.0);
    ck_assert(criteria.aic == 0.0 && criteria.bic == 0.0 && criteria.icl == 0.0 &&
              criteria.entropy == 0.0);
    EXPECT_STATUS(moe_criteria_init(&criteria, 0), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_criteria_init(&criteria, MOE_CRITERIA_VERSION + 1), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_criteria_init(NULL, 1), MOE_ERR_NULL_POINTER);

    moe_estep_result result, result_macro = MOE_ESTEP_RESULT_INIT;
    memset(&result, 0xab, sizeof result);
    EXPECT_STATUS(moe_estep_result_init(&result, MOE_ESTEP_RESULT_VERSION), MOE_OK);
    ck_assert_uint_eq(result.version, result_macro.version);
    ck_assert(result.loglik == 0.0 && result.entropy == 0.0 && result.total_weight == 0.0);
    ck_assert(result.gate_objective == 0.0 && result.previous_gate_objective == 0.0);
    ck_assert_int_eq(result.previous_gate_separated, 0);
    EXPECT_STATUS(moe_estep_result_init(&result, 0), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_estep_result_init(NULL, 1), MOE_ERR_NULL_POINTER);

    moe_iteration_ops ops;
    memset(&ops, 0xab, sizeof ops);
    EXPECT_STATUS(moe_iteration_ops_init(&ops, MOE_ITERATION_OPS_VERSION), MOE_OK);
    ck_assert_uint_eq(ops.version, MOE_ITERATION_OPS_VERSION);
    ck_assert(ops.iterate == NULL && ops.evaluate == NULL);
    EXPECT_STATUS(moe_iteration_ops_init(&ops, MOE_ITERATION_OPS_VERSION + 1),
                  MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_iteration_ops_init(NULL, 1), MOE_ERR_NULL_POINTER);

    /* A criteria struct from the init function is accepted by the call. */
    moe_model_t *model = make_model(MOE_FAMILY_GAUSSIAN, 0, 2, 1, 21);
    double X[4] = { -1.0, 0.0, 0.5, 1.0 }, y[4] = { 0.3, -0.2, 1.0, 0.1 };
    EXPECT_STATUS(moe_criteria_init(&criteria, 1), MOE_OK);
    EXPECT_STATUS(moe_model_criteria(model, 4, X, 1, y, NULL, &criteria), MOE_OK);
    ck_assert(isfinite(criteria.bic) && criteria.n_obs == 4.0);
    moe_model_free(model);
}
END_TEST

/* Every field of a report from the init function is zero (the macro's values). */
static void expect_empty_report(const moe_fit_report *report)
{
    ck_assert_int_eq(report->status, MOE_OK);
    ck_assert(report->iterations == 0 && report->total_iterations == 0 &&
              report->loglik == 0.0 && report->converged == 0 && report->n_restarts == 0 &&
              report->best_restart == 0 && report->seconds == 0.0);
    ck_assert(report->monotonicity_violations == 0 && report->worst_relative_decrease == 0.0 &&
              report->degenerate_events == 0 && report->inner_iterations == 0 &&
              report->gradient_evaluations == 0 && report->ridge_fallbacks == 0 &&
              report->line_search_failures == 0 && report->floored_variances == 0 &&
              report->separation_events == 0 && report->step == 0.0 &&
              report->gate_step == 0.0);
    ck_assert(report->samples_seen == 0 && report->batches == 0 && report->stages == 0 &&
              report->stage_seconds[0] == 0.0 && report->stage_seconds[1] == 0.0 &&
              report->stage_seconds[2] == 0.0);
    ck_assert(report->search_runs == 0 && report->search_iterations == 0 &&
              report->stream_steps == 0 && report->stream_rows == 0 &&
              report->stream_loglik == 0.0 && report->warnings == 0 &&
              report->gate_transition == 0.0);
}

/* The fit report's init function: version 1 is the only layout (1.0.0 is the first
   release), anything else is refused and leaves the struct alone. */
START_TEST(fit_report_init_matches_its_macro)
{
    moe_fit_report report, macro = MOE_FIT_REPORT_INIT;
    ck_assert_uint_eq(macro.version, 1);
    expect_empty_report(&macro);
    memset(&report, 0xab, sizeof report);
    EXPECT_STATUS(moe_fit_report_init(&report, MOE_FIT_REPORT_VERSION), MOE_OK);
    ck_assert_uint_eq(report.version, 1);
    expect_empty_report(&report);

    unsigned int unknown[] = { 0, 2, MOE_FIT_REPORT_VERSION + 1 };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
        memset(&report, 0xab, sizeof report);
        EXPECT_STATUS(moe_fit_report_init(&report, unknown[i]), MOE_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(moe_last_error(), "fit report version") != NULL, "'%s'",
                      moe_last_error());
        ck_assert_uint_eq(report.version, 0xababababu);
    }
    EXPECT_STATUS(moe_fit_report_init(NULL, 1), MOE_ERR_NULL_POINTER);

    /* The call takes it: a fitter that has not fitted says so rather than refusing it. */
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "em"), MOE_OK);
    EXPECT_STATUS(moe_fit_report_init(&report, 1), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(moe_last_error(), "no fit has run") != NULL, "'%s'", moe_last_error());
    moe_fitter_free(fitter);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("discovery");
    TCase *tc = tcase_create("discovery");
    tcase_add_test(tc, every_listed_estimator_creates_a_fitter);
    tcase_add_test(tc, family_and_link_names_round_trip);
    tcase_add_test(tc, prediction_width_is_what_predict_writes);
    tcase_add_test(tc, classify_follows_the_predictive_distribution);
    tcase_add_test(tc, cluster_takes_the_posterior_or_the_gate);
    tcase_add_test(tc, copy_parameters_is_exact_and_checks_the_structure);
    tcase_add_test(tc, init_functions_match_their_macros);
    tcase_add_test(tc, fit_report_init_matches_its_macro);
    suite_add_tcase(suite, tc);
    return run_suite(suite);
}
