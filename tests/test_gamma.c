/*
 * Gamma experts (MOE_FAMILY_GAMMA, log link, a shape per expert): the log-likelihood against
 * the density written out here, the gradient in the coefficients and in log shape against
 * central differences, the M-step (ECM: exact coefficients at the shape, then the shape's
 * maximum likelihood; never lowers the objective), em's monotone log-likelihood, recovery of
 * known experts and shapes, gem and gd, save/load bit for bit, predict, the observed
 * information (shapes included) against second differences, the estimators that refuse the
 * family and the responses it refuses.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/family.h"
#include "model/model_impl.h"
#include "support/runner.h"
#include "support/synthetic.h"

enum { N = 2000, SMALL = 300 };

static double X[N], Y[N], W[N];

/* A Gamma(shape, 1) draw: Marsaglia and Tsang for shape >= 1. */
static double gamma_draw(test_rng *rng, double shape)
{
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double z = test_normal(rng), v = 1.0 + c * z;
        if (v <= 0.0)
            continue;
        v = v * v * v;
        double u = test_uniform(rng);
        if (log(u) < 0.5 * z * z + d - d * v + d * log(v))
            return d * v;
    }
}

/* The truth: gate P(expert 0 | x) = sigmoid(2.5 x), experts log mu = 1 + 0.6 x with shape
   4 and 2.5 - 0.4 x with shape 10, x uniform on (-2, 2). */
static void make_data(size_t n, uint64_t seed)
{
    test_rng rng = {seed};
    for (size_t i = 0; i < n; ++i) {
        double x = -2.0 + 4.0 * test_uniform(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.5 * x));
        double eta = first ? 1.0 + 0.6 * x : 2.5 - 0.4 * x, shape = first ? 4.0 : 10.0;
        X[i] = x;
        Y[i] = gamma_draw(&rng, shape) * exp(eta) / shape;
        W[i] = 0.5 + test_uniform(&rng);
    }
}

static moe_model_t *new_model(size_t K)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_GAMMA;
    spec.n_experts = K;
    spec.n_features = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

static void set_random(moe_model_t *model, test_rng *rng)
{
    size_t K = moe_model_n_experts(model), p = 2;
    double gate[16], experts[16], shapes[8];
    for (size_t a = 0; a < K * p; ++a) {
        gate[a] = 0.7 * test_normal(rng);
        experts[a] = 1.0 + 0.5 * test_normal(rng);
    }
    for (size_t k = 0; k < K; ++k)
        shapes[k] = 1.0 + 5.0 * test_uniform(rng);
    EXPECT_STATUS(moe_model_set_gate(model, gate, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, experts, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_degrees(model, shapes, K), MOE_OK);
}

/* dgamma(y, shape = a, rate = a / mu, log = TRUE) written out. */
static double log_gamma_density(double y, double eta, double a)
{
    double mu = exp(eta);
    return a * log(a / mu) + (a - 1.0) * log(y) - a * y / mu - lgamma(a);
}

START_TEST(names_and_spec)
{
    ck_assert_str_eq(moe_family_name(MOE_FAMILY_GAMMA), "gamma");
    moe_family family = MOE_FAMILY_GAUSSIAN;
    EXPECT_STATUS(moe_family_from_name("gamma", &family), MOE_OK);
    ck_assert_int_eq(family, MOE_FAMILY_GAMMA);
    moe_model_t *model = new_model(2);
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 + 4 + 2); /* gate, experts, shapes */
    ck_assert_int_eq(moe_model_scale_kind(model), MOE_SCALE_SHAPE);
    double shapes[2] = {0.0, 0.0}, variances[2];
    EXPECT_STATUS(moe_model_get_degrees(model, shapes, 2), MOE_OK);
    ck_assert(shapes[0] == 1.0 && shapes[1] == 1.0); /* the exponential */
    ck_assert_int_ne(moe_model_get_variances(model, variances, 2), MOE_OK);
    shapes[1] = 0.01;
    EXPECT_STATUS(moe_model_set_degrees(model, shapes, 2), MOE_ERR_INVALID_ARGUMENT);
    double linear[1] = {1.0}, mean[1];
    EXPECT_STATUS(moe_model_inverse_link(model, 1, linear, mean), MOE_OK);
    ck_assert_double_eq_tol(mean[0], exp(1.0), 1e-15);
    moe_model_free(model);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_GAMMA;
    spec.link = MOE_LINK_RELU;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_UNSUPPORTED);
}
END_TEST

