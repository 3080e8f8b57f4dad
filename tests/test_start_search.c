/*
 * The default starts (init = mixed): the search finds the optimum that k-means starts miss
 * on crossing regression curves, on every seed, and the narrow optima of a gate that switches
 * hard at change points; it works on samples of large data, for classification experts, with
 * weights; its restarts are distinct end points; and it is deterministic and independent of
 * the thread count.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "support/labels.h"
#include "support/runner.h"
#include "support/synthetic.h"

typedef struct crossing_data {
    size_t n;
    double *X; /* n x 2: x and x^2 */
    double *y;
} crossing_data;

/* Two regimes whose curves cross twice over [0, 10]: y = 5x and y = 15 + 10x - x^2. */
static const double crossing_truth[2][3] = {{0.0, 5.0, 0.0}, {15.0, 10.0, -1.0}};

static void crossing_make(crossing_data *data, size_t n, double noise, uint64_t seed)
{
    test_rng rng = {seed};
    data->n = n;
    data->X = malloc(n * 2 * sizeof(double));
    data->y = malloc(n * sizeof(double));
    ck_assert(data->X != NULL && data->y != NULL);
    for (size_t i = 0; i < n; ++i) {
        double x = 10.0 * test_uniform(&rng);
        const double *beta = crossing_truth[test_uniform(&rng) < 0.5];
        data->X[2 * i] = x;
        data->X[2 * i + 1] = x * x;
        data->y[i] = beta[0] + beta[1] * x + beta[2] * x * x + noise * test_normal(&rng);
    }
}

static void crossing_free(crossing_data *data)
{
    free(data->X);
    free(data->y);
}

static moe_model_t *gaussian_model(size_t K, size_t d)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

static moe_fitter_t *em_fitter(uint64_t seed)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, (long long)seed), MOE_OK);
    return fitter;
}

static double fitted_loglik(moe_fitter_t *fitter)
{
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    return report.loglik;
}

/* The optimum near the truth: EM started from the generating parameters. */
static double loglik_from(moe_model_t *start, size_t n, const double *X, size_t d,
                          const double *y, const double *weights)
{
    moe_fitter_t *fitter = em_fitter(0);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, start, n, X, d, y, weights), MOE_OK);
    double loglik = fitted_loglik(fitter);
    moe_fitter_free(fitter);
    return loglik;
}

/* Relative shortfall of `value` below `reference` (negative when above). */
static double shortfall(double value, double reference)
{
    return (reference - value) / fabs(reference);
}

START_TEST(crossing_curves_found_at_every_seed)
{
    crossing_data data;
    crossing_make(&data, 200, 3.0, 5);
    /* The truth's optimum: experts at the two curves, no gate information. */
    moe_model_t *truth = gaussian_model(2, 2);
    double experts[6], variances[2] = {4.0, 4.0};
    memcpy(experts, crossing_truth, sizeof experts);
    EXPECT_STATUS(moe_model_set_experts(truth, experts, 6), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(truth, variances, 2), MOE_OK);
    double best = loglik_from(truth, data.n, data.X, 2, data.y, NULL);
    double kmeans_worst = INFINITY;
    for (uint64_t seed = 0; seed < 5; ++seed) {
        moe_model_t *model = gaussian_model(2, 2);
        moe_fitter_t *fitter = em_fitter(seed);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, data.n, data.X, 2, data.y, NULL), MOE_OK);
        double loglik = fitted_loglik(fitter);
        ck_assert_msg(shortfall(loglik, best) < 1e-6, "seed %d: %.10f below the optimum %.10f",
                      (int)seed, loglik, best);
        /* The experts are the two curves (canonical order puts the larger intercept first
           or last; match by intercept). */
        EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
        int first = experts[0] > experts[3] ? 1 : 0;
        for (size_t k = 0; k < 2; ++k)
            for (size_t j = 0; j < 3; ++j) {
                double fitted = experts[(k == 0 ? first : 1 - first) * 3 + j];
                ck_assert_msg(fabs(fitted - crossing_truth[k][j]) < 1.5,
                              "seed %d expert %zu coefficient %zu: %g vs %g", (int)seed, k, j,
                              fitted, crossing_truth[k][j]);
            }
        /* What the search replaces: k-means starts on [x, y]. */
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_KMEANS), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, data.n, data.X, 2, data.y, NULL), MOE_OK);
        kmeans_worst = fmin(kmeans_worst, fitted_loglik(fitter));
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    /* The data break k-means starts, or the test would not show the search's worth. */
    ck_assert_msg(shortfall(kmeans_worst, best) > 1e-3,
                  "k-means starts reached %.10f, the optimum is %.10f", kmeans_worst, best);
    moe_model_free(truth);
    crossing_free(&data);
}
END_TEST

