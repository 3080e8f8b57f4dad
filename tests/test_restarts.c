/*
 * The restart loop's early end for restarts that cannot catch the best (kernels/iterate.c):
 * a restart from a poor start, after the best restart converged, stops long before it
 * would alone, and the fit is the best restart's; run first, with no best to compare, the
 * same poor restart runs as it does alone.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "support/runner.h"
#include "support/synthetic.h"

enum { K = 3, D = 1, P = D + 1 };

typedef struct starts {
    const synthetic_truth *truth;
    int poor_first;
} starts;

/* The truth, or a poor start: two experts on the first line, one across the others. */
static moe_status start_at(void *user, moe_model_t *model, size_t restart, const moe_rows *rows)
{
    (void)rows;
    const starts *s = user;
    const synthetic_truth *truth = s->truth;
    int poor = (restart == 0) == (s->poor_first != 0);
    double experts[K * P], gate[K * P] = {0.0}, variances[K] = {1.0, 1.0, 1.0};
    for (size_t a = 0; a < K * P; ++a)
        experts[a] = truth->experts[a];
    if (poor) {
        experts[1 * P + 0] = truth->experts[0] + 0.5;
        experts[1 * P + 1] = truth->experts[1];
        experts[2 * P + 0] = 0.5 * (truth->experts[1 * P] + truth->experts[2 * P]);
        experts[2 * P + 1] = 0.5 * (truth->experts[1 * P + 1] + truth->experts[2 * P + 1]);
    } else {
        for (size_t a = 0; a < K * P; ++a)
            gate[a] = truth->gate[a];
        for (size_t k = 0; k < K; ++k)
            variances[k] = truth->variances[k];
    }
    moe_status status = moe_model_set_gate(model, gate, K * P);
    if (status == MOE_OK)
        status = moe_model_set_experts(model, experts, K * P);
    if (status == MOE_OK)
        status = moe_model_set_variances(model, variances, K);
    return status;
}

static moe_fit_report fit_with(const synthetic_data *data, const synthetic_truth *truth,
                               size_t restarts, int poor_first)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = test_fitter("em", 0);
    starts s = {truth, poor_first};
    EXPECT_STATUS(moe_fitter_set_start(fitter, start_at, &s), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, (long long)restarts), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 2000), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-10), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, data->n, data->X, D, data->y, NULL), MOE_OK);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    moe_fitter_free(fitter);
    moe_model_free(model);
    return report;
}

START_TEST(a_poor_restart_ends_early_and_the_best_stands)
{
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, K, D, 4.0, 2.0, 61);
    synthetic_data_make(&data, &truth, 4000, 62);
    moe_fit_report best = fit_with(&data, &truth, 1, 0);
    moe_fit_report poor = fit_with(&data, &truth, 1, 1);
    /* The premise: the poor start alone ends well below the best, after many iterations. */
    ck_assert_msg(poor.loglik < best.loglik - 10.0 && poor.iterations > 60,
                  "the poor start ends at %.4f after %zu iterations, the truth's at %.4f",
                  poor.loglik, poor.iterations, best.loglik);
    moe_fit_report both = fit_with(&data, &truth, 2, 0);
    ck_assert_uint_eq(both.best_restart, 0);
    ck_assert_msg(fabs(both.loglik - best.loglik) <= 1e-9 * fabs(best.loglik),
                  "%.10f against the best restart's %.10f", both.loglik, best.loglik);
    size_t second = both.total_iterations - both.iterations;
    ck_assert_msg(2 * second <= poor.iterations,
                  "the poor restart ran %zu iterations after the best, %zu alone", second,
                  poor.iterations);
    /* First, with nothing to compare against, it runs its course. */
    moe_fit_report reversed = fit_with(&data, &truth, 2, 1);
    ck_assert_uint_eq(reversed.best_restart, 1);
    ck_assert_uint_eq(reversed.total_iterations - reversed.iterations, poor.iterations);
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("restarts");
    TCase *tc = tcase_create("restarts");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_poor_restart_ends_early_and_the_best_stands);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
