/*
 * The distributed estimator ot and the reduction behind moe_fitter_aggregate
 * (docs/ARCHITECTURE.md, "Distributed learning"): the transport objective never increases,
 * a single model and identical models are fixed points, the reduced model approaches the
 * truth as the data grow, the baselines, dead components, threads, and what is refused.
 */
#include "support/runner.h"
#include "support/synthetic.h"
#include "fitter/fitter_impl.h"
#include "kernels/start_search.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 3, P = 4 };

/* Two experts: y = 1 + 2 x3 or -1 + x1 - x3, the gate 2 x1 - x2, sd 0.5. */
static void sample(size_t n, uint64_t seed, double **X, double **y)
{
    test_rng rng = {seed * 31 + 7};
    *X = malloc(n * D * sizeof(double));
    *y = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        double *x = *X + i * D;
        for (int j = 0; j < D; ++j)
            x[j] = test_normal(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-(2.0 * x[0] - x[1])));
        (*y)[i] = (first ? 1.0 + 2.0 * x[2] : -1.0 + x[0] - x[2]) + 0.5 * test_normal(&rng);
    }
}

static const double truth_experts[2 * P] = {-1, 1, 0, -1, 1, 0, 0, 2};

static moe_model_t *gaussian(size_t K)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

static moe_model_t *random_model(size_t K, test_rng *rng)
{
    moe_model_t *model = gaussian(K);
    double gate[8 * P] = {0}, experts[8 * P], variances[8];
    for (size_t k = 0; k < K; ++k) {
        for (int j = 0; j < P; ++j) {
            experts[k * P + j] = 2.0 * test_normal(rng);
            if (k + 1 < K)
                gate[k * P + j] = test_normal(rng);
        }
        variances[k] = 0.2 + test_uniform(rng);
    }
    EXPECT_STATUS(moe_model_set_gate(model, gate, K * P), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, experts, K * P), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, K), MOE_OK);
    return model;
}

static moe_fitter_t *ot_fitter(const char *const *options)
{
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "ot"), MOE_OK);
    for (size_t i = 0; options != NULL && options[i] != NULL; i += 2)
        ck_assert_msg(moe_fitter_set_option(fitter, options[i], options[i + 1]) == MOE_OK,
                      "%s = %s: %s", options[i], options[i + 1], moe_fitter_last_error(fitter));
    return fitter;
}

/* Expert error to the truth, matched by the better of the two orders. */
static double expert_error(const moe_model_t *model)
{
    double experts[2 * P];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 2 * P), MOE_OK);
    double same = 0.0, swapped = 0.0;
    for (int j = 0; j < P; ++j) {
        same += pow(experts[j] - truth_experts[j], 2) + pow(experts[P + j] - truth_experts[P + j], 2);
        swapped += pow(experts[j] - truth_experts[P + j], 2) + pow(experts[P + j] - truth_experts[j], 2);
    }
    return sqrt(same < swapped ? same : swapped);
}

/* The report's log-likelihood is the returned model's on the call's rows for every method
   (the trace is the negated transport cost, a few nats, not that): a fit on its rows, an
   aggregation on its support rows with responses; without responses there is none (NaN). */
START_TEST(report_gives_the_model_loglik)
{
    double *X, *y;
    sample(4000, 11, &X, &y);
    static const char *const methods[] = {"transport", "middle", "average"};
    for (size_t m = 0; m < 3; ++m) {
        const char *const options[] = {"seed", "3", "shards", "4", "reduction", methods[m], NULL};
        moe_fitter_t *fitter = ot_fitter(options);
        moe_model_t *model = gaussian(2);
        ck_assert_msg(moe_fitter_fit(fitter, model, 4000, X, D, y, NULL) == MOE_OK, "%s: %s",
                      methods[m], moe_fitter_last_error(fitter));
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
        double loglik = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, 4000, X, D, y, NULL, &loglik), MOE_OK);
        ck_assert_msg(fabs(report.loglik - loglik) <= 1e-9 * fabs(loglik),
                      "%s fit: the report says %.10g, the model's log-likelihood is %.10g",
                      methods[m], report.loglik, loglik);
        /* the fitted model reduced with itself, judged on 1000 rows */
        const moe_model_t *const locals[2] = {model, model};
        moe_model_t *target = gaussian(2);
        ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 2, locals, NULL, 1000, X, D, y,
                                              NULL),
                         MOE_OK);
        EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
        EXPECT_STATUS(moe_model_loglik(target, 1000, X, D, y, NULL, &loglik), MOE_OK);
        ck_assert_msg(fabs(report.loglik - loglik) <= 1e-9 * fabs(loglik),
                      "%s aggregation: the report says %.10g, the model's is %.10g", methods[m],
                      report.loglik, loglik);
        ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 2, locals, NULL, 1000, X, D, NULL,
                                              NULL),
                         MOE_OK);
        EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
        ck_assert_msg(isnan(report.loglik), "%s aggregation without y: the report says %g",
                      methods[m], report.loglik);
        moe_model_free(target);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    free(X);
    free(y);
}
END_TEST

