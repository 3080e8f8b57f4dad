/*
 * The built-in estimators are ordinary users of the public estimator contract. This program
 * compiles lib/estimators/em.c, gem.c and gd.c a second time, as outside estimators (their
 * tables renamed), with only include/ on the include path and linked against the installed
 * form of the library (libmoe.so, which exports only the public API): if any of them used an
 * internal function or header, this would not build. Each copy, through
 * moe_fitter_create_custom, must give bit for bit the built-in's fit: parameters, report
 * and trace, over families, solvers, inner steps, mini-batches, gate-only fits and threads.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "moe/estimator.h"

extern const moe_estimator_ops outside_em;
extern const moe_estimator_ops outside_gem;
extern const moe_estimator_ops outside_gd;

/* splitmix64 and Box-Muller: the test's own data, independent of the library's PRNG. */
static uint64_t next_bits(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *state)
{
    return ((double)(next_bits(state) >> 11) + 0.5) * 0x1.0p-53;
}

static double normal(uint64_t *state)
{
    return sqrt(-2.0 * log(uniform(state))) * cos(6.283185307179586 * uniform(state));
}

enum { N = 1500, D = 3, K = 3, C = 3 };

typedef struct problem {
    double X[N * D], y[N], weights[N];
    moe_family family;
} problem;

/* Three regimes split by the first covariate, each with its own response law. */
static void make_problem(problem *pr, moe_family family, uint64_t seed)
{
    pr->family = family;
    for (size_t i = 0; i < N; ++i) {
        for (size_t j = 0; j < D; ++j)
            pr->X[i * D + j] = normal(&seed);
        double x = pr->X[i * D];
        size_t regime = x < -0.5 ? 0 : x < 0.5 ? 1 : 2;
        double linear = (double)regime * 2.0 - 2.0 + (regime == 1 ? -1.5 : 1.0) * pr->X[i * D + 1];
        if (family == MOE_FAMILY_GAUSSIAN)
            pr->y[i] = linear + (0.3 + 0.2 * (double)regime) * normal(&seed);
        else if (family == MOE_FAMILY_LOGISTIC)
            pr->y[i] = uniform(&seed) < 1.0 / (1.0 + exp(-linear)) ? 1.0 : 0.0;
        else
            pr->y[i] = (double)((regime + (uniform(&seed) < 0.25 ? 1 : 0)) % C);
        pr->weights[i] = 0.5 + uniform(&seed);
    }
}

typedef struct outcome {
    moe_status status;
    unsigned char model[4096];
    size_t model_size;
    moe_fit_report report;
    double trace[2048];
    size_t trace_length;
} outcome;

static void run(moe_fitter_t *fitter, const problem *pr, const char *const *settings,
                outcome *out)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = pr->family;
    spec.n_experts = K;
    spec.n_features = D;
    spec.n_classes = pr->family == MOE_FAMILY_MULTINOMIAL ? C : 0;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    for (size_t s = 0; settings[s] != NULL; s += 2)
        ck_assert_msg(moe_fitter_set_option(fitter, settings[s], settings[s + 1]) == MOE_OK,
                      "%s = %s: %s", settings[s], settings[s + 1],
                      moe_fitter_last_error(fitter));
    memset(out, 0, sizeof *out);
    out->status = moe_fitter_fit(fitter, model, N, pr->X, D, pr->y, pr->weights);
    ck_assert_int_eq(moe_model_save_buffer(model, out->model, sizeof out->model,
                                           &out->model_size),
                     MOE_OK);
    out->report.version = MOE_FIT_REPORT_VERSION;
    ck_assert_int_eq(moe_fitter_get_report(fitter, &out->report), MOE_OK);
    ck_assert_int_eq(moe_fitter_get_trace(fitter, out->trace, 2048, &out->trace_length),
                     MOE_OK);
    moe_model_free(model);
}

