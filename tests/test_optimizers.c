/*
 * gd's optimisers (the streaming paper's baselines): the first two steps of momentum, Adam,
 * AdamW and RMSProp against the recurrences computed here by hand, from gradients that plain
 * gd with step 1 reveals (theta - theta_1 = g). Variances are held so every parameter moves
 * by the optimiser's direction alone.
 */
#include "support/runner.h"
#include "support/synthetic.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K = 2, D = 1, P = 2, N = 300, LENGTH = (K - 1) * P + K * P };

static double X[N], Y[N];

static void make_data(void)
{
    test_rng rng = {8};
    for (int i = 0; i < N; ++i) {
        X[i] = 2.0 * test_uniform(&rng) - 1.0;
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-4.0 * X[i]));
        Y[i] = (first ? 1.0 - 2.0 * X[i] : -1.0 + 2.0 * X[i]) + 0.3 * test_normal(&rng);
    }
}

static moe_model_t *model_at(const double *theta)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    double gate[K * P] = {0}, variances[K] = {0.5, 0.5};
    memcpy(gate, theta, (K - 1) * P * sizeof(double));
    ck_assert_int_eq(moe_model_set_gate(model, gate, K * P), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, theta + (K - 1) * P, K * P), MOE_OK);
    ck_assert_int_eq(moe_model_set_variances(model, variances, K), MOE_OK);
    return model;
}

static void parameters_of(const moe_model_t *model, double *theta)
{
    double gate[K * P];
    EXPECT_STATUS(moe_model_get_gate(model, gate, K * P), MOE_OK);
    memcpy(theta, gate, (K - 1) * P * sizeof(double));
    EXPECT_STATUS(moe_model_get_experts(model, theta + (K - 1) * P, K * P), MOE_OK);
}

/* Run gd from theta for `iterations` with the options; theta_out the result. */
static void run_gd(const double *theta, size_t iterations, const char *optimizer, double step,
                   double *theta_out)
{
    moe_model_t *model = model_at(theta);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "gd"), MOE_OK);
    char text[32];
    snprintf(text, sizeof text, "%zu", iterations);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "max_iter", text), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "init", "model"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "n_init", "1"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "tol", "0"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "update_variance", "0"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "optimizer", optimizer), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_STEP, step), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "weight_decay", "0.05"), MOE_OK);
    ck_assert_msg(moe_fitter_fit(fitter, model, N, X, D, Y, NULL) == MOE_OK, "%s",
                  moe_fitter_last_error(fitter));
    parameters_of(model, theta_out);
    moe_model_free(model);
    moe_fitter_free(fitter);
}

/* The gradient at theta: one plain step of size 1. */
static void gradient_at(const double *theta, double *g)
{
    double next[LENGTH];
    run_gd(theta, 1, "sgd", 1.0, next);
    for (int i = 0; i < LENGTH; ++i)
        g[i] = theta[i] - next[i];
}

/* Experts already in canonical order (by intercept), so the fit returns them unswapped. */
static const double start[LENGTH] = {0.2, 1.0, -0.5, 1.5, 0.5, -1.0};

static void expect_close(const double *expected, const double *got, const char *what, int step)
{
    for (int i = 0; i < LENGTH; ++i)
        ck_assert_msg(fabs(expected[i] - got[i]) <= 1e-9 * (1.0 + fabs(expected[i])),
                      "%s step %d, parameter %d: by hand %.15g, gd %.15g", what, step, i,
                      expected[i], got[i]);
}

START_TEST(first_steps_match_the_recurrences)
{
    make_data();
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8, decay = 0.05;
    static const char *const names[] = {"momentum", "adam", "adamw", "rmsprop"};
    for (int o = 0; o < 4; ++o) {
        /* RMSProp's first directions are g / (sqrt(1 - beta2) |g|), about 32 per unit: a
           small rate keeps the steps where the experts keep their order. */
        const double lr = o == 3 ? 0.002 : 0.05;
        double g0[LENGTH], g1[LENGTH], theta1[LENGTH], theta2[LENGTH], m[LENGTH] = {0},
                                                                       v[LENGTH] = {0};
        gradient_at(start, g0);
        for (int step = 1; step <= 2; ++step) {
            const double *theta = step == 1 ? start : theta1;
            const double *g = step == 1 ? g0 : g1;
            double *out = step == 1 ? theta1 : theta2;
            double c1 = 1.0 - pow(b1, step), c2 = 1.0 - pow(b2, step);
            for (int i = 0; i < LENGTH; ++i) {
                double direction;
                if (o == 0) {
                    m[i] = b1 * m[i] + g[i];
                    direction = m[i];
                } else if (o == 3) {
                    v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
                    direction = g[i] / (sqrt(v[i]) + eps);
                } else {
                    m[i] = b1 * m[i] + (1.0 - b1) * g[i];
                    v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
                    direction = (m[i] / c1) / (sqrt(v[i] / c2) + eps);
                    if (o == 2)
                        direction += decay * theta[i];
                }
                out[i] = theta[i] - lr * direction;
            }
            double got[LENGTH];
            run_gd(start, (size_t)step, names[o], lr, got);
            expect_close(out, got, names[o], step);
            if (step == 1)
                gradient_at(theta1, g1);
        }
    }
}
END_TEST

/* The optimisers differ from plain gd (a test of the test: the recurrences above are not
   all the identity), an adaptive optimiser's step defaults to 0.001, and Armijo does not
   combine with them. */
START_TEST(optimisers_differ_and_refuse_armijo)
{
    make_data();
    double sgd[LENGTH], adam[LENGTH], adam_default[LENGTH], adam_explicit[LENGTH];
    run_gd(start, 2, "sgd", 0.05, sgd);
    run_gd(start, 2, "adam", 0.05, adam);
    double difference = 0.0;
    for (int i = 0; i < LENGTH; ++i)
        difference += fabs(sgd[i] - adam[i]);
    ck_assert(difference > 1e-3);
    run_gd(start, 1, "adam", 0.0, adam_default);
    run_gd(start, 1, "adam", 0.001, adam_explicit);
    expect_close(adam_explicit, adam_default, "adam default step", 1);

    moe_model_t *model = model_at(start);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "gd"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "optimizer", "rmsprop"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "line_search", "armijo"), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "optimizer", "lion"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "beta1", "1"), MOE_ERR_INVALID_ARGUMENT);
    moe_fitter_free(fitter);
    /* em reads none of them. */
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "optimizer", "adam"), MOE_ERR_UNSUPPORTED);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

/* Mini-batches: every batch is a step of the optimiser; the fit stays finite and lowers the
   objective from the start. */
START_TEST(mini_batches_with_adam)
{
    make_data();
    moe_model_t *model = model_at(start);
    double before = 0.0, after = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, N, X, D, Y, NULL, &before), MOE_OK);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "gd"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "optimizer", "adam"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "batch_size", "1"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "step", "0.01"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "init", "model"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "n_init", "1"), MOE_OK);
    ck_assert_int_eq(moe_fitter_set_option(fitter, "max_iter", "20"), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(model, N, X, D, Y, NULL, &after), MOE_OK);
    ck_assert_msg(after > before, "log-likelihood %g after, %g before", after, before);
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("optimizers");
    TCase *cases = tcase_create("gd");
    tcase_set_timeout(cases, 60);
    tcase_add_test(cases, first_steps_match_the_recurrences);
    tcase_add_test(cases, optimisers_differ_and_refuse_armijo);
    tcase_add_test(cases, mini_batches_with_adam);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
