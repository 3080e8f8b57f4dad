/*
 * White-box tests of the gradient machinery: every family's expert gradient,
 * the gate gradient and the full (Fisher-identity) gradient against central
 * finite differences of independently computed objectives, the design's
 * largest eigenvalue, and the safe steps.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/data.h"
#include "kernels/gradient.h"
#include "model/family.h"
#include "pass/gate.h"
#include "model/model_impl.h"
#include "pass/posterior.h"
#include "pass/softmax.h"
#include "support/runner.h"
#include "support/synthetic.h"

enum { N = 60, D = 3, K = 3, C = 4 };

typedef struct problem {
    double X[N * D], y[N], weights[N], resp[N * K];
    moe_data data;
    struct moe_model *model;
    double total;
} problem;

/* A model of the family with random parameters and data whose responses suit it. */
static void problem_make(problem *pr, moe_family family, int intercept, uint64_t seed)
{
    test_rng rng = {seed};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = K;
    spec.n_features = D;
    spec.intercept = intercept;
    spec.n_classes = family == MOE_FAMILY_MULTINOMIAL ? C : 0;
    ck_assert_int_eq(moe_model_create(&pr->model, &spec), MOE_OK);
    struct moe_model *m = pr->model;
    for (size_t a = 0; a < moe_gate_size(m); ++a)
        m->gate[a] = 0.7 * test_normal(&rng);
    for (size_t a = 0; a < moe_experts_size(m); ++a)
        m->experts[a] = 0.8 * test_normal(&rng);
    ck_assert_int_eq(moe_rows_rereference(m->gate, m->n_experts, m->n_inputs), 0);
    if (m->family_ops->normalize_experts != NULL)
        ck_assert_int_eq(m->family_ops->normalize_experts(m, m->experts), 0);
    if (m->variances != NULL)
        for (size_t k = 0; k < K; ++k)
            m->variances[k] = 0.3 + test_uniform(&rng);
    pr->total = 0.0;
    for (size_t i = 0; i < N; ++i) {
        for (size_t j = 0; j < D; ++j)
            pr->X[i * D + j] = test_normal(&rng);
        pr->weights[i] = 0.2 + 1.5 * test_uniform(&rng);
        pr->total += pr->weights[i];
        double u = test_uniform(&rng);
        pr->y[i] = family == MOE_FAMILY_GAUSSIAN  ? 2.0 * test_normal(&rng)
                   : family == MOE_FAMILY_LOGISTIC ? (u < 0.4 ? 1.0 : 0.0)
                                                   : (double)(size_t)(u * C);
        double sum = 0.0;
        for (size_t k = 0; k < K; ++k)
            sum += pr->resp[i * K + k] = 0.05 + test_uniform(&rng);
        for (size_t k = 0; k < K; ++k)
            pr->resp[i * K + k] /= sum;
    }
    moe_data data = {N, D, D, intercept, pr->X, pr->y, pr->weights};
    pr->data = data;
}

/* -(1/N) sum_i w_i sum_k r_ik log f_k(y_i | x_i) + expert penalty, straight from the
   family's log-density. */
static double expert_objective(const problem *pr, double ridge)
{
    const struct moe_model *m = pr->model;
    size_t p = m->n_inputs;
    /* the family's contract is by columns: x is p x N, the densities K x N */
    double *columns = malloc(N * p * sizeof(double));
    double *logf = malloc(N * K * sizeof(double));
    double *scratch = malloc(N * K * m->expert_rows * sizeof(double));
    double *linear = malloc(N * K * m->expert_rows * sizeof(double));
    moe_data_load_columns(&pr->data, 0, N, columns);
    moe_expert_linear_columns(m, N, columns, linear);
    m->family_ops->log_density(m, N, columns, linear, pr->y, logf, scratch);
    free(linear);
    double sum = 0.0;
    for (size_t i = 0; i < N; ++i)
        for (size_t k = 0; k < K; ++k)
            sum += pr->weights[i] * pr->resp[i * K + k] * logf[k * N + i];
    free(columns);
    free(logf);
    free(scratch);
    return -sum / pr->total + moe_expert_penalty(m, ridge);
}

/* -(1/N) sum_i w_i sum_k r_ik log pi_k(x_i) + gate penalty, from the gate's log-probabilities. */
static double gate_objective(const problem *pr, double l2)
{
    const struct moe_model *m = pr->model;
    double *block = malloc(N * m->n_inputs * sizeof(double));
    double *log_pi = malloc(N * K * sizeof(double));
    moe_data_load_block(&pr->data, 0, N, block);
    moe_gate_log_proba(m, N, block, log_pi);
    double sum = 0.0;
    for (size_t i = 0; i < N * K; ++i)
        sum += pr->weights[i / K] * pr->resp[i] * log_pi[i];
    free(block);
    free(log_pi);
    return -sum / pr->total + moe_gate_penalty(m, l2);
}