/* Refusals say why in the caller's terms: a model of another family names that family
   and the estimator to use (not the paper's logistic update for t experts), and models
   whose inputs differ from the target's (an offset on one, none on another) are named, not
   "invalid argument". */
START_TEST(refusals_name_the_reason)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_STUDENT_T;
    spec.n_features = D;
    moe_model_t *student = NULL;
    ck_assert_int_eq(moe_model_create(&student, &spec), MOE_OK);
    double *X, *y;
    sample(400, 5, &X, &y);
    moe_fitter_t *fitter = ot_fitter(NULL);
    EXPECT_STATUS(moe_fitter_fit(fitter, student, 400, X, D, y, NULL), MOE_ERR_UNSUPPORTED);
    const char *message = moe_fitter_last_error(fitter);
    ck_assert_msg(strstr(message, "not t experts") != NULL && strstr(message, "em") != NULL &&
                      strstr(message, "logistic") == NULL,
                  "%s", message);
    spec.family = MOE_FAMILY_POISSON;
    moe_model_t *plain = NULL, *exposed = NULL;
    ck_assert_int_eq(moe_model_create(&plain, &spec), MOE_OK);
    spec.offset_feature = 2;
    ck_assert_int_eq(moe_model_create(&exposed, &spec), MOE_OK);
    for (size_t i = 0; i < 400; ++i)
        y[i] = (double)(i % 5);
    const moe_model_t *const mixed[2] = {plain, exposed};
    for (int target = 0; target < 2; ++target) {
        EXPECT_STATUS(moe_fitter_aggregate(fitter, target ? exposed : plain, 2, mixed, NULL, 400,
                                           X, D, y, NULL),
                      MOE_ERR_DIMENSION);
        message = moe_fitter_last_error(fitter);
        ck_assert_msg(strstr(message, target ? "model 0" : "model 1") != NULL &&
                          strstr(message, "offset") != NULL,
                      "%s", message);
    }
    moe_fitter_free(fitter);
    moe_model_free(student);
    moe_model_free(plain);
    moe_model_free(exposed);
    free(X);
    free(y);
}
END_TEST

/* Reducing random local models (three experts each) to two: the transport objective never
   increases, whatever the start. */
START_TEST(transport_objective_never_increases)
{
    test_rng rng = {17};
    double *X, *y;
    sample(500, 3, &X, &y);
    for (int trial = 0; trial < 6; ++trial) {
        moe_model_t *locals[4];
        for (int m = 0; m < 4; ++m)
            locals[m] = random_model(3, &rng);
        moe_model_t *target = gaussian(2);
        char seed[8];
        snprintf(seed, sizeof seed, "%d", trial);
        const char *const options[] = {"seed", seed, "tol", "0", "max_iter", "200", NULL};
        moe_fitter_t *fitter = ot_fitter(options);
        ck_assert_msg(moe_fitter_aggregate(fitter, target, 4, (const moe_model_t *const *)locals,
                                           NULL, 500, X, D, NULL, NULL) == MOE_OK,
                      "%s", moe_fitter_last_error(fitter));
        size_t length = 0;
        EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
        double *trace = malloc(length * sizeof(double));
        EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, length, &length), MOE_OK);
        ck_assert_uint_ge(length, 2);
        for (size_t t = 1; t < length; ++t)
            ck_assert_msg(trace[t] >= trace[t - 1] - 1e-9 * fabs(trace[t - 1]),
                          "trial %d: the objective rose from %.12g to %.12g", trial, -trace[t - 1],
                          -trace[t]);
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
        ck_assert_uint_eq(report.monotonicity_violations, 0);
        double parameters[2 * P];
        EXPECT_STATUS(moe_model_get_gate(target, parameters, 2 * P), MOE_OK);
        for (int i = 0; i < 2 * P; ++i)
            ck_assert(isfinite(parameters[i]));
        free(trace);
        moe_model_free(target);
        moe_fitter_free(fitter);
        for (int m = 0; m < 4; ++m)
            moe_model_free(locals[m]);
    }
    free(X);
    free(y);
}
END_TEST