START_TEST(restarts_are_distinct_end_points)
{
    crossing_data data;
    crossing_make(&data, 300, 2.0, 23);
    moe_model_t *model = gaussian_model(3, 2);
    moe_fitter_t *fitter = em_fitter(4);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 4), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, data.n, data.X, 2, data.y, NULL), MOE_OK);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_ge(report.n_restarts, 1);
    ck_assert_uint_le(report.n_restarts, 4);
    ck_assert(report.converged);
    /* One restart asked for: one end point, the search's best. */
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, data.n, data.X, 2, data.y, NULL), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.n_restarts, 1);
    moe_fitter_free(fitter);
    moe_model_free(model);
    crossing_free(&data);
}
END_TEST

static void fit_parameters(moe_fitter_t *fitter, size_t n, const double *X, size_t d,
                           const double *y, double *out, size_t size)
{
    moe_model_t *model = gaussian_model(3, d);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, d, y, NULL), MOE_OK);
    size_t p = d + 1;
    ck_assert_uint_ge(size, 2 * 3 * p + 3);
    EXPECT_STATUS(moe_model_get_gate(model, out, 3 * p), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, out + 3 * p, 3 * p), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, out + 6 * p, 3), MOE_OK);
    moe_model_free(model);
}

START_TEST(large_data_searched_on_a_sample)
{
    /* n above the search's sample: the search runs on 2000 rows, the restarts on all. */
    const size_t K = 3, d = 4, n = 12000, p = d + 1;
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, K, d, 3.0, 1.5, 31);
    synthetic_data_make(&data, &truth, n, 37);
    moe_model_t *start = gaussian_model(K, d);
    EXPECT_STATUS(moe_model_set_gate(start, truth.gate, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(start, truth.experts, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(start, truth.variances, K), MOE_OK);
    double best = loglik_from(start, n, data.X, d, data.y, NULL);
    double first[2 * 3 * 5 + 3], again[2 * 3 * 5 + 3];
    for (uint64_t seed = 0; seed < 3; ++seed) {
        moe_fitter_t *fitter = em_fitter(seed);
        fit_parameters(fitter, n, data.X, d, data.y, first, sizeof first / sizeof first[0]);
        double loglik = fitted_loglik(fitter);
        ck_assert_msg(shortfall(loglik, best) < 1e-6, "seed %d: %.10f below the optimum %.10f",
                      (int)seed, loglik, best);
        /* Deterministic, and the same on two threads. */
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_THREADS, 2), MOE_OK);
        fit_parameters(fitter, n, data.X, d, data.y, again, sizeof again / sizeof again[0]);
        ck_assert_msg(memcmp(first, again, sizeof first) == 0, "seed %d: threads changed the fit",
                      (int)seed);
        moe_fitter_free(fitter);
    }
    moe_model_free(start);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

/* A shard's fit (search_shards = 8): an eighth of the search and one restart, still at the
   optimum of its rows when they are a random eighth of a well-separated data set. */
