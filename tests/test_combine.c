/*
 * Sums that travel (moe_fitter_set_combine): workers that each hold a block of the rows
 * and fit in lockstep give the one-process em fit of all rows, whatever the split (blocks
 * sorted by a column here, the split that breaks a one-shot reduction), for every family,
 * with weights, offsets and restricted inputs; and a failure on one worker is every
 * worker's, with the same status and message, never a hang.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "support/labels.h"
#include "support/lockstep.h"
#include "support/mcycle.h"
#include "support/synthetic.h"

#define MAX_ROWS 4000
#define MAX_PARAMETERS 256

typedef struct problem {
    size_t n, d;
    double X[MAX_ROWS * 3];
    double y[MAX_ROWS];
    double weights[MAX_ROWS];
    int weighted;
} problem;

static problem data; /* static: too large for a stack */
static problem sorted;

/* The rows ordered by their first column, so that each worker holds its own region. */
static void sort_rows(const problem *in, problem *out)
{
    size_t *order = malloc(in->n * sizeof *order);
    ck_assert_ptr_nonnull(order);
    for (size_t i = 0; i < in->n; ++i)
        order[i] = i;
    for (size_t i = 1; i < in->n; ++i) /* insertion sort: stable and small enough */
        for (size_t j = i; j > 0 && in->X[order[j - 1] * in->d] > in->X[order[j] * in->d];
             --j) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    out->n = in->n;
    out->d = in->d;
    out->weighted = in->weighted;
    for (size_t i = 0; i < in->n; ++i) {
        memcpy(out->X + i * in->d, in->X + order[i] * in->d, in->d * sizeof(double));
        out->y[i] = in->y[order[i]];
        out->weights[i] = in->weights[order[i]];
    }
    free(order);
}

static moe_fitter_t *em_from_model(void)
{
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_THREADS, 1), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-12), MOE_OK);
    return fitter;
}

/* A start every worker holds alike: the default fit of every fifth row. */
static moe_model_t *start_for(const moe_model_spec *spec, const problem *p)
{
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, spec), MOE_OK);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 20), MOE_OK);
    size_t rows = (p->n + 4) / 5;
    double *y = malloc(rows * sizeof(double));
    ck_assert_ptr_nonnull(y);
    for (size_t i = 0; i < rows; ++i)
        y[i] = p->y[5 * i];
    moe_status status = moe_fitter_fit(fitter, model, rows, p->X, 5 * p->d, y, NULL);
    free(y);
    ck_assert_msg(status == MOE_OK, "%s", moe_last_error());
    moe_fitter_free(fitter);
    return model;
}

static size_t parameters_of(const moe_model_t *model, double *out)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    size_t gate = K * p, experts = K * moe_model_expert_rows(model) * p;
    ck_assert_uint_le(gate + experts + K, MAX_PARAMETERS);
    ck_assert_int_eq(moe_model_get_gate(model, out, gate), MOE_OK);
    ck_assert_int_eq(moe_model_get_experts(model, out + gate, experts), MOE_OK);
    size_t count = gate + experts;
    moe_family family = moe_model_family(model);
    if (family == MOE_FAMILY_GAUSSIAN || family == MOE_FAMILY_STUDENT_T) {
        ck_assert_int_eq(moe_model_get_variances(model, out + count, K), MOE_OK);
        count += K;
    }
    return count;
}

/*
 * The one-process fit and the fit of `workers` blocks (sizes in `rows`) from the same start
 * reach the same point: log-likelihood within 1e-9 relative, parameters within 1e-6 of
 * their scale, on every worker.
 */