/* One model, or several copies of it, reduced to its own number of experts: the same
   experts and variances, and the gate its own to the Newton tolerance. */
START_TEST(a_model_is_its_own_reduction)
{
    test_rng rng = {23};
    double *X, *y;
    sample(2000, 4, &X, &y);
    moe_model_t *model = random_model(3, &rng);
    for (int copies = 1; copies <= 3; copies += 2) {
        const moe_model_t *locals[3] = {model, model, model};
        moe_model_t *target = gaussian(3);
        moe_fitter_t *fitter = ot_fitter(NULL);
        ck_assert_int_eq(moe_fitter_aggregate(fitter, target, (size_t)copies, locals, NULL, 2000,
                                              X, D, NULL, NULL),
                         MOE_OK);
        /* Both in canonical order: compare directly. */
        moe_model_t *ordered = NULL;
        EXPECT_STATUS(moe_model_clone(&ordered, model), MOE_OK);
        EXPECT_STATUS(moe_model_canonicalize(ordered), MOE_OK);
        double a[3 * P], b[3 * P];
        EXPECT_STATUS(moe_model_get_experts(ordered, a, 3 * P), MOE_OK);
        EXPECT_STATUS(moe_model_get_experts(target, b, 3 * P), MOE_OK);
        for (int i = 0; i < 3 * P; ++i)
            ck_assert_msg(fabs(a[i] - b[i]) < 1e-9, "copies %d: expert %d %.12g vs %.12g", copies,
                          i, a[i], b[i]);
        EXPECT_STATUS(moe_model_get_variances(ordered, a, 3), MOE_OK);
        EXPECT_STATUS(moe_model_get_variances(target, b, 3), MOE_OK);
        for (int i = 0; i < 3; ++i)
            ck_assert_double_eq_tol(a[i], b[i], 1e-9);
        EXPECT_STATUS(moe_model_get_gate(ordered, a, 3 * P), MOE_OK);
        EXPECT_STATUS(moe_model_get_gate(target, b, 3 * P), MOE_OK);
        for (int i = 0; i < 3 * P; ++i)
            ck_assert_msg(fabs(a[i] - b[i]) < 1e-4, "copies %d: gate %d %.8g vs %.8g", copies, i,
                          a[i], b[i]);
        moe_model_free(ordered);
        moe_model_free(target);
        moe_fitter_free(fitter);
    }
    moe_model_free(model);
    free(X);
    free(y);
}
END_TEST

/* ot on the data: close to em's fit, better with more data, the same for any thread count,
   and one shard is em's fit. */
START_TEST(fits_approach_the_truth)
{
    static const size_t sizes[] = {4000, 16000, 64000};
    double errors[3];
    for (int s = 0; s < 3; ++s) {
        double *X, *y;
        sample(sizes[s], 10 + (uint64_t)s, &X, &y);
        const char *const options[] = {"shards", "4", "n_init", "2", NULL};
        moe_fitter_t *fitter = ot_fitter(options);
        moe_model_t *model = gaussian(2);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, sizes[s], X, D, y, NULL), MOE_OK);
        errors[s] = expert_error(model);
        if (s == 1) {
            /* threads change nothing */
            const char *const threaded[] = {"shards", "4", "n_init", "2", "threads", "2", NULL};
            moe_fitter_t *other = ot_fitter(threaded);
            moe_model_t *again = gaussian(2);
            ck_assert_int_eq(moe_fitter_fit(other, again, sizes[s], X, D, y, NULL), MOE_OK);
            unsigned char first[2048], second[2048];
            size_t a = 0, b = 0;
            EXPECT_STATUS(moe_model_save_buffer(model, first, sizeof first, &a), MOE_OK);
            EXPECT_STATUS(moe_model_save_buffer(again, second, sizeof second, &b), MOE_OK);
            ck_assert(a == b && memcmp(first, second, a) == 0);
            moe_model_free(again);
            moe_fitter_free(other);
        }
        moe_model_free(model);
        moe_fitter_free(fitter);
        free(X);
        free(y);
    }
    ck_assert_msg(errors[0] > errors[1] && errors[1] > errors[2] && errors[2] < 0.05,
                  "expert errors %g, %g, %g", errors[0], errors[1], errors[2]);
}
END_TEST