START_TEST(loglik_is_the_density_written_out)
{
    make_data(SMALL, 3);
    test_rng rng = {4};
    moe_model_t *model = new_model(2);
    set_random(model, &rng);
    double experts[4], shapes[2], proba[2 * SMALL], loglik = 0.0, expected = 0.0;
    EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(model, shapes, 2), MOE_OK);
    EXPECT_STATUS(moe_model_gate_proba(model, SMALL, X, 1, proba, 2 * SMALL), MOE_OK);
    for (size_t i = 0; i < SMALL; ++i) {
        double row = 0.0;
        for (size_t k = 0; k < 2; ++k)
            row += proba[i * 2 + k] *
                   exp(log_gamma_density(Y[i], experts[2 * k] + experts[2 * k + 1] * X[i],
                                         shapes[k]));
        expected += W[i] * log(row);
    }
    EXPECT_STATUS(moe_model_loglik(model, SMALL, X, 1, Y, W, &loglik), MOE_OK);
    ck_assert_double_eq_tol(loglik, expected, 1e-10 * fabs(expected));
    moe_model_free(model);
}
END_TEST

/* -(1/N) sum_i w_i sum_k r_ik log f_k(y_i) + (ridge/2) |slopes|^2, written out. */
static double surrogate(const struct moe_model *m, size_t n, const double *resp, double ridge)
{
    size_t K = m->n_experts;
    double sum = 0.0, total = 0.0;
    for (size_t i = 0; i < n; ++i) {
        total += W[i];
        for (size_t k = 0; k < K; ++k) {
            double eta = m->experts[k * 2] + m->experts[k * 2 + 1] * X[i];
            sum += W[i] * resp[i * K + k] * log_gamma_density(Y[i], eta, m->degrees[k]);
        }
    }
    double penalty = 0.0;
    for (size_t k = 0; k < K; ++k)
        penalty += m->experts[k * 2 + 1] * m->experts[k * 2 + 1];
    return -sum / total + 0.5 * ridge * penalty;
}

static void random_resp(size_t n, size_t K, double *resp, test_rng *rng)
{
    for (size_t i = 0; i < n; ++i) {
        double total = 0.0;
        for (size_t k = 0; k < K; ++k)
            total += resp[i * K + k] = 0.05 + test_uniform(rng);
        for (size_t k = 0; k < K; ++k)
            resp[i * K + k] /= total;
    }
}

static double total_weight(size_t n)
{
    double total = 0.0;
    for (size_t i = 0; i < n; ++i)
        total += W[i];
    return total;
}

START_TEST(gradients_match_differences)
{
    enum { K = 3 };
    make_data(SMALL, 5);
    test_rng rng = {9};
    moe_model_t *model = new_model(K);
    set_random(model, &rng);
    double resp[SMALL * K], gradient[K * 2], log_shapes[K];
    random_resp(SMALL, K, resp, &rng);
    moe_data data = {SMALL, 1, 1, 1, X, Y, W};
    double total = total_weight(SMALL);
    for (int with_ridge = 0; with_ridge < 2; ++with_ridge) {
        double ridge = with_ridge ? 0.3 : 0.0;
        EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, ridge, total, 1, gradient,
                                                  NULL, NULL),
                      MOE_OK);
        for (size_t a = 0; a < K * 2; ++a) {
            double saved = model->experts[a], h = 1e-6;
            model->experts[a] = saved + h;
            double up = surrogate(model, SMALL, resp, ridge);
            model->experts[a] = saved - h;
            double down = surrogate(model, SMALL, resp, ridge);
            model->experts[a] = saved;
            double difference = (up - down) / (2.0 * h);
            ck_assert_msg(fabs(difference - gradient[a]) <= 1e-6 * (1.0 + fabs(difference)),
                          "coefficient %zu: gradient %.12g, differences %.12g", a, gradient[a],
                          difference);
        }
    }
    EXPECT_STATUS(model->family_ops->degrees_gradient(model, &data, resp, total, 1, log_shapes,
                                                      NULL),
                  MOE_OK);
    for (size_t k = 0; k < K; ++k) {
        double saved = model->degrees[k], h = 1e-6;
        model->degrees[k] = saved * exp(h);
        double up = surrogate(model, SMALL, resp, 0.0);
        model->degrees[k] = saved * exp(-h);
        double down = surrogate(model, SMALL, resp, 0.0);
        model->degrees[k] = saved;
        double difference = (up - down) / (2.0 * h);
        ck_assert_msg(fabs(difference - log_shapes[k]) <= 1e-6 * (1.0 + fabs(difference)),
                      "log shape %zu: gradient %.12g, differences %.12g", k, log_shapes[k],
                      difference);
    }
    moe_model_free(model);
}
END_TEST