START_TEST(a_shard_searches_its_share)
{
    const size_t K = 3, d = 4, n = 3000, p = d + 1;
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, K, d, 3.0, 1.5, 41);
    synthetic_data_make(&data, &truth, n, 43);
    moe_model_t *start = gaussian_model(K, d);
    EXPECT_STATUS(moe_model_set_gate(start, truth.gate, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(start, truth.experts, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(start, truth.variances, K), MOE_OK);
    double best = loglik_from(start, n, data.X, d, data.y, NULL);
    moe_fit_report full = MOE_FIT_REPORT_INIT, shard = MOE_FIT_REPORT_INIT;
    for (int shards = 0; shards <= 8; shards += 8) {
        moe_fitter_t *fitter = em_fitter(5);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEARCH_SHARDS, shards), MOE_OK);
        moe_model_t *model = gaussian_model(K, d);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, n, data.X, d, data.y, NULL), MOE_OK);
        moe_fit_report *report = shards == 0 ? &full : &shard;
        EXPECT_STATUS(moe_fitter_get_report(fitter, report), MOE_OK);
        ck_assert_msg(shortfall(report->loglik, best) < 1e-6,
                      "search_shards %d: %.10f below the optimum %.10f", shards,
                      report->loglik, best);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
    ck_assert_uint_eq(shard.n_restarts, 1);
    ck_assert_msg(8 * shard.search_iterations <= 2 * full.search_iterations,
                  "the shard's search ran %zu iterations, the full one %zu",
                  shard.search_iterations, full.search_iterations);
    moe_model_free(start);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

START_TEST(weights_enter_the_search)
{
    /* Rows of weight zero are no data: adding garbage rows with weight zero must not move
       the fit away from the optimum of the others. */
    crossing_data data;
    crossing_make(&data, 300, 2.0, 41);
    size_t extra = 100, n = data.n + extra;
    double *X = malloc(n * 2 * sizeof(double)), *y = malloc(n * sizeof(double));
    double *weights = malloc(n * sizeof(double));
    ck_assert(X != NULL && y != NULL && weights != NULL);
    memcpy(X, data.X, data.n * 2 * sizeof(double));
    memcpy(y, data.y, data.n * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        weights[i] = i < data.n ? 1.0 : 0.0;
        if (i >= data.n) { /* far off both curves */
            X[2 * i] = 5.0;
            X[2 * i + 1] = 25.0;
            y[i] = 1e3 + (double)i;
        }
    }
    moe_model_t *truth = gaussian_model(2, 2);
    double experts[6], variances[2] = {4.0, 4.0};
    memcpy(experts, crossing_truth, sizeof experts);
    EXPECT_STATUS(moe_model_set_experts(truth, experts, 6), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(truth, variances, 2), MOE_OK);
    double best = loglik_from(truth, data.n, data.X, 2, data.y, NULL);
    for (uint64_t seed = 0; seed < 3; ++seed) {
        moe_model_t *model = gaussian_model(2, 2);
        moe_fitter_t *fitter = em_fitter(seed);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, 2, y, weights), MOE_OK);
        double loglik = fitted_loglik(fitter);
        ck_assert_msg(shortfall(loglik, best) < 1e-6, "seed %d: %.10f below the optimum %.10f",
                      (int)seed, loglik, best);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    free(X);
    free(y);
    free(weights);
    moe_model_free(truth);
    crossing_free(&data);
}
END_TEST