/* Mean negative log-likelihood plus both penalties: what gd minimises. */
static double full_objective(const problem *pr, double l2, double ridge)
{
    moe_posterior_result result;
    ck_assert_int_eq(moe_posterior_pass(pr->model, &pr->data, NULL, 1, &result, NULL), MOE_OK);
    return -result.loglik / pr->total + moe_gate_penalty(pr->model, l2) +
           moe_expert_penalty(pr->model, ridge);
}

typedef double (*objective_fn)(const problem *pr, double a, double b);

static double expert_fn(const problem *pr, double a, double b)
{
    (void)b;
    return expert_objective(pr, a);
}

static double gate_fn(const problem *pr, double a, double b)
{
    (void)b;
    return gate_objective(pr, a);
}

/* Central difference of f in *value (in place, restored), step h. */
static double central_difference(problem *pr, double *value, objective_fn f, double a, double b,
                                 double h)
{
    double saved = *value;
    *value = saved + h;
    double up = f(pr, a, b);
    *value = saved - h;
    double down = f(pr, a, b);
    *value = saved;
    return (up - down) / (2.0 * h);
}

/* Central difference in log sigma_k^2. */
static double log_variance_difference(problem *pr, size_t k, objective_fn f, double a, double b,
                                      double h)
{
    double saved = pr->model->variances[k];
    pr->model->variances[k] = saved * exp(h);
    double up = f(pr, a, b);
    pr->model->variances[k] = saved * exp(-h);
    double down = f(pr, a, b);
    pr->model->variances[k] = saved;
    return (up - down) / (2.0 * h);
}

static void assert_close(double analytic, double numeric, const char *what, size_t index)
{
    double error = fabs(analytic - numeric);
    ck_assert_msg(error <= 1e-7 * (1.0 + fabs(numeric)),
                  "%s[%zu]: analytic %.12g, finite difference %.12g (error %.3g)", what, index,
                  analytic, numeric, error);
}

/* Reference rows of multinomial experts are fixed at zero: no derivative to check there. */
static int is_reference_row(const struct moe_model *m, size_t index)
{
    if (!m->family_ops->uses_classes)
        return 0;
    return (index / m->n_inputs) % m->expert_rows == m->expert_rows - 1;
}

static void check_expert_gradient(moe_family family, int intercept, double ridge)
{
    problem pr;
    problem_make(&pr, family, intercept, 100 + (uint64_t)family * 7 + (uint64_t)intercept);
    struct moe_model *m = pr.model;
    size_t size = moe_experts_size(m);
    double *gradient = calloc(size, sizeof(double)), log_variances[K] = {0};
    ck_assert_int_eq(m->family_ops->gradient(m, &pr.data, pr.resp, ridge, pr.total, 1, gradient,
                                             m->variances ? log_variances : NULL, NULL),
                     MOE_OK);
    for (size_t a = 0; a < size; ++a) {
        if (is_reference_row(m, a)) {
            ck_assert_double_eq(gradient[a], 0.0);
            continue;
        }
        assert_close(gradient[a],
                     central_difference(&pr, &m->experts[a], expert_fn, ridge, 0.0, 1e-5),
                     m->family_ops->name, a);
    }
    if (m->variances != NULL)
        for (size_t k = 0; k < K; ++k)
            assert_close(log_variances[k],
                         log_variance_difference(&pr, k, expert_fn, ridge, 0.0, 1e-5),
                         "log variance", k);
    free(gradient);
    moe_model_free(m);
}

START_TEST(gaussian_expert_gradient_matches_finite_differences)
{
    check_expert_gradient(MOE_FAMILY_GAUSSIAN, 1, 0.0);
    check_expert_gradient(MOE_FAMILY_GAUSSIAN, 0, 0.3);
}
END_TEST

START_TEST(logistic_expert_gradient_matches_finite_differences)
{
    check_expert_gradient(MOE_FAMILY_LOGISTIC, 1, 0.0);
    check_expert_gradient(MOE_FAMILY_LOGISTIC, 0, 0.3);
}
END_TEST

START_TEST(multinomial_expert_gradient_matches_finite_differences)
{
    check_expert_gradient(MOE_FAMILY_MULTINOMIAL, 1, 0.0);
    check_expert_gradient(MOE_FAMILY_MULTINOMIAL, 1, 0.3);
    check_expert_gradient(MOE_FAMILY_MULTINOMIAL, 0, 0.0);
}
END_TEST