START_TEST(m_step_is_exact_and_never_lowers_the_objective)
{
    enum { K = 2 };
    make_data(SMALL, 6);
    test_rng rng = {10};
    moe_data data = {SMALL, 1, 1, 1, X, Y, W};
    double total = total_weight(SMALL);
    for (int trial = 0; trial < 4; ++trial) {
        moe_model_t *model = new_model(K);
        set_random(model, &rng);
        double resp[SMALL * K], gradient[K * 2], log_shapes[K];
        random_resp(SMALL, K, resp, &rng);
        double ridge = trial % 2 ? 0.1 : 0.0;
        moe_expert_mstep_options options = {ridge, total, 1e-12, 1e-9, 0, 0, 0.0, 50, 1e-14, 1, 1};
        moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
        double before = surrogate(model, SMALL, resp, ridge);
        char message[256] = "";
        EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options, &report, message),
                      MOE_OK);
        ck_assert(surrogate(model, SMALL, resp, ridge) <= before);
        /* the shapes are at their maximum given the coefficients */
        EXPECT_STATUS(model->family_ops->degrees_gradient(model, &data, resp, total, 1,
                                                          log_shapes, NULL),
                      MOE_OK);
        for (size_t k = 0; k < K; ++k)
            ck_assert_msg(fabs(log_shapes[k]) < 1e-8, "shape %zu's gradient %g", k,
                          log_shapes[k]);
        /* a second cycle from there: coefficients exact at the new shapes */
        EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options, &report, message),
                      MOE_OK);
        EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, ridge, total, 1, gradient,
                                                  NULL, NULL),
                      MOE_OK);
        /* at the shapes the cycle started from; they move a little after, so the
           coefficients' gradient at the end is small rather than zero */
        for (size_t a = 0; a < K * 2; ++a)
            ck_assert_msg(fabs(gradient[a]) < 1e-3, "gradient %zu is %g", a, gradient[a]);
        ck_assert_uint_eq(report.line_search_failures, 0);
        moe_model_free(model);
    }
}
END_TEST

START_TEST(em_is_monotone)
{
    make_data(N, 21);
    moe_model_t *model = new_model(3);
    test_assert_em_monotone(model, N, X, 1, Y, W, 4, 6);
    moe_model_free(model);
}
END_TEST

/* The fitted experts matched to the truth's by their slopes' signs: the largest error of
   a coefficient, and of a shape relative to its truth. */
static double recovery_error(const moe_model_t *model, double *shape_error)
{
    double experts[4], shapes[2];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(model, shapes, 2), MOE_OK);
    int rising = experts[1] > experts[3] ? 0 : 1;
    const double *a = experts + 2 * rising, *b = experts + 2 * (1 - rising);
    double truth[4] = {1.0, 0.6, 2.5, -0.4}, fitted[4] = {a[0], a[1], b[0], b[1]};
    double worst = 0.0;
    for (int j = 0; j < 4; ++j)
        if (fabs(fitted[j] - truth[j]) > worst)
            worst = fabs(fitted[j] - truth[j]);
    *shape_error = fmax(fabs(shapes[rising] / 4.0 - 1.0), fabs(shapes[1 - rising] / 10.0 - 1.0));
    return worst;
}

/*
 * n = 2000 from the truth above, five data seeds, em from the defaults. Standard errors at
 * this n (moe_model_vcov): about 0.03 for the coefficients, 5% of each shape. Measured
 * worst over the seeds: 0.049 and 15.7% (the mixture's misassigned rows pull the shapes
 * down); the tolerances 0.15 and 25% leave room, while a fit in the wrong mode misses by
 * more than 0.5.
 */
START_TEST(recovers_known_experts)
{
    double worst = 0.0, worst_shape = 0.0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        make_data(N, 100 + seed);
        moe_model_t *model = new_model(2);
        moe_fitter_t *fitter = test_fitter("em", seed);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, Y, NULL), MOE_OK);
        double shape_error = 0.0, error = recovery_error(model, &shape_error);
        worst = fmax(worst, error);
        worst_shape = fmax(worst_shape, shape_error);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    printf("gamma recovery: worst coefficient error %.4f, shape %.1f%% over 5 seeds\n", worst,
           100.0 * worst_shape);
    ck_assert_msg(worst < 0.15, "worst coefficient error %g", worst);
    ck_assert_msg(worst_shape < 0.25, "worst shape error %g", worst_shape);
}
END_TEST