START_TEST(classification_experts)
{
    /* Logistic experts: the search draws random labels and k-means on x (no lines, no y). */
    const size_t K = 2, d = 3, n = 3000, p = d + 1;
    label_truth truth;
    label_truth_make(&truth, MOE_FAMILY_LOGISTIC, K, d, 0, 2.0, 3.0, 43);
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    ck_assert(X != NULL && y != NULL);
    label_data_make(&truth, n, 47, X, y);
    moe_model_t *start = label_truth_model(&truth);
    double best = loglik_from(start, n, X, d, y, NULL);
    for (uint64_t seed = 0; seed < 3; ++seed) {
        moe_model_t *model = label_model_like(&truth);
        moe_fitter_t *fitter = em_fitter(seed);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, d, y, NULL), MOE_OK);
        double loglik = fitted_loglik(fitter);
        /* Classification likelihoods have flat directions: a looser margin. */
        ck_assert_msg(shortfall(loglik, best) < 1e-4, "seed %d: %.10f below %.10f", (int)seed,
                      loglik, best);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    (void)p;
    moe_model_free(start);
    free(X);
    free(y);
    label_truth_free(&truth);
}
END_TEST

/*
 * Change points, as in the motorcycle data: one covariate, four regimes along it (a quiet
 * flat piece, then noisy lines down, up and back), each the line between two knots, and a
 * gate that switches hard at the knots. The gate's switches may sit in any gap between rows,
 * so the optima are many and narrow.
 */
typedef struct change_data {
    size_t n;
    double *X, *y;
    double knot_x[5], knot_y[5], sd[4];
} change_data;

static void change_make(change_data *data, size_t n, uint64_t seed)
{
    test_rng rng = {seed};
    double *kx = data->knot_x, *ky = data->knot_y;
    kx[0] = 0.0;
    kx[4] = 10.0;
    ky[0] = ky[1] = ky[4] = 0.0;
    for (size_t k = 1; k < 4; ++k)
        kx[k] = 2.0 * (double)k + test_uniform(&rng);
    ky[2] = -100.0 + 30.0 * test_normal(&rng);
    ky[3] = 40.0 + 20.0 * test_normal(&rng);
    data->sd[0] = 1.0 + test_uniform(&rng);
    data->sd[1] = 15.0 + 10.0 * test_uniform(&rng);
    data->sd[2] = 15.0 + 10.0 * test_uniform(&rng);
    data->sd[3] = 10.0 + 10.0 * test_uniform(&rng);
    data->n = n;
    data->X = malloc(n * sizeof(double));
    data->y = malloc(n * sizeof(double));
    ck_assert(data->X != NULL && data->y != NULL);
    for (size_t i = 0; i < n; ++i) {
        double x = 10.0 * test_uniform(&rng);
        size_t k = 0;
        while (k < 3 && x >= kx[k + 1])
            k++;
        double slope = (ky[k + 1] - ky[k]) / (kx[k + 1] - kx[k]);
        data->X[i] = x;
        data->y[i] = ky[k] + slope * (x - kx[k]) + data->sd[k] * test_normal(&rng);
    }
}

/* The generating model: expert k the line of piece k, the gate steep at the knots (region k
   where k x - sum of the first k inner knots is largest). */
static moe_model_t *change_truth(const change_data *data)
{
    moe_model_t *truth = gaussian_model(4, 1);
    double gate[8], experts[8], variances[4], steep = 20.0, knots = 0.0;
    for (size_t k = 0; k < 4; ++k) {
        if (k > 0)
            knots += data->knot_x[k];
        gate[2 * k] = -steep * knots;
        gate[2 * k + 1] = steep * (double)k;
        double slope = (data->knot_y[k + 1] - data->knot_y[k]) /
                       (data->knot_x[k + 1] - data->knot_x[k]);
        experts[2 * k] = data->knot_y[k] - slope * data->knot_x[k];
        experts[2 * k + 1] = slope;
        variances[k] = data->sd[k] * data->sd[k];
    }
    for (size_t k = 0; k < 4; ++k) { /* the last expert is the gate's reference */
        gate[2 * k] -= gate[6];
        gate[2 * k + 1] -= gate[7];
    }
    EXPECT_STATUS(moe_model_set_gate(truth, gate, 8), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(truth, experts, 8), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(truth, variances, 4), MOE_OK);
    return truth;
}

static void change_free(change_data *data)
{
    free(data->X);
    free(data->y);
}