START_TEST(gate_gradient_matches_finite_differences)
{
    const double penalties[] = {0.0, 0.4};
    for (size_t c = 0; c < 2; ++c) {
        problem pr;
        problem_make(&pr, MOE_FAMILY_GAUSSIAN, (int)c, 31 + c);
        struct moe_model *m = pr.model;
        size_t size = (K - 1) * m->n_inputs;
        double gradient[(K - 1) * (D + 1)];
        ck_assert_int_eq(moe_gate_gradient(m, &pr.data, pr.resp, penalties[c], 1, gradient, NULL),
                         MOE_OK);
        for (size_t a = 0; a < size; ++a)
            assert_close(gradient[a],
                         central_difference(&pr, &m->gate[a], gate_fn, penalties[c], 0.0, 1e-5),
                         "gate", a);
        moe_model_free(m);
    }
}
END_TEST

/* The Hessian the Newton solver and EM's pass assemble from their Gram "parts" against
   central differences of the analytic gradient, for the gate (K = 3: diagonal and
   off-diagonal blocks) with and without the centred penalty, and for a multinomial expert. */
START_TEST(hessian_matches_finite_differences_of_the_gradient)
{
    const double penalties[] = {0.0, 0.4};
    for (size_t c = 0; c < 3; ++c) {
        problem pr;
        problem_make(&pr, c < 2 ? MOE_FAMILY_GAUSSIAN : MOE_FAMILY_MULTINOMIAL, 1, 61 + c);
        struct moe_model *m = pr.model;
        size_t p = m->n_inputs;
        moe_softmax_problem sp = moe_gate_problem(m, &pr.data, pr.resp, penalties[c % 2]);
        sp.threads = 1;
        double *coefficients = m->gate;
        size_t classes = K;
        if (c == 2) { /* expert 1's class rows, the labels as targets, r_1 as row scale */
            sp = (moe_softmax_problem){&pr.data, C, NULL, pr.y, 0, pr.resp + 1, K, pr.total,
                                       0.3, 1, 1, NULL, NULL};
            coefficients = m->experts + 1 * C * p;
            classes = C;
        }
        size_t size = (classes - 1) * p;
        double *hessian = malloc(size * size * sizeof(double));
        double *plus = malloc(size * sizeof(double)), *minus = malloc(size * sizeof(double));
        ck_assert_int_eq(moe_softmax_hessian(&sp, coefficients, hessian, NULL), MOE_OK);
        double worst = 0.0;
        for (size_t b = 0; b < size; ++b) {
            double saved = coefficients[b], h = 1e-5;
            coefficients[b] = saved + h;
            ck_assert_int_eq(moe_softmax_gradient(&sp, coefficients, plus, NULL, NULL), MOE_OK);
            coefficients[b] = saved - h;
            ck_assert_int_eq(moe_softmax_gradient(&sp, coefficients, minus, NULL, NULL), MOE_OK);
            coefficients[b] = saved;
            for (size_t a = 0; a < size; ++a) {
                double numeric = (plus[a] - minus[a]) / (2.0 * h);
                double error = fabs(hessian[a * size + b] - numeric) / (1e-3 + fabs(numeric));
                worst = error > worst ? error : worst;
                ck_assert_double_eq(hessian[a * size + b], hessian[b * size + a]);
            }
        }
        ck_assert_msg(worst < 1e-6, "case %zu: Hessian differs from finite differences by %g", c,
                      worst);
        free(hessian);
        free(plus);
        free(minus);
        moe_model_free(m);
    }
}
END_TEST

static double full_fn(const problem *pr, double l2, double ridge)
{
    return full_objective(pr, l2, ridge);
}

/* The gradient gd and gem step along, from the posterior at the model, is the gradient of
   the mean negative log-likelihood plus penalties (Fisher identity). */
