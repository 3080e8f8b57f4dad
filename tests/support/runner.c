#include "runner.h"

#include <math.h>
#include <stdlib.h>

int run_suite(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

moe_fitter_t *test_fitter(const char *estimator, unsigned long long seed)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, estimator), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, (long long)seed), MOE_OK);
    return fitter;
}

double *test_fit_trace(const moe_fitter_t *fitter, size_t *length)
{
    EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, length), MOE_OK);
    double *trace = malloc((*length > 0 ? *length : 1) * sizeof(double));
    ck_assert_ptr_nonnull(trace);
    EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, *length, length), MOE_OK);
    return trace;
}

void test_assert_em_monotone(moe_model_t *model, size_t n, const double *X, size_t d,
                             const double *y, const double *weights, unsigned long long seed,
                             size_t min_length)
{
    moe_fitter_t *fitter = test_fitter("em", seed);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "init", "random"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, n, X, d, y, weights), MOE_OK);
    size_t length = 0;
    double *trace = test_fit_trace(fitter, &length);
    ck_assert_uint_ge(length, min_length);
    for (size_t t = 1; t < length; ++t)
        ck_assert_msg(trace[t] >= trace[t - 1] - 1e-12 * fabs(trace[t - 1]),
                      "em lowered the log-likelihood at iteration %zu: %.15g -> %.15g", t,
                      trace[t - 1], trace[t]);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_uint_eq(report.monotonicity_violations, 0);
    free(trace);
    moe_fitter_free(fitter);
}