static void check_same_fit(const moe_model_spec *spec, const problem *p, size_t workers,
                           const size_t *rows)
{
    moe_model_t *start = start_for(spec, p);
    moe_model_t *whole = NULL;
    ck_assert_int_eq(moe_model_clone(&whole, start), MOE_OK);
    moe_fitter_t *one = em_from_model();
    const double *w = p->weighted ? p->weights : NULL;
    ck_assert_msg(moe_fitter_fit(one, whole, p->n, p->X, p->d, p->y, w) == MOE_OK, "%s",
                  moe_last_error());
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    ck_assert_int_eq(moe_fitter_get_report(one, &report), MOE_OK);
    double expected[MAX_PARAMETERS], got[MAX_PARAMETERS], first_worker[MAX_PARAMETERS];
    size_t count = parameters_of(whole, expected);

    lockstep_worker team[LOCKSTEP_MAX_WORKERS];
    memset(team, 0, sizeof team);
    size_t first = 0;
    for (size_t k = 0; k < workers; ++k) {
        team[k].n = rows[k];
        team[k].X = p->X + first * p->d;
        team[k].ldx = p->d;
        team[k].y = p->y + first;
        team[k].weights = w == NULL ? NULL : w + first;
        team[k].fitter = em_from_model();
        ck_assert_int_eq(moe_model_clone(&team[k].model, start), MOE_OK);
        first += rows[k];
    }
    ck_assert_uint_eq(first, p->n);
    ck_assert_int_eq(lockstep_fit(workers, team), 0);
    for (size_t k = 0; k < workers; ++k) {
        ck_assert_msg(team[k].status == MOE_OK, "worker %zu: %s", k, team[k].message);
        moe_fit_report mine = MOE_FIT_REPORT_INIT;
        ck_assert_int_eq(moe_fitter_get_report(team[k].fitter, &mine), MOE_OK);
        ck_assert_msg(fabs(mine.loglik - report.loglik) <= 1e-9 * fabs(report.loglik),
                      "worker %zu: log-likelihood %.12g, one process %.12g", k, mine.loglik,
                      report.loglik);
        ck_assert_uint_eq(parameters_of(team[k].model, got), count);
        /* a separated gate drifts along a ridge where rounding decides the point */
        int separated = (report.warnings & MOE_WARNING_GATE_SEPARATED) != 0;
        for (size_t a = 0; a < count && !separated; ++a)
            ck_assert_msg(fabs(got[a] - expected[a]) <= 1e-6 * (1.0 + fabs(expected[a])),
                          "worker %zu, parameter %zu: %.10g, one process %.10g", k, a, got[a],
                          expected[a]);
        /* every worker holds the same bits */
        if (k == 0)
            memcpy(first_worker, got, count * sizeof(double));
        ck_assert_int_eq(memcmp(first_worker, got, count * sizeof(double)), 0);
        ck_assert_uint_gt(team[k].requests, 2);
        moe_fitter_free(team[k].fitter);
        moe_model_free(team[k].model);
    }
    moe_fitter_free(one);
    moe_model_free(whole);
    moe_model_free(start);
}

static void make_gaussian(size_t n, size_t d, uint64_t seed, int weighted)
{
    synthetic_truth truth;
    synthetic_data generated;
    synthetic_truth_make(&truth, 3, d, 3.0, 2.0, seed);
    synthetic_data_make(&generated, &truth, n, seed + 1);
    test_rng rng = {seed + 2};
    data.n = n;
    data.d = d;
    data.weighted = weighted;
    memcpy(data.X, generated.X, n * d * sizeof(double));
    memcpy(data.y, generated.y, n * sizeof(double));
    for (size_t i = 0; i < n; ++i)
        data.weights[i] = 0.5 + 1.5 * test_uniform(&rng);
    synthetic_data_free(&generated);
    synthetic_truth_free(&truth);
    sort_rows(&data, &sorted);
}

START_TEST(gaussian_sorted_blocks_give_the_one_process_fit)
{
    make_gaussian(3000, 2, 501, 1);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    spec.n_features = 2;
    size_t three[] = {500, 1600, 900}, two[] = {1500, 1500};
    check_same_fit(&spec, &sorted, 3, three);
    check_same_fit(&spec, &sorted, 2, two);
}
END_TEST