static void check_full_gradient(moe_family family, double l2, double ridge)
{
    problem pr;
    problem_make(&pr, family, 1, 500 + (uint64_t)family);
    struct moe_model *m = pr.model;
    moe_posterior_result result;
    ck_assert_int_eq(moe_posterior_pass(m, &pr.data, pr.resp, 1, &result, NULL), MOE_OK);
    moe_fit_settings settings;
    memset(&settings, 0, sizeof settings);
    settings.gate.l2 = l2;
    settings.experts.ridge = ridge;
    moe_gradient_parts gradient;
    ck_assert_int_eq(moe_gradient_parts_allocate(&gradient, m, 1, 1, 0, NULL), MOE_OK);
    ck_assert_int_eq(
        moe_gradient_parts_compute(m, &pr.data, pr.resp, &settings, pr.total, &gradient, NULL),
        MOE_OK);
    for (size_t a = 0; a < gradient.gate_size; ++a)
        assert_close(gradient.gate[a], central_difference(&pr, &m->gate[a], full_fn, l2, ridge, 1e-5),
                     "full gate", a);
    for (size_t a = 0; a < gradient.experts_size; ++a)
        if (!is_reference_row(m, a))
            assert_close(gradient.experts[a],
                         central_difference(&pr, &m->experts[a], full_fn, l2, ridge, 1e-5),
                         "full experts", a);
    for (size_t k = 0; k < gradient.variances_size; ++k)
        assert_close(gradient.log_variances[k],
                     log_variance_difference(&pr, k, full_fn, l2, ridge, 1e-5),
                     "full log variance", k);
    moe_gradient_parts_free(&gradient);
    moe_model_free(m);
}

START_TEST(full_gradient_is_the_likelihood_gradient)
{
    check_full_gradient(MOE_FAMILY_GAUSSIAN, 0.0, 0.0);
    check_full_gradient(MOE_FAMILY_GAUSSIAN, 0.2, 0.1);
    check_full_gradient(MOE_FAMILY_LOGISTIC, 0.2, 0.1);
    check_full_gradient(MOE_FAMILY_MULTINOMIAL, 0.0, 0.0);
    check_full_gradient(MOE_FAMILY_MULTINOMIAL, 0.2, 0.1);
}
END_TEST

START_TEST(lambda_max_of_a_known_design)
{
    /* Rows [1, a, b] with a = +-2, b = +-1 in all four combinations, weights 1, 1, 1, 5:
       E_w[x x'] is computed by hand and its largest eigenvalue by the characteristic
       polynomial's closed form for this structure. */
    const double X[] = {2, 1, 2, -1, -2, 1, -2, -1};
    const double weights[] = {1, 1, 1, 5};
    moe_data data = {4, 2, 2, 1, X, NULL, weights};
    double lambda = 0.0;
    ck_assert_int_eq(moe_design_lambda_max(&data, 8.0, &lambda, NULL), MOE_OK);
    /* E[1] = 1, E[a] = (2 + 2 - 2 - 10)/8 = -1, E[b] = (1 - 1 + 1 - 5)/8 = -0.5,
       E[a^2] = 4, E[b^2] = 1, E[ab] = (2 - 2 - 2 + 10)/8 = 1. */
    double M[9] = {1, -1, -0.5, -1, 4, 1, -0.5, 1, 1};
    /* Power iteration in the test, run to convergence, as an independent value. */
    double v[3] = {1, 1, 1}, estimate = 0.0;
    for (int it = 0; it < 2000; ++it) {
        double w[3] = {0, 0, 0}, norm = 0.0;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                w[a] += M[a * 3 + b] * v[b];
        for (int a = 0; a < 3; ++a)
            norm += w[a] * w[a];
        norm = sqrt(norm);
        estimate = norm;
        for (int a = 0; a < 3; ++a)
            v[a] = w[a] / norm;
    }
    ck_assert_double_eq_tol(lambda, estimate, 1e-12);
    /* Without the intercept the Gram is [[4, 1], [1, 1]]: lambda = (5 + sqrt(13)) / 2. */
    data.intercept = 0;
    ck_assert_int_eq(moe_design_lambda_max(&data, 8.0, &lambda, NULL), MOE_OK);
    ck_assert_double_eq_tol(lambda, (5.0 + sqrt(13.0)) / 2.0, 1e-12);
}
END_TEST