/* The baselines: the average of copies is the model; the middle one of three is chosen. */
START_TEST(baselines)
{
    test_rng rng = {29};
    double *X, *y;
    sample(1000, 5, &X, &y);
    moe_model_t *model = random_model(2, &rng);
    EXPECT_STATUS(moe_model_canonicalize(model), MOE_OK);
    const moe_model_t *copies[2] = {model, model};
    const char *const average[] = {"reduction", "average", NULL};
    moe_fitter_t *fitter = ot_fitter(average);
    moe_model_t *target = gaussian(2);
    ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 2, copies, NULL, 0, NULL, D, NULL, NULL),
                     MOE_OK);
    double a[2 * P], b[2 * P];
    EXPECT_STATUS(moe_model_get_experts(model, a, 2 * P), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(target, b, 2 * P), MOE_OK);
    for (int i = 0; i < 2 * P; ++i)
        ck_assert_double_eq_tol(a[i], b[i], 1e-12);
    moe_fitter_free(fitter);
    /* Three models on a line of expert coefficients: the middle one is the middle. */
    moe_model_t *models[3];
    for (int m = 0; m < 3; ++m) {
        EXPECT_STATUS(moe_model_clone(&models[m], model), MOE_OK);
        double experts[2 * P];
        EXPECT_STATUS(moe_model_get_experts(model, experts, 2 * P), MOE_OK);
        for (int i = 0; i < 2 * P; ++i)
            experts[i] += 0.3 * (m - 1);
        EXPECT_STATUS(moe_model_set_experts(models[m], experts, 2 * P), MOE_OK);
    }
    const char *const middle[] = {"reduction", "middle", NULL};
    fitter = ot_fitter(middle);
    ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 3, (const moe_model_t *const *)models,
                                          NULL, 1000, X, D, NULL, NULL),
                     MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(models[1], a, 2 * P), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(target, b, 2 * P), MOE_OK);
    for (int i = 0; i < 2 * P; ++i)
        ck_assert_double_eq_tol(a[i], b[i], 1e-12);
    moe_fitter_free(fitter);
    for (int m = 0; m < 3; ++m)
        moe_model_free(models[m]);
    moe_model_free(target);
    moe_model_free(model);
    free(X);
    free(y);
}
END_TEST

/* A reduced component no local component reaches is re-seeded and counted, never NaN; and
   what the reduction refuses. */
START_TEST(dead_components_and_refusals)
{
    test_rng rng = {31};
    double *X, *y;
    sample(800, 6, &X, &y);
    /* Four local experts, all equal: the second reduced expert has nothing to take. */
    moe_model_t *flat = random_model(2, &rng);
    double experts[2 * P], variances[2] = {0.5, 0.5};
    EXPECT_STATUS(moe_model_get_experts(flat, experts, 2 * P), MOE_OK);
    memcpy(experts + P, experts, P * sizeof(double));
    EXPECT_STATUS(moe_model_set_experts(flat, experts, 2 * P), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(flat, variances, 2), MOE_OK);
    const moe_model_t *locals[2] = {flat, flat};
    moe_fitter_t *fitter = ot_fitter(NULL);
    moe_model_t *target = gaussian(2);
    ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 2, locals, NULL, 800, X, D, NULL, NULL),
                     MOE_OK);
    double parameters[2 * P];
    EXPECT_STATUS(moe_model_get_experts(target, parameters, 2 * P), MOE_OK);
    for (int i = 0; i < 2 * P; ++i)
        ck_assert(isfinite(parameters[i]));
    /* Refused: the transport without support rows, more experts than the locals hold, a
       logistic model, posterior targets without responses, averages of unequal K. */
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 2, locals, NULL, 0, NULL, D, NULL, NULL),
                  MOE_ERR_EMPTY_INPUT);
    moe_model_t *five = gaussian(5);
    EXPECT_STATUS(moe_fitter_aggregate(fitter, five, 2, locals, NULL, 800, X, D, NULL, NULL),
                  MOE_ERR_UNSUPPORTED);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "gate_targets", "posterior"), MOE_OK);
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 2, locals, NULL, 800, X, D, NULL, NULL),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 2, locals, NULL, 800, X, D, y, NULL),
                     MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "reduction", "average"), MOE_OK);
    moe_model_t *three = random_model(3, &rng);
    const moe_model_t *mixed[2] = {flat, three};
    EXPECT_STATUS(moe_fitter_aggregate(fitter, target, 2, mixed, NULL, 800, X, D, NULL, NULL),
                  MOE_ERR_UNSUPPORTED);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_LOGISTIC;
    spec.n_features = D;
    moe_model_t *logistic = NULL;
    ck_assert_int_eq(moe_model_create(&logistic, &spec), MOE_OK);
    const moe_model_t *logistic_locals[1] = {logistic};
    EXPECT_STATUS(moe_fitter_aggregate(fitter, logistic, 1, logistic_locals, NULL, 800, X, D,
                                       NULL, NULL),
                  MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "shards", "0"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "reduction", "median"), MOE_ERR_INVALID_ARGUMENT);
    moe_model_free(logistic);
    moe_model_free(three);
    moe_model_free(five);
    moe_model_free(target);
    moe_model_free(flat);
    moe_fitter_free(fitter);
    free(X);
    free(y);
}
END_TEST