START_TEST(mcycle_sorted_by_time_gives_the_one_process_fit)
{
    data.n = MCYCLE_ROWS;
    data.d = 1;
    data.weighted = 0;
    memcpy(data.X, mcycle_times, sizeof mcycle_times);
    memcpy(data.y, mcycle_accel, sizeof mcycle_accel);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    size_t two[] = {66, 67}, four[] = {30, 40, 33, 30};
    check_same_fit(&spec, &data, 2, two);
    check_same_fit(&spec, &data, 4, four);
}
END_TEST

START_TEST(restricted_inputs_and_an_offset_give_the_one_process_fit)
{
    make_gaussian(2400, 3, 611, 0);
    unsigned char gate_sees[3] = {1, 1, 0}, experts_see[3] = {1, 0, 1};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    spec.n_features = 3;
    spec.gate_features = gate_sees;
    spec.expert_features = experts_see;
    spec.offset_feature = 1;
    size_t three[] = {800, 800, 800};
    check_same_fit(&spec, &sorted, 3, three);
}
END_TEST

static void make_labels(moe_family family, size_t classes, uint64_t seed)
{
    label_truth truth;
    label_truth_make(&truth, family, 2, 2, classes, 2.0, 2.0, seed);
    data.n = 3000;
    data.d = 2;
    data.weighted = 1;
    label_data_make(&truth, data.n, seed + 1, data.X, data.y);
    test_rng rng = {seed + 2};
    for (size_t i = 0; i < data.n; ++i)
        data.weights[i] = 0.5 + test_uniform(&rng);
    label_truth_free(&truth);
    sort_rows(&data, &sorted);
}

START_TEST(classification_experts_give_the_one_process_fit)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = 2;
    size_t three[] = {1000, 700, 1300};
    make_labels(MOE_FAMILY_LOGISTIC, 0, 701);
    spec.family = MOE_FAMILY_LOGISTIC;
    check_same_fit(&spec, &sorted, 3, three);
    make_labels(MOE_FAMILY_MULTINOMIAL, 3, 711);
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_classes = 3;
    check_same_fit(&spec, &sorted, 3, three);
}
END_TEST

START_TEST(poisson_experts_give_the_one_process_fit)
{
    test_rng rng = {801};
    data.n = 3000;
    data.d = 1;
    data.weighted = 0;
    for (size_t i = 0; i < data.n; ++i) {
        double x = 2.0 * test_uniform(&rng) - 1.0;
        int high = test_uniform(&rng) < 1.0 / (1.0 + exp(-3.0 * x));
        data.X[i] = x;
        data.y[i] = test_poisson(&rng, high ? exp(2.0 + 0.5 * x) : exp(0.2 - x));
    }
    sort_rows(&data, &sorted);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_POISSON;
    size_t two[] = {1200, 1800};
    check_same_fit(&spec, &sorted, 2, two);
}
END_TEST

START_TEST(student_t_experts_give_the_one_process_fit)
{
    make_gaussian(2000, 1, 851, 1);
    test_rng rng = {852};
    for (size_t i = 0; i < data.n; i += 20) /* gross outliers */
        data.y[i] += 30.0 * (test_uniform(&rng) - 0.5);
    sort_rows(&data, &sorted);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_STUDENT_T;
    spec.n_experts = 3;
    size_t three[] = {400, 900, 700};
    check_same_fit(&spec, &sorted, 3, three);
}
END_TEST

START_TEST(links_and_a_large_gate_give_the_one_process_fit)
{
    /* a sigmoid link: the experts' M-step is iterative (its own passes and sums) */
    test_rng rng = {871};
    data.n = 2400;
    data.d = 1;
    data.weighted = 0;
    for (size_t i = 0; i < data.n; ++i) {
        double x = 4.0 * test_uniform(&rng) - 2.0;
        int up = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.0 * x));
        double mean = 1.0 / (1.0 + exp(-(up ? 3.0 * x : 1.0 - 2.0 * x)));
        data.X[i] = x;
        data.y[i] = mean + 0.05 * test_normal(&rng);
    }
    sort_rows(&data, &sorted);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.link = MOE_LINK_SIGMOID;
    size_t two[] = {1000, 1400};
    check_same_fit(&spec, &sorted, 2, two);
}
END_TEST