START_TEST(gem_and_gd_fit_gamma_experts)
{
    make_data(N, 31);
    const char *estimators[] = {"gem", "gd"};
    moe_model_t *reference = new_model(2);
    moe_fitter_t *em = test_fitter("em", 2);
    EXPECT_STATUS(moe_fitter_fit(em, reference, N, X, 1, Y, NULL), MOE_OK);
    double best = 0.0;
    EXPECT_STATUS(moe_model_loglik(reference, N, X, 1, Y, NULL, &best), MOE_OK);
    for (int e = 0; e < 2; ++e) {
        moe_model_t *model = new_model(2);
        EXPECT_STATUS(moe_model_copy_parameters(model, reference), MOE_OK);
        double experts[4], shapes[2];
        EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
        EXPECT_STATUS(moe_model_get_degrees(model, shapes, 2), MOE_OK);
        experts[0] -= 0.3;
        shapes[1] *= 0.5;
        EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
        EXPECT_STATUS(moe_model_set_degrees(model, shapes, 2), MOE_OK);
        double start = 0.0, end = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, N, X, 1, Y, NULL, &start), MOE_OK);
        moe_fitter_t *fitter = test_fitter(estimators[e], 1);
        EXPECT_STATUS(moe_fitter_set_option(fitter, "init", "model"), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 3000), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, Y, NULL), MOE_OK);
        EXPECT_STATUS(moe_model_loglik(model, N, X, 1, Y, NULL, &end), MOE_OK);
        ck_assert_msg(end > start && end >= best - 1e-3 * fabs(best),
                      "%s: log-likelihood %.8g from %.8g, em's %.8g", estimators[e], end, start,
                      best);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    moe_fitter_free(em);
    moe_model_free(reference);
}
END_TEST

START_TEST(save_load_round_trip)
{
    make_data(SMALL, 41);
    test_rng rng = {3};
    moe_model_t *model = new_model(3);
    set_random(model, &rng);
    unsigned char buffer[4096];
    size_t written = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, buffer, sizeof buffer, &written), MOE_OK);
    moe_model_t *loaded = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&loaded, buffer, written), MOE_OK);
    ck_assert_int_eq(moe_model_family(loaded), MOE_FAMILY_GAMMA);
    double a[3], b[3];
    EXPECT_STATUS(moe_model_get_degrees(model, a, 3), MOE_OK);
    EXPECT_STATUS(moe_model_get_degrees(loaded, b, 3), MOE_OK);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    unsigned char again[4096];
    size_t rewritten = 0;
    EXPECT_STATUS(moe_model_save_buffer(loaded, again, sizeof again, &rewritten), MOE_OK);
    ck_assert_uint_eq(rewritten, written);
    ck_assert(memcmp(buffer, again, written) == 0);
    moe_model_free(loaded);
    moe_model_free(model);
}
END_TEST

START_TEST(predict_is_the_mixture_mean)
{
    make_data(SMALL, 42);
    test_rng rng = {8};
    moe_model_t *model = new_model(2);
    set_random(model, &rng);
    double predicted[SMALL], gate[SMALL * 2], experts[4];
    EXPECT_STATUS(moe_model_predict(model, SMALL, X, 1, predicted, SMALL), MOE_OK);
    EXPECT_STATUS(moe_model_gate_proba(model, SMALL, X, 1, gate, SMALL * 2), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
    for (size_t i = 0; i < SMALL; ++i) {
        double mean = gate[i * 2] * exp(experts[0] + experts[1] * X[i]) +
                      gate[i * 2 + 1] * exp(experts[2] + experts[3] * X[i]);
        ck_assert_double_eq_tol(predicted[i], mean, 1e-12 * (1.0 + mean));
    }
    moe_model_free(model);
}
END_TEST

/* theta: gate row 0 (2), experts (4), shapes (2) */
static double loglik_at(moe_model_t *model, const double *theta, int weighted)
{
    double gate[4] = {theta[0], theta[1], 0.0, 0.0};
    EXPECT_STATUS(moe_model_set_gate(model, gate, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, theta + 2, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_degrees(model, theta + 6, 2), MOE_OK);
    double value = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, SMALL, X, 1, Y, weighted ? W : NULL, &value), MOE_OK);
    return value;
}