START_TEST(safe_steps_follow_the_curvature_bounds)
{
    problem pr;
    problem_make(&pr, MOE_FAMILY_GAUSSIAN, 1, 9);
    moe_fit_settings settings;
    memset(&settings, 0, sizeof settings);
    double lambda = 2.0;
    double smallest = pr.model->variances[0];
    for (size_t k = 1; k < K; ++k)
        smallest = fmin(smallest, pr.model->variances[k]);
    ck_assert_double_eq_tol(moe_safe_expert_step(pr.model, &settings, lambda), smallest / 2.0, 1e-15);
    ck_assert_double_eq_tol(moe_safe_gate_step(pr.model, &settings, lambda), 1.0, 1e-15); /* 1/(lam/2) */
    settings.gate.l2 = 1.0;
    settings.experts.ridge = 0.5;
    ck_assert_double_eq_tol(moe_safe_gate_step(pr.model, &settings, lambda), 0.5, 1e-15);
    ck_assert_double_eq_tol(moe_safe_expert_step(pr.model, &settings, lambda),
                            1.0 / (2.0 / smallest + 0.5), 1e-15);
    moe_model_free(pr.model);
    problem_make(&pr, MOE_FAMILY_LOGISTIC, 1, 9);
    settings.gate.l2 = settings.experts.ridge = 0.0;
    ck_assert_double_eq_tol(moe_safe_expert_step(pr.model, &settings, lambda), 2.0, 1e-15); /* 4/lam */
    moe_model_free(pr.model);
    problem_make(&pr, MOE_FAMILY_MULTINOMIAL, 1, 9);
    ck_assert_double_eq_tol(moe_safe_expert_step(pr.model, &settings, lambda), 1.0, 1e-15); /* 2/lam */
    moe_model_free(pr.model);
}
END_TEST

/* E_w[x x'] / 2 + l2 on the non-intercept diagonal, summed by hand. */
static void bound_curvature(const problem *pr, double l2, double *curvature)
{
    size_t p = pr->model->n_inputs;
    double *block = malloc(N * p * sizeof(double));
    moe_data_load_block(&pr->data, 0, N, block);
    memset(curvature, 0, p * p * sizeof(double));
    for (size_t i = 0; i < N; ++i)
        for (size_t a = 0; a < p; ++a)
            for (size_t b = 0; b < p; ++b)
                curvature[a * p + b] +=
                    0.5 * pr->weights[i] * block[i * p + a] * block[i * p + b] / pr->total;
    for (size_t j = (size_t)pr->model->intercept; j < p; ++j)
        curvature[j * p + j] += l2;
    free(block);
}

START_TEST(bound_steps_descend_to_the_newton_solution)
{
    const double penalties[] = {0.0, 0.3};
    for (size_t c = 0; c < 2; ++c) {
        problem pr;
        problem_make(&pr, MOE_FAMILY_GAUSSIAN, 1, 70 + c);
        struct moe_model *m = pr.model;
        size_t p = m->n_inputs;
        double curvature[(D + 1) * (D + 1)], work[(D + 1) * (D + 3)];
        bound_curvature(&pr, penalties[c], curvature);
        double previous = gate_objective(&pr, penalties[c]);
        for (int step = 0; step < 400; ++step) {
            ck_assert_int_eq(moe_gate_bound_step(m, &pr.data, pr.resp, penalties[c], 1, curvature,
                                                 work, NULL),
                             MOE_OK);
            double current = gate_objective(&pr, penalties[c]);
            ck_assert_msg(current <= previous + 1e-15 * fabs(previous),
                          "step %d raised Q from %.17g to %.17g", step, previous, current);
            previous = current;
        }
        /* The fixed point is the minimiser that Newton finds. */
        double bound_gate[K * (D + 1)];
        memcpy(bound_gate, m->gate, sizeof bound_gate);
        moe_gate_options options = {penalties[c], 100, 1e-14, 1, NULL};
        moe_gate_report report = MOE_GATE_REPORT_INIT;
        ck_assert_int_eq(moe_gate_newton(m, &pr.data, pr.resp, &options, &report, NULL), MOE_OK);
        for (size_t a = 0; a < (K - 1) * p; ++a)
            ck_assert_msg(fabs(bound_gate[a] - m->gate[a]) < 1e-6, "gate[%zu]: %.10f vs %.10f",
                          a, bound_gate[a], m->gate[a]);
        moe_model_free(m);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("gradients");
    TCase *finite = tcase_create("finite_differences");
    tcase_add_test(finite, gaussian_expert_gradient_matches_finite_differences);
    tcase_add_test(finite, logistic_expert_gradient_matches_finite_differences);
    tcase_add_test(finite, multinomial_expert_gradient_matches_finite_differences);
    tcase_add_test(finite, gate_gradient_matches_finite_differences);
    tcase_add_test(finite, hessian_matches_finite_differences_of_the_gradient);
    tcase_add_test(finite, full_gradient_is_the_likelihood_gradient);
    suite_add_tcase(suite, finite);
    TCase *steps = tcase_create("steps");
    tcase_add_test(steps, lambda_max_of_a_known_design);
    tcase_add_test(steps, safe_steps_follow_the_curvature_bounds);
    tcase_add_test(steps, bound_steps_descend_to_the_newton_solution);
    suite_add_tcase(suite, steps);
    return run_suite(suite);
}