START_TEST(change_points_found_at_every_seed)
{
    /* Data sets where the short runs' best end points fell short of the truth's optimum:
       one switch several rows off, or left soft where a hard one is better. */
    static const uint64_t data_seeds[] = {19, 21, 28};
    for (size_t s = 0; s < sizeof data_seeds / sizeof data_seeds[0]; ++s) {
        change_data data;
        change_make(&data, 130, data_seeds[s]);
        moe_model_t *truth = change_truth(&data);
        double best = loglik_from(truth, data.n, data.X, 1, data.y, NULL);
        for (uint64_t seed = 0; seed < 5; ++seed) {
            moe_model_t *model = gaussian_model(4, 1);
            moe_fitter_t *fitter = em_fitter(seed);
            EXPECT_STATUS(moe_fitter_fit(fitter, model, data.n, data.X, 1, data.y, NULL),
                          MOE_OK);
            double loglik = fitted_loglik(fitter);
            ck_assert_msg(shortfall(loglik, best) < 1e-6,
                          "data %d seed %d: %.10f below the truth's optimum %.10f",
                          (int)data_seeds[s], (int)seed, loglik, best);
            moe_fitter_free(fitter);
            moe_model_free(model);
        }
        moe_model_free(truth);
        change_free(&data);
    }
}
END_TEST

START_TEST(change_points_independent_of_threads)
{
    /* All rows are the search's (no sample), so the gate search runs its every move. */
    change_data data;
    change_make(&data, 130, 21);
    double first[2 * 4 * 2 + 4], again[2 * 4 * 2 + 4];
    for (int threads = 1; threads <= 2; ++threads) {
        double *out = threads == 1 ? first : again;
        moe_model_t *model = gaussian_model(4, 1);
        moe_fitter_t *fitter = em_fitter(0);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_THREADS, threads), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, data.n, data.X, 1, data.y, NULL), MOE_OK);
        EXPECT_STATUS(moe_model_get_gate(model, out, 8), MOE_OK);
        EXPECT_STATUS(moe_model_get_experts(model, out + 8, 8), MOE_OK);
        EXPECT_STATUS(moe_model_get_variances(model, out + 16, 4), MOE_OK);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    ck_assert_msg(memcmp(first, again, sizeof first) == 0, "threads changed the fit");
    change_free(&data);
}
END_TEST

START_TEST(option_keyword)
{
    moe_fitter_t *fitter = em_fitter(0);
    long long init = -1;
    EXPECT_STATUS(moe_fitter_get_int(fitter, MOE_OPT_INIT, &init), MOE_OK);
    ck_assert_int_eq(init, MOE_INIT_MIXED);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "init", "kmeans"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "init", "mixed"), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_int(fitter, MOE_OPT_INIT, &init), MOE_OK);
    ck_assert_int_eq(init, MOE_INIT_MIXED);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, 6), MOE_ERR_INVALID_ARGUMENT);
    moe_fitter_free(fitter);
}
END_TEST

static Suite *start_search_suite(void)
{
    Suite *suite = suite_create("start_search");
    TCase *recovery = tcase_create("recovery");
    tcase_set_timeout(recovery, 120);
    tcase_add_test(recovery, crossing_curves_found_at_every_seed);
    tcase_add_test(recovery, restarts_are_distinct_end_points);
    tcase_add_test(recovery, large_data_searched_on_a_sample);
    tcase_add_test(recovery, a_shard_searches_its_share);
    tcase_add_test(recovery, weights_enter_the_search);
    tcase_add_test(recovery, classification_experts);
    tcase_add_test(recovery, change_points_found_at_every_seed);
    tcase_add_test(recovery, change_points_independent_of_threads);
    suite_add_tcase(suite, recovery);
    TCase *options = tcase_create("options");
    tcase_add_test(options, option_keyword);
    suite_add_tcase(suite, options);
    return suite;
}

int main(void)
{
    return run_suite(start_search_suite());
}