/* The reduction's experts and variances as the scalar loops of 0.1.0 computed them (a mean
   per (component, support row) pair, Grams and costs' logarithms per row; now products of
   the whole support per expert and one logarithm per pair of components), from the same
   start: the products change rounding only. (The values were computed by this file's
   reduction with 0.1.0's assign and update put back.) */
static const double scalar_experts[2 * P] = {
    -4.1094908279882221, 0.62439407074308828, 0.53862590678528321, 0.50020251880430311,
    2.7955842849203125,  -0.16155919641757613, 1.1501525552374738, -0.91047851340883046};
static const double scalar_variances[2] = {5.3553928134272875, 8.449556395264052};

START_TEST(reduction_matches_the_scalar_path)
{
    test_rng rng = {41};
    double *X, *y;
    sample(300, 9, &X, &y);
    moe_model_t *locals[3];
    for (int m = 0; m < 3; ++m)
        locals[m] = random_model(3, &rng);
    moe_model_t *target = gaussian(2);
    const char *const options[] = {"seed", "5", "tol", "1e-14", "local_tol", "0", "max_iter", "40", NULL};
    moe_fitter_t *fitter = ot_fitter(options);
    ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 3, (const moe_model_t *const *)locals,
                                          NULL, 300, X, D, NULL, NULL),
                     MOE_OK);
    double experts[2 * P], variances[2];
    EXPECT_STATUS(moe_model_get_experts(target, experts, 2 * P), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(target, variances, 2), MOE_OK);
    if (getenv("OT_GOLDEN") != NULL) {
        for (int i = 0; i < 2 * P; ++i)
            printf("%.17g, ", experts[i]);
        printf("\n%.17g, %.17g\n", variances[0], variances[1]);
    }
    for (int i = 0; i < 2 * P; ++i)
        ck_assert_msg(fabs(experts[i] - scalar_experts[i]) <= 1e-12 * (1.0 + fabs(scalar_experts[i])),
                      "expert coefficient %d: %.17g, the scalar path %.17g", i, experts[i],
                      scalar_experts[i]);
    for (int k = 0; k < 2; ++k)
        ck_assert_msg(fabs(variances[k] - scalar_variances[k]) <= 1e-12 * scalar_variances[k],
                      "variance %d: %.17g, the scalar path %.17g", k, variances[k],
                      scalar_variances[k]);
    moe_fitter_free(fitter);
    moe_model_free(target);
    for (int m = 0; m < 3; ++m)
        moe_model_free(locals[m]);
    free(X);
    free(y);
}
END_TEST

/* A local fit's start search costs its share of a full one (rows times EM iterations of
   the short runs): the search was a fixed cost, most of a small shard's fit. ot's
   search_shards sets the share its local fits take (unset, -1: a share by their rows). */