START_TEST(a_gate_past_the_hessian_free_threshold_gives_the_one_process_fit)
{
    /* K (d + 1) = 4 x 31 > 104: em's default gate step is the Hessian-free one, whose
       products are passes of their own */
    enum { WIDE = 30 };
    synthetic_truth truth;
    synthetic_data generated;
    synthetic_truth_make(&truth, 4, WIDE, 4.0, 1.0, 881);
    synthetic_data_make(&generated, &truth, 3000, 882);
    static problem wide; /* 3000 x 30 values: beyond problem's three columns */
    static double X[3000 * WIDE];
    memcpy(X, generated.X, sizeof X);
    (void)wide;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 4;
    spec.n_features = WIDE;
    moe_model_t *start = NULL;
    ck_assert_int_eq(moe_model_create(&start, &spec), MOE_OK);
    moe_fitter_t *search = NULL;
    ck_assert_int_eq(moe_fitter_create(&search, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_int(search, MOE_OPT_MAX_ITER, 5), MOE_OK);
    ck_assert_msg(moe_fitter_fit(search, start, 600, X, WIDE, generated.y, NULL) == MOE_OK, "%s",
                  moe_last_error());
    moe_fitter_free(search);
    moe_model_t *whole = NULL;
    ck_assert_int_eq(moe_model_clone(&whole, start), MOE_OK);
    moe_fitter_t *one = em_from_model();
    ck_assert_int_eq(moe_fitter_fit(one, whole, 3000, X, WIDE, generated.y, NULL), MOE_OK);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    ck_assert_int_eq(moe_fitter_get_report(one, &report), MOE_OK);
    lockstep_worker team[2];
    memset(team, 0, sizeof team);
    for (size_t k = 0; k < 2; ++k) {
        team[k].n = 1500;
        team[k].X = X + k * 1500 * WIDE;
        team[k].ldx = WIDE;
        team[k].y = generated.y + k * 1500;
        team[k].fitter = em_from_model();
        ck_assert_int_eq(moe_model_clone(&team[k].model, start), MOE_OK);
    }
    ck_assert_int_eq(lockstep_fit(2, team), 0);
    for (size_t k = 0; k < 2; ++k) {
        ck_assert_msg(team[k].status == MOE_OK, "worker %zu: %s", k, team[k].message);
        moe_fit_report mine = MOE_FIT_REPORT_INIT;
        ck_assert_int_eq(moe_fitter_get_report(team[k].fitter, &mine), MOE_OK);
        ck_assert_msg(fabs(mine.loglik - report.loglik) <= 1e-9 * fabs(report.loglik),
                      "worker %zu: %.12g against %.12g", k, mine.loglik, report.loglik);
        moe_fitter_free(team[k].fitter);
        moe_model_free(team[k].model);
    }
    moe_fitter_free(one);
    moe_model_free(whole);
    moe_model_free(start);
    synthetic_data_free(&generated);
    synthetic_truth_free(&truth);
}
END_TEST

/* Three workers on blocks of `data` from one start; returns the statuses in team. */
static void run_team(lockstep_worker *team, const moe_model_spec *spec, const char *estimator)
{
    moe_model_t *start = NULL;
    ck_assert_int_eq(moe_model_create(&start, spec), MOE_OK);
    memset(team, 0, 3 * sizeof *team);
    for (size_t k = 0; k < 3; ++k) {
        team[k].n = data.n / 3;
        team[k].X = data.X + k * (data.n / 3) * data.d;
        team[k].ldx = data.d;
        team[k].y = data.y + k * (data.n / 3);
        if (strcmp(estimator, "em") == 0)
            team[k].fitter = em_from_model();
        else
            ck_assert_int_eq(moe_fitter_create(&team[k].fitter, estimator), MOE_OK);
        ck_assert_int_eq(moe_model_clone(&team[k].model, start), MOE_OK);
    }
    moe_model_free(start);
}

static void finish_team(lockstep_worker *team, moe_status expected, const char *words)
{
    ck_assert_int_eq(lockstep_fit(3, team), 0);
    for (size_t k = 0; k < 3; ++k) {
        ck_assert_msg(team[k].status == expected, "worker %zu: status %d, %s", k,
                      (int)team[k].status, team[k].message);
        ck_assert_str_eq(team[k].message, team[0].message);
        ck_assert_msg(strstr(team[k].message, words) != NULL, "worker %zu: %s", k,
                      team[k].message);
        moe_fitter_free(team[k].fitter);
        moe_model_free(team[k].model);
    }
}

START_TEST(a_row_that_fails_in_a_pass_fails_every_worker)
{
    make_gaussian(1500, 2, 901, 0);
    data.y[1234] = 1e200; /* worker 2's row 234: no expert gives it a likelihood */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    spec.n_features = 2;
    lockstep_worker team[3];
    run_team(team, &spec, "em");
    finish_team(team, MOE_ERR_NUMERICAL, "row 1234: ");
}
END_TEST

START_TEST(a_bad_value_on_one_worker_fails_every_worker)
{
    make_gaussian(1500, 2, 911, 0);
    data.X[700 * 2 + 1] = NAN; /* worker 1's row 200 */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    spec.n_features = 2;
    lockstep_worker team[3];
    run_team(team, &spec, "em");
    finish_team(team, MOE_ERR_NON_FINITE, "row 200, column 1");
}
END_TEST

static moe_status never_called(void *user, moe_combine_request *request)
{
    (void)user;
    (void)request;
    return MOE_ERR_INTERNAL;
}

START_TEST(workers_that_disagree_fail_together)
{
    ck_assert_int_eq(moe_fitter_set_combine(NULL, never_called, NULL), MOE_ERR_NULL_POINTER);
    make_gaussian(1500, 2, 921, 0);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    spec.n_features = 2;
    lockstep_worker team[3];
    run_team(team, &spec, "em");
    /* one worker would search its own start */
    ck_assert_int_eq(moe_fitter_set_int(team[1].fitter, MOE_OPT_INIT, MOE_INIT_MIXED), MOE_OK);
    finish_team(team, MOE_ERR_INVALID_ARGUMENT, "a combined fit starts where every worker");
    run_team(team, &spec, "gem");
    finish_team(team, MOE_ERR_UNSUPPORTED, "cannot combine");
    /* different models: the workers sum different things */
    run_team(team, &spec, "em");
    moe_model_free(team[2].model);
    spec.n_experts = 2;
    ck_assert_int_eq(moe_model_create(&team[2].model, &spec), MOE_OK);
    finish_team(team, MOE_ERR_INTERNAL, "the workers");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("combine");
    TCase *tc = tcase_create("combine");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gaussian_sorted_blocks_give_the_one_process_fit);
    tcase_add_test(tc, mcycle_sorted_by_time_gives_the_one_process_fit);
    tcase_add_test(tc, restricted_inputs_and_an_offset_give_the_one_process_fit);
    tcase_add_test(tc, classification_experts_give_the_one_process_fit);
    tcase_add_test(tc, poisson_experts_give_the_one_process_fit);
    tcase_add_test(tc, student_t_experts_give_the_one_process_fit);
    tcase_add_test(tc, links_and_a_large_gate_give_the_one_process_fit);
    tcase_add_test(tc, a_gate_past_the_hessian_free_threshold_gives_the_one_process_fit);
    tcase_add_test(tc, a_row_that_fails_in_a_pass_fails_every_worker);
    tcase_add_test(tc, a_bad_value_on_one_worker_fails_every_worker);
    tcase_add_test(tc, workers_that_disagree_fail_together);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