START_TEST(information_is_the_negative_hessian)
{
    enum { P = 8 };
    make_data(SMALL, 43);
    test_rng rng = {12};
    for (int weighted = 0; weighted < 2; ++weighted) {
        moe_model_t *model = new_model(2);
        double theta[P], t[P], information[P * P];
        for (size_t a = 0; a < 6; ++a)
            theta[a] = (a >= 2 && a % 2 == 0 ? 1.5 : 0.0) + 0.4 * test_normal(&rng);
        theta[6] = 2.0 + test_uniform(&rng);
        theta[7] = 5.0 + test_uniform(&rng);
        loglik_at(model, theta, weighted);
        EXPECT_STATUS(moe_model_information(model, SMALL, X, 1, Y, weighted ? W : NULL,
                                            information, P * P),
                      MOE_OK);
        double largest = 0.0, worst = 0.0;
        for (size_t a = 0; a < P; ++a)
            for (size_t b = a; b < P; ++b) {
                double ha = 1e-4 * (1.0 + fabs(theta[a])), hb = 1e-4 * (1.0 + fabs(theta[b]));
                double f[4];
                for (int s = 0; s < 4; ++s) {
                    memcpy(t, theta, sizeof t);
                    t[a] += s & 1 ? -ha : ha;
                    t[b] += s & 2 ? -hb : hb;
                    f[s] = loglik_at(model, t, weighted);
                }
                double second = (f[0] - f[1] - f[2] + f[3]) / (4.0 * ha * hb);
                largest = fmax(largest, fabs(second));
                worst = fmax(worst, fabs(information[a * P + b] + second));
                ck_assert(information[a * P + b] == information[b * P + a]);
            }
        ck_assert_msg(worst <= 1e-4 * largest + 1e-6,
                      "information differs from -Hessian by %g (largest %g)", worst, largest);
        moe_model_free(model);
    }
}
END_TEST

START_TEST(unsupported_estimators_refuse)
{
    make_data(SMALL, 44);
    const char *estimators[] = {"cqt", "ismm", "ot"};
    const char *words[] = {"Gaussian", "gamma", "gamma"};
    for (int e = 0; e < 3; ++e) {
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.family = MOE_FAMILY_GAMMA;
        spec.intercept = e == 0 ? 0 : 1;
        moe_model_t *model = NULL;
        EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
        moe_fitter_t *fitter = test_fitter(estimators[e], 1);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, SMALL, X, 1, Y, NULL), MOE_ERR_UNSUPPORTED);
        const char *message = moe_fitter_last_error(fitter);
        ck_assert_msg(strstr(message, words[e]) != NULL, "%s: '%s'", estimators[e], message);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
}
END_TEST

START_TEST(responses_that_are_not_positive)
{
    make_data(SMALL, 45);
    moe_model_t *model = new_model(2);
    double saved = Y[7], loglik = 0.0;
    const double bad[] = {0.0, -1.0, NAN};
    const moe_status expected[] = {MOE_ERR_INVALID_LABEL, MOE_ERR_INVALID_LABEL,
                                   MOE_ERR_NON_FINITE};
    for (int b = 0; b < 3; ++b) {
        Y[7] = bad[b];
        EXPECT_STATUS(moe_model_loglik(model, SMALL, X, 1, Y, NULL, &loglik), expected[b]);
        ck_assert_ptr_nonnull(strstr(moe_last_error(), "row 7"));
        moe_fitter_t *fitter = test_fitter("em", 1);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, SMALL, X, 1, Y, NULL), expected[b]);
        ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "row 7"));
        moe_fitter_free(fitter);
    }
    Y[7] = saved;
    moe_model_free(model);
}
END_TEST

static Suite *gamma_suite(void)
{
    Suite *suite = suite_create("gamma");
    TCase *unit = tcase_create("unit");
    tcase_set_timeout(unit, 120);
    tcase_add_test(unit, names_and_spec);
    tcase_add_test(unit, loglik_is_the_density_written_out);
    tcase_add_test(unit, gradients_match_differences);
    tcase_add_test(unit, m_step_is_exact_and_never_lowers_the_objective);
    tcase_add_test(unit, em_is_monotone);
    tcase_add_test(unit, recovers_known_experts);
    tcase_add_test(unit, gem_and_gd_fit_gamma_experts);
    tcase_add_test(unit, save_load_round_trip);
    tcase_add_test(unit, predict_is_the_mixture_mean);
    tcase_add_test(unit, information_is_the_negative_hessian);
    tcase_add_test(unit, unsupported_estimators_refuse);
    tcase_add_test(unit, responses_that_are_not_positive);
    suite_add_tcase(suite, unit);
    return suite;
}

int main(void)
{
    return run_suite(gamma_suite());
}