START_TEST(local_search_shrinks_with_the_rows)
{
    double *X, *y;
    sample(24000, 11, &X, &y);
    double cost[2];
    double experts[2][2 * P];
    for (int scaled = 0; scaled < 2; ++scaled) {
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        if (scaled)
            EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEARCH_SHARDS, 8), MOE_OK);
        moe_model_t *model = gaussian(2);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, 24000, X, D, y, NULL), MOE_OK);
        cost[scaled] = fitter->search_cost;
        EXPECT_STATUS(moe_model_get_experts(model, experts[scaled], 2 * P), MOE_OK);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    ck_assert_msg(cost[0] > 0.0 && cost[1] <= 0.5 * cost[0],
                  "the search on a share of 1/8 cost %g rows x iterations, the full one %g",
                  cost[1], cost[0]);
    /* A local fit is a local one however many rows its shard has: at most half the full
       search, and one restart (its lesser end points crept; the screen guards the rest). */
    ck_assert_double_le(moe_search_share_for_rows(1000000), 0.5);
    {
        moe_fitter_t *fitter = NULL;
        ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
        /* a share by its rows, as ot's local fits take: 24000 of about 55,000 */
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEARCH_SHARDS, -1), MOE_OK);
        moe_model_t *model = gaussian(2);
        ck_assert_int_eq(moe_fitter_fit(fitter, model, 24000, X, D, y, NULL), MOE_OK);
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
        ck_assert_uint_eq(report.n_restarts, 1);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    /* ot with one shard and the search of one of eight is that local fit (on the rows in
       ot's shuffled order: the same optimum). */
    const char *const options[] = {"shards", "1", "search_shards", "8", NULL};
    moe_fitter_t *ot = ot_fitter(options);
    moe_model_t *model = gaussian(2);
    ck_assert_int_eq(moe_fitter_fit(ot, model, 24000, X, D, y, NULL), MOE_OK);
    double local[2 * P];
    EXPECT_STATUS(moe_model_get_experts(model, local, 2 * P), MOE_OK);
    for (int i = 0; i < 2 * P; ++i)
        ck_assert_double_eq_tol(local[i], experts[1][i], 1e-3);
    EXPECT_STATUS(moe_fitter_set_option(ot, "search_shards", "-2"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(ot, "local_tol", "2"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(ot, "local_tol", "x"), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_fitter_set_option(ot, "local_tol", "0"), MOE_OK);
    moe_model_free(model);
    moe_fitter_free(ot);
    free(X);
    free(y);
}
END_TEST

/* A local fit that ended in a poor optimum is left out of the reduction when the support
   rows have responses (option screen): seven shards at the truth and one far from it reduce
   to the truth; the poor one pooled in (screen = 0, or no responses) pulls the experts. */
START_TEST(a_poor_local_fit_is_left_out)
{
    double *X, *y;
    sample(3000, 17, &X, &y);
    const double gate[2 * P] = {0, -2, 1, 0, 0, 0, 0, 0}, variances[2] = {0.25, 0.25};
    moe_model_t *truth = gaussian(2);
    EXPECT_STATUS(moe_model_set_gate(truth, gate, 2 * P), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(truth, truth_experts, 2 * P), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(truth, variances, 2), MOE_OK);
    test_rng rng = {5};
    moe_model_t *poor = random_model(2, &rng);
    const moe_model_t *locals[8] = {truth, truth, truth, poor, truth, truth, truth, truth};
    double best = 0.0;
    EXPECT_STATUS(moe_model_loglik(truth, 3000, X, D, y, NULL, &best), MOE_OK);
    double gaps[3];
    for (int variant = 0; variant < 3; ++variant) {
        const char *const off[] = {"screen", "0", NULL};
        moe_fitter_t *fitter = ot_fitter(variant == 1 ? off : NULL);
        moe_model_t *target = gaussian(2);
        ck_assert_int_eq(moe_fitter_aggregate(fitter, target, 8, locals, NULL, 3000, X, D,
                                              variant == 2 ? NULL : y, NULL),
                         MOE_OK);
        double loglik = 0.0;
        EXPECT_STATUS(moe_model_loglik(target, 3000, X, D, y, NULL, &loglik), MOE_OK);
        gaps[variant] = (best - loglik) / 3000.0;
        moe_model_free(target);
        moe_fitter_free(fitter);
    }
    ck_assert_msg(fabs(gaps[0]) < 0.005 && gaps[1] > 0.05 && gaps[2] > 0.05,
                  "gaps to the truth per row: screened %g, screen = 0 %g, no responses %g",
                  gaps[0], gaps[1], gaps[2]);
    moe_fitter_t *fitter = ot_fitter(NULL);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "screen", "-1"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "screen", "x"), MOE_ERR_INVALID_ARGUMENT);
    moe_fitter_free(fitter);
    moe_model_free(truth);
    moe_model_free(poor);
    free(X);
    free(y);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("ot");
    TCase *cases = tcase_create("reduction");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, transport_objective_never_increases);
    tcase_add_test(cases, report_gives_the_model_loglik);
    tcase_add_test(cases, refusals_name_the_reason);
    tcase_add_test(cases, a_model_is_its_own_reduction);
    tcase_add_test(cases, fits_approach_the_truth);
    tcase_add_test(cases, baselines);
    tcase_add_test(cases, dead_components_and_refusals);
    tcase_add_test(cases, reduction_matches_the_scalar_path);
    tcase_add_test(cases, local_search_shrinks_with_the_rows);
    tcase_add_test(cases, a_poor_local_fit_is_left_out);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