/* Everything but the wall time, bit for bit. */
static void expect_same(const outcome *a, const outcome *b, const char *what)
{
    ck_assert_msg(a->status == b->status, "%s: status %d against %d", what, (int)a->status,
                  (int)b->status);
    ck_assert_msg(a->model_size == b->model_size &&
                      memcmp(a->model, b->model, a->model_size) == 0,
                  "%s: the fitted models differ", what);
    moe_fit_report x = a->report, y = b->report;
    x.seconds = y.seconds = 0.0;
    memset(x.stage_seconds, 0, sizeof x.stage_seconds);
    memset(y.stage_seconds, 0, sizeof y.stage_seconds);
    ck_assert_msg(memcmp(&x, &y, sizeof x) == 0,
                  "%s: the reports differ (iterations %zu/%zu, inner %zu/%zu, loglik %.17g/%.17g)",
                  what, x.iterations, y.iterations, x.inner_iterations, y.inner_iterations,
                  x.loglik, y.loglik);
    ck_assert_msg(a->trace_length == b->trace_length &&
                      memcmp(a->trace, b->trace, a->trace_length * sizeof(double)) == 0,
                  "%s: the traces differ", what);
    ck_assert_msg(a->status == MOE_OK && a->report.iterations > 0,
                  "%s: nothing was fitted (status %d)", what, (int)a->status);
}

static void compare(const char *builtin, const moe_estimator_ops *copy, moe_family family,
                    const char *const *settings, const char *what)
{
    static problem pr;
    make_problem(&pr, family, 2026 + (uint64_t)family);
    moe_fitter_t *original = NULL, *outside = NULL;
    ck_assert_int_eq(moe_fitter_create(&original, builtin), MOE_OK);
    ck_assert_int_eq(moe_fitter_create_custom(&outside, copy), MOE_OK);
    static outcome a, b;
    run(original, &pr, settings, &a);
    run(outside, &pr, settings, &b);
    expect_same(&a, &b, what);
    moe_fitter_free(original);
    moe_fitter_free(outside);
}

START_TEST(em_copy_matches)
{
    const char *base[] = {"n_init", "2", "max_iter", "60", NULL};
    compare("em", &outside_em, MOE_FAMILY_GAUSSIAN, base, "em gaussian");
    compare("em", &outside_em, MOE_FAMILY_LOGISTIC, base, "em logistic");
    compare("em", &outside_em, MOE_FAMILY_MULTINOMIAL, base, "em multinomial");
    const char *exact[] = {"n_init", "2", "max_iter", "60", "gate_solver", "newton", NULL};
    compare("em", &outside_em, MOE_FAMILY_GAUSSIAN, exact, "em newton");
    const char *bound[] = {"n_init", "1", "max_iter", "60", "gate_solver", "bound", NULL};
    compare("em", &outside_em, MOE_FAMILY_MULTINOMIAL, bound, "em bound");
    const char *inner[] = {"n_init", "1", "max_iter", "40", "inner_steps", "3", NULL};
    compare("em", &outside_em, MOE_FAMILY_LOGISTIC, inner, "em inner steps");
    const char *gate_only[] = {"n_init", "2", "max_iter", "40", "update_experts", "0",
                               "gate_l2", "0.01", "init", "random", NULL};
    compare("em", &outside_em, MOE_FAMILY_GAUSSIAN, gate_only, "em gate only");
    const char *threads[] = {"n_init", "1", "max_iter", "40", "threads", "2", NULL};
    compare("em", &outside_em, MOE_FAMILY_GAUSSIAN, threads, "em two threads");
}
END_TEST

START_TEST(gem_and_gd_copies_match)
{
    const char *base[] = {"n_init", "1", "max_iter", "80", NULL};
    compare("gem", &outside_gem, MOE_FAMILY_GAUSSIAN, base, "gem gaussian");
    compare("gem", &outside_gem, MOE_FAMILY_MULTINOMIAL, base, "gem multinomial");
    compare("gd", &outside_gd, MOE_FAMILY_LOGISTIC, base, "gd logistic");
    const char *armijo[] = {"n_init", "1", "max_iter", "40", "line_search", "armijo",
                            "step", "0.5", NULL};
    compare("gd", &outside_gd, MOE_FAMILY_GAUSSIAN, armijo, "gd armijo");
    const char *batches[] = {"n_init", "1", "max_iter", "10", "batch_size", "100", NULL};
    compare("gd", &outside_gd, MOE_FAMILY_GAUSSIAN, batches, "gd mini-batches");
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("outside_estimators");
    TCase *tcase = tcase_create("copies");
    tcase_set_timeout(tcase, 120);
    tcase_add_test(tcase, em_copy_matches);
    tcase_add_test(tcase, gem_and_gd_copies_match);
    suite_add_tcase(suite, tcase);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
