/*
 * Estimator tables of ABI version 1 keep working: this file is compiled against the frozen
 * copy of the version-1 header (tests/abi/estimator_v1.h, libmoe 1.0.0), never against
 * moe/estimator.h,
 * and its table lives in memory of exactly the version-1 size, so that a library reading
 * one field too many is caught by AddressSanitizer.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abi/estimator_v1.h"

static int fits, partial_fits;

static moe_status v1_create(void **state)
{
    *state = NULL;
    return MOE_OK;
}

static void v1_destroy(void *state)
{
    (void)state;
}

/* Sets every expert intercept to the mean of y and records the log-likelihood. */
static moe_status v1_fit(void *state, moe_fit_context *context)
{
    (void)state;
    ++fits;
    size_t n = 0;
    const double *X = NULL, *y = NULL, *weights = NULL;
    size_t ldx = 0;
    moe_status status = moe_context_data(context, &n, &X, &ldx, &y, &weights);
    if (status != MOE_OK)
        return status;
    long long max_iter = 0;
    if ((status = moe_context_get_int(context, MOE_OPT_MAX_ITER, &max_iter)) != MOE_OK)
        return status;
    double mean = 0.0;
    for (size_t i = 0; i < n; ++i)
        mean += y[i] / (double)n;
    moe_model_t *model = moe_context_model(context);
    double experts[4] = {mean, 0.0, mean, 0.0};
    if ((status = moe_model_set_experts(model, experts, 4)) != MOE_OK)
        return status;
    double loglik = 0.0;
    if ((status = moe_model_loglik(model, n, X, ldx, y, weights, &loglik)) != MOE_OK)
        return status;
    if ((status = moe_context_iteration(context, 0, 0, loglik)) != MOE_OK)
        return status;
    return moe_context_set_result(context, 0, max_iter == 42);
}

static moe_status v1_partial_fit(void *state, moe_fit_context *context)
{
    ++partial_fits;
    return v1_fit(state, context);
}

static const char *const v1_keywords[] = {"one", "two", NULL};
static const moe_option_info v1_option_table[] = {
    {1, "mode", MOE_OPTION_KEYWORD, 0, 0.0, 0.0, 1.0, v1_keywords, "a keyword option", 0},
};
static double v1_mode = -1.0;

static moe_status v1_set_option(void *state, size_t index, double value)
{
    (void)state;
    if (index != 0)
        return MOE_ERR_INTERNAL;
    v1_mode = value;
    return MOE_OK;
}

static moe_status v1_get_option(const void *state, size_t index, double *value)
{
    (void)state;
    if (index != 0)
        return MOE_ERR_INTERNAL;
    *value = v1_mode;
    return MOE_OK;
}

START_TEST(version_1_table_works)
{
    /* Positional, as a binding that copies the struct field by field would write it. */
    const moe_estimator_ops table = {1, "version-one", v1_create, v1_destroy, v1_fit,
                                     v1_partial_fit, NULL, NULL, NULL, NULL,
                                     MOE_OPTION_BIT(MOE_OPT_MAX_ITER), 0, v1_option_table, 1,
                                     v1_set_option, v1_get_option};
    moe_estimator_ops *exact = malloc(sizeof table);
    ck_assert_ptr_nonnull(exact);
    memcpy(exact, &table, sizeof table);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, exact), MOE_OK);
    ck_assert_str_eq(moe_fitter_estimator_name(fitter), "version-one");
    ck_assert(v1_mode == 1.0); /* the table's default, set at creation */
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 42), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "gate_solver", "bound"), MOE_ERR_UNSUPPORTED);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "mode", "one"), MOE_OK);
    ck_assert(v1_mode == 0.0);
    ck_assert_uint_eq(moe_fitter_option_count(fitter), 2);

    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    enum { N = 20 };
    double X[N], y[N];
    for (int i = 0; i < N; ++i) {
        X[i] = 0.1 * i;
        y[i] = 1.0 + 0.05 * i;
    }
    ck_assert_int_eq(moe_fitter_fit(fitter, model, N, X, 1, y, NULL), MOE_OK);
    ck_assert_int_eq(fits, 1);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
    ck_assert_int_eq(report.converged, 1);
    ck_assert(isfinite(report.loglik));
    double experts[4];
    ck_assert_int_eq(moe_model_get_experts(model, experts, 4), MOE_OK);
    ck_assert(fabs(experts[0] - 1.475) < 1e-12);
    /* No flags: partial_fit still needs enough rows. */
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, 2, X, 1, y, NULL),
                     MOE_ERR_TOO_FEW_SAMPLES);
    ck_assert_int_eq(moe_fitter_partial_fit(fitter, model, N, X, 1, y, NULL), MOE_OK);
    ck_assert_int_eq(partial_fits, 1);
    /* No reset, aggregate or state: reset is harmless, aggregation unsupported, the state
       is the options. */
    ck_assert_int_eq(moe_fitter_reset(fitter), MOE_OK);
    const moe_model_t *models[1] = {model};
    ck_assert_int_eq(moe_fitter_aggregate(fitter, model, 1, models, NULL, 0, NULL, 0, NULL, NULL),
                     MOE_ERR_UNSUPPORTED);
    size_t size = 0;
    ck_assert_int_eq(moe_fitter_save_state_buffer(fitter, NULL, 0, &size), MOE_OK);
    ck_assert_uint_gt(size, 0);
    moe_model_free(model);
    moe_fitter_free(fitter);
    free(exact);
}
END_TEST

START_TEST(unknown_versions_are_refused)
{
    moe_estimator_ops table;
    ck_assert_int_eq(moe_estimator_ops_init(&table, 1), MOE_OK);
    table.name = "from-the-future";
    table.create = v1_create;
    table.destroy = v1_destroy;
    table.fit = v1_fit;
    table.abi_version = 2;
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &table), MOE_ERR_UNSUPPORTED);
    ck_assert_ptr_null(fitter);
    table.abi_version = 0;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &table), MOE_ERR_UNSUPPORTED);
    table.abi_version = 1;
    ck_assert_int_eq(moe_fitter_create_custom(&fitter, &table), MOE_OK);
    moe_fitter_free(fitter);
    ck_assert_int_eq(moe_estimator_ops_init(&table, 2), MOE_ERR_UNSUPPORTED);
    ck_assert_int_eq(moe_estimator_ops_init(&table, 0), MOE_ERR_UNSUPPORTED);
    ck_assert_int_eq(moe_estimator_ops_init(NULL, 1), MOE_ERR_NULL_POINTER);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("estimator_abi");
    TCase *tcase = tcase_create("version_1");
    tcase_add_test(tcase, version_1_table_works);
    tcase_add_test(tcase, unknown_versions_are_refused);
    suite_add_tcase(suite, tcase);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
