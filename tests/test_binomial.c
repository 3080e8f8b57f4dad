/*
 * Binomial experts with trials (MOE_FAMILY_BINOMIAL, logit link; the trials a feature the
 * spec names): the log-likelihood against dbinom's formula written out here (log C(n, y)
 * included; rows of zero trials contribute nothing), the expert gradient against central
 * differences, the exact M-step, em's monotone log-likelihood, recovery of a known truth,
 * gem and gd, save/load bit for bit, predict, the observed information against second
 * differences, the estimators that refuse the family and the response errors.
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

enum { N = 2000, SMALL = 300, D = 2 };

/* X: [x, trials] by rows. */
static double X[N * D], Y[N], W[N];

/* The truth of the recovery test: gate P(expert 0 | x) = sigmoid(2.5 x), experts
   logit p = -1 + 1.2 x and 1.5 - 0.8 x, x uniform on (-2, 2), trials 0..15 (one row in
   50 has none). */
static void make_data(size_t n, uint64_t seed)
{
    test_rng rng = {seed};
    for (size_t i = 0; i < n; ++i) {
        double x = -2.0 + 4.0 * test_uniform(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.5 * x));
        double eta = first ? -1.0 + 1.2 * x : 1.5 - 0.8 * x, p = 1.0 / (1.0 + exp(-eta));
        double trials = i % 50 == 7 ? 0.0 : floor(1.0 + 15.0 * test_uniform(&rng));
        double successes = 0.0;
        for (double t = 0.0; t < trials; t += 1.0)
            successes += test_uniform(&rng) < p ? 1.0 : 0.0;
        X[i * D] = x;
        X[i * D + 1] = trials;
        Y[i] = successes;
        W[i] = 0.5 + test_uniform(&rng);
    }
}

static moe_model_t *new_model(size_t K)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_BINOMIAL;
    spec.n_experts = K;
    spec.n_features = D;
    spec.trials_feature = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

/* Parameters of a K-expert model by free values: gate rows (intercept, x), experts. */
static void set_free(moe_model_t *model, const double *gate, const double *experts)
{
    size_t K = moe_model_n_experts(model);
    double full_gate[3 * 8] = {0.0}, full_experts[3 * 8] = {0.0};
    for (size_t k = 0; k < K; ++k) {
        if (k + 1 < K) {
            full_gate[k * 3] = gate[k * 2];
            full_gate[k * 3 + 1] = gate[k * 2 + 1];
        }
        full_experts[k * 3] = experts[k * 2];
        full_experts[k * 3 + 1] = experts[k * 2 + 1];
    }
    EXPECT_STATUS(moe_model_set_gate(model, full_gate, K * 3), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, full_experts, K * 3), MOE_OK);
}

static void set_random(moe_model_t *model, test_rng *rng)
{
    double gate[16], experts[16];
    for (size_t a = 0; a < 16; ++a) {
        gate[a] = 0.7 * test_normal(rng);
        experts[a] = 0.5 * test_normal(rng);
    }
    set_free(model, gate, experts);
}

/* dbinom(y, n, p, log = TRUE) written out. */
static double log_binomial(double y, double trials, double eta)
{
    double p = 1.0 / (1.0 + exp(-eta));
    return lgamma(trials + 1.0) - lgamma(y + 1.0) - lgamma(trials - y + 1.0) +
           (y > 0.0 ? y * log(p) : 0.0) + (trials > y ? (trials - y) * log1p(-p) : 0.0);
}

START_TEST(names_and_spec)
{
    ck_assert_str_eq(moe_family_name(MOE_FAMILY_BINOMIAL), "binomial");
    moe_family family = MOE_FAMILY_GAUSSIAN;
    EXPECT_STATUS(moe_family_from_name("binomial", &family), MOE_OK);
    ck_assert_int_eq(family, MOE_FAMILY_BINOMIAL);
    moe_model_t *model = new_model(2);
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 + 4); /* trials not estimated */
    ck_assert_int_eq(moe_model_scale_kind(model), MOE_SCALE_NONE);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    EXPECT_STATUS(moe_model_get_spec(model, &spec), MOE_OK);
    ck_assert_int_eq(spec.trials_feature, 1);
    ck_assert_int_eq(spec.gate_features[1], 0);
    /* the roles of the inputs (intercept, x, trials) for each part */
    unsigned char roles[3] = {9, 9, 9};
    EXPECT_STATUS(moe_model_get_inputs(model, MOE_PART_EXPERTS, roles, 3), MOE_OK);
    ck_assert(roles[0] == MOE_INPUT_FREE && roles[1] == MOE_INPUT_FREE &&
              roles[2] == MOE_INPUT_TRIALS);
    EXPECT_STATUS(moe_model_get_inputs(model, MOE_PART_GATE, roles, 3), MOE_OK);
    ck_assert(roles[0] == MOE_INPUT_FREE && roles[1] == MOE_INPUT_FREE &&
              roles[2] == MOE_INPUT_UNSEEN);
    EXPECT_STATUS(moe_model_get_inputs(model, MOE_PART_GATE, roles, 2), MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_get_inputs(model, (moe_model_part)2, roles, 3),
                  MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_model_get_inputs(NULL, MOE_PART_GATE, roles, 3), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_get_inputs(model, MOE_PART_GATE, NULL, 3), MOE_ERR_NULL_POINTER);
    /* a clone keeps the trials */
    moe_model_t *copy = NULL;
    EXPECT_STATUS(moe_model_clone(&copy, model), MOE_OK);
    moe_model_spec again = MOE_MODEL_SPEC_INIT;
    EXPECT_STATUS(moe_model_get_spec(copy, &again), MOE_OK);
    ck_assert_int_eq(again.trials_feature, 1);
    moe_model_free(copy);
    /* the trials' coefficients are held at 0 */
    double experts[6] = {0.1, 0.2, 0.5, 0.3, 0.4, 0.0};
    EXPECT_STATUS(moe_model_set_experts(model, experts, 6), MOE_ERR_INVALID_ARGUMENT);
    moe_model_free(model);
    double linear[2] = {0.0, 40.0}, mean[2];
    model = new_model(1);
    EXPECT_STATUS(moe_model_inverse_link(model, 2, linear, mean), MOE_OK);
    ck_assert_double_eq(mean[0], 0.5);
    ck_assert(mean[1] > 0.999999);
    EXPECT_STATUS(moe_model_inverse_link(model, 2, NULL, mean), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_inverse_link(model, 2, linear, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_inverse_link(NULL, 2, linear, mean), MOE_ERR_NULL_POINTER);
    ck_assert_int_eq(moe_model_scale_kind(NULL), MOE_SCALE_NONE);
    moe_model_free(model);
    /* multinomial experts have a probability per class, no one mean */
    spec = (moe_model_spec)MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_classes = 3;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    EXPECT_STATUS(moe_model_inverse_link(model, 2, linear, mean), MOE_ERR_UNSUPPORTED);
    moe_model_free(model);
    /* trials for another family, out of range, or on the offset */
    spec = (moe_model_spec)MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_POISSON;
    spec.n_features = 2;
    spec.trials_feature = 1;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_UNSUPPORTED);
    spec.family = MOE_FAMILY_BINOMIAL;
    spec.trials_feature = 2;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_INVALID_ARGUMENT);
    spec.trials_feature = 1;
    spec.offset_feature = 1;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_INVALID_ARGUMENT);
    /* a version-2 spec has no trials: one trial a row */
    moe_model_spec old;
    EXPECT_STATUS(moe_model_spec_init(&old, 2), MOE_OK);
    old.family = MOE_FAMILY_BINOMIAL;
    EXPECT_STATUS(moe_model_create(&model, &old), MOE_OK);
    moe_model_free(model);
}
END_TEST

START_TEST(loglik_is_dbinoms_and_zero_trials_count_nothing)
{
    make_data(SMALL, 3);
    test_rng rng = {4};
    moe_model_t *model = new_model(2);
    set_random(model, &rng);
    double gate[6], experts[6], proba[2 * SMALL], loglik = 0.0;
    EXPECT_STATUS(moe_model_get_gate(model, gate, 6), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
    EXPECT_STATUS(moe_model_gate_proba(model, SMALL, X, D, proba, 2 * SMALL), MOE_OK);
    double expected = 0.0, without = 0.0;
    for (size_t i = 0; i < SMALL; ++i) {
        double x = X[i * D], trials = X[i * D + 1], row = 0.0;
        for (size_t k = 0; k < 2; ++k)
            row += proba[i * 2 + k] *
                   exp(log_binomial(Y[i], trials, experts[k * 3] + experts[k * 3 + 1] * x));
        expected += W[i] * log(row);
        if (trials == 0.0)
            ck_assert_double_eq_tol(row, 1.0, 1e-15);
        else
            without += W[i] * log(row);
    }
    EXPECT_STATUS(moe_model_loglik(model, SMALL, X, D, Y, W, &loglik), MOE_OK);
    ck_assert_double_eq_tol(loglik, expected, 1e-10 * fabs(expected));
    ck_assert_double_eq_tol(loglik, without, 1e-10 * fabs(expected));
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
            double eta = m->experts[k * 3] + m->experts[k * 3 + 1] * X[i * D];
            sum += W[i] * resp[i * K + k] * log_binomial(Y[i], X[i * D + 1], eta);
        }
    }
    double penalty = 0.0;
    for (size_t k = 0; k < K; ++k)
        penalty += m->experts[k * 3 + 1] * m->experts[k * 3 + 1];
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

START_TEST(gradient_matches_differences)
{
    enum { K = 3 };
    make_data(SMALL, 5);
    test_rng rng = {9};
    moe_model_t *model = new_model(K);
    set_random(model, &rng);
    double resp[SMALL * K], gradient[K * 3];
    random_resp(SMALL, K, resp, &rng);
    moe_data data = {SMALL, D, D, 1, X, Y, W};
    double total = total_weight(SMALL);
    for (int with_ridge = 0; with_ridge < 2; ++with_ridge) {
        double ridge = with_ridge ? 0.3 : 0.0;
        EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, ridge, total, 1, gradient,
                                                  NULL, NULL),
                      MOE_OK);
        for (size_t k = 0; k < K; ++k)
            for (size_t j = 0; j < 2; ++j) {
                size_t a = k * 3 + j;
                double saved = model->experts[a], h = 1e-6;
                model->experts[a] = saved + h;
                double up = surrogate(model, SMALL, resp, ridge);
                model->experts[a] = saved - h;
                double down = surrogate(model, SMALL, resp, ridge);
                model->experts[a] = saved;
                double difference = (up - down) / (2.0 * h);
                ck_assert_msg(fabs(difference - gradient[a]) <= 1e-6 * (1.0 + fabs(difference)),
                              "coefficient %zu: gradient %.12g, differences %.12g", a,
                              gradient[a], difference);
            }
    }
    moe_model_free(model);
}
END_TEST

START_TEST(m_step_is_exact_and_never_lowers_the_objective)
{
    enum { K = 2 };
    make_data(SMALL, 6);
    test_rng rng = {10};
    moe_data data = {SMALL, D, D, 1, X, Y, W};
    double total = total_weight(SMALL);
    for (int trial = 0; trial < 4; ++trial) {
        moe_model_t *model = new_model(K);
        set_random(model, &rng);
        double resp[SMALL * K], gradient[K * 3];
        random_resp(SMALL, K, resp, &rng);
        double ridge = trial % 2 ? 0.1 : 0.0;
        moe_expert_mstep_options options = {ridge, total, 1e-12, 1e-9, 0, 0, 0.0, 50, 1e-14, 1, 0};
        moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
        double before = surrogate(model, SMALL, resp, ridge);
        char message[256] = "";
        EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options, &report, message),
                      MOE_OK);
        ck_assert(surrogate(model, SMALL, resp, ridge) <= before);
        EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, ridge, total, 1, gradient,
                                                  NULL, NULL),
                      MOE_OK);
        for (size_t a = 0; a < K * 3; ++a) /* the trials' entries are held, not solved */
            ck_assert_msg(a % 3 == 2 || fabs(gradient[a]) < 1e-6,
                          "gradient %zu is %g after the M-step", a, gradient[a]);
        ck_assert_uint_eq(report.line_search_failures, 0);
        moe_model_free(model);
    }
}
END_TEST

START_TEST(em_is_monotone)
{
    make_data(N, 21);
    moe_model_t *model = new_model(3);
    test_assert_em_monotone(model, N, X, D, Y, W, 4, 6);
    moe_model_free(model);
}
END_TEST

/* The fitted experts matched to the truth's by their slopes' signs. */
static double recovery_error(const moe_model_t *model)
{
    double experts[6];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
    int falling = experts[1] > experts[4] ? 0 : 1;
    const double *a = experts + 3 * falling, *b = experts + 3 * (1 - falling);
    double truth[4] = {-1.0, 1.2, 1.5, -0.8}, fitted[4] = {a[0], a[1], b[0], b[1]};
    double worst = 0.0;
    for (int j = 0; j < 4; ++j)
        if (fabs(fitted[j] - truth[j]) > worst)
            worst = fabs(fitted[j] - truth[j]);
    return worst;
}

/*
 * n = 2000 from the truth above, five data seeds, em from the defaults. The largest standard
 * error of an expert coefficient at this n is about 0.05 (moe_model_vcov); the tolerance
 * 0.25 is five of them, while a fit in the wrong mode misses by more than 1.
 */
START_TEST(recovers_known_experts)
{
    double worst = 0.0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        make_data(N, 100 + seed);
        moe_model_t *model = new_model(2);
        moe_fitter_t *fitter = test_fitter("em", seed);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
        double error = recovery_error(model);
        if (error > worst)
            worst = error;
        if (seed == 1) {
            enum { P = 6 };
            double covariance[P * P];
            EXPECT_STATUS(moe_model_vcov(model, N, X, D, Y, NULL, covariance, P * P), MOE_OK);
            for (size_t a = 2; a < P; ++a)
                ck_assert_msg(sqrt(covariance[a * P + a]) < 0.08, "se %zu: %g", a,
                              sqrt(covariance[a * P + a]));
        }
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    printf("binomial recovery: worst coefficient error %.4f over 5 seeds\n", worst);
    ck_assert_msg(worst < 0.25, "worst coefficient error %g", worst);
}
END_TEST

START_TEST(gem_and_gd_fit_binomial_experts)
{
    make_data(N, 31);
    const char *estimators[] = {"gem", "gd"};
    moe_model_t *reference = new_model(2);
    moe_fitter_t *em = test_fitter("em", 2);
    EXPECT_STATUS(moe_fitter_fit(em, reference, N, X, D, Y, NULL), MOE_OK);
    double best = 0.0;
    EXPECT_STATUS(moe_model_loglik(reference, N, X, D, Y, NULL, &best), MOE_OK);
    for (int e = 0; e < 2; ++e) {
        moe_model_t *model = new_model(2);
        EXPECT_STATUS(moe_model_copy_parameters(model, reference), MOE_OK);
        double experts[6];
        EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
        experts[0] -= 0.3;
        experts[4] += 0.2;
        EXPECT_STATUS(moe_model_set_experts(model, experts, 6), MOE_OK);
        double start = 0.0, end = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, N, X, D, Y, NULL, &start), MOE_OK);
        moe_fitter_t *fitter = test_fitter(estimators[e], 1);
        EXPECT_STATUS(moe_fitter_set_option(fitter, "init", "model"), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 3000), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
        EXPECT_STATUS(moe_model_loglik(model, N, X, D, Y, NULL, &end), MOE_OK);
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
    ck_assert_int_eq(moe_model_family(loaded), MOE_FAMILY_BINOMIAL);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    EXPECT_STATUS(moe_model_get_spec(loaded, &spec), MOE_OK);
    ck_assert_int_eq(spec.trials_feature, 1);
    double first = 0.0, second = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, SMALL, X, D, Y, NULL, &first), MOE_OK);
    EXPECT_STATUS(moe_model_loglik(loaded, SMALL, X, D, Y, NULL, &second), MOE_OK);
    ck_assert(first == second);
    unsigned char again[4096];
    size_t rewritten = 0;
    EXPECT_STATUS(moe_model_save_buffer(loaded, again, sizeof again, &rewritten), MOE_OK);
    ck_assert_uint_eq(rewritten, written);
    ck_assert(memcmp(buffer, again, written) == 0);
    /* a trials role in a family that takes none is not a model file */
    moe_model_free(loaded);
    moe_model_free(model);
}
END_TEST

START_TEST(predict_is_the_mixture_probability)
{
    make_data(SMALL, 42);
    test_rng rng = {8};
    moe_model_t *model = new_model(2);
    set_random(model, &rng);
    double predicted[SMALL], gate[SMALL * 2], experts[6];
    EXPECT_STATUS(moe_model_predict(model, SMALL, X, D, predicted, SMALL), MOE_OK);
    EXPECT_STATUS(moe_model_gate_proba(model, SMALL, X, D, gate, SMALL * 2), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
    for (size_t i = 0; i < SMALL; ++i) {
        double x = X[i * D];
        double mean = gate[i * 2] / (1.0 + exp(-(experts[0] + experts[1] * x))) +
                      gate[i * 2 + 1] / (1.0 + exp(-(experts[3] + experts[4] * x)));
        ck_assert_double_eq_tol(predicted[i], mean, 1e-12);
    }
    moe_model_free(model);
}
END_TEST

static double loglik_at(moe_model_t *model, const double *theta, int weighted)
{
    set_free(model, theta, theta + 2);
    double value = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, SMALL, X, D, Y, weighted ? W : NULL, &value), MOE_OK);
    return value;
}

START_TEST(information_is_the_negative_hessian)
{
    enum { P = 6 };
    make_data(SMALL, 43);
    test_rng rng = {12};
    for (int weighted = 0; weighted < 2; ++weighted) {
        moe_model_t *model = new_model(2);
        double theta[P], t[P], information[P * P];
        for (size_t a = 0; a < P; ++a)
            theta[a] = 0.5 * test_normal(&rng);
        loglik_at(model, theta, weighted);
        EXPECT_STATUS(moe_model_information(model, SMALL, X, D, Y, weighted ? W : NULL,
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
                if (fabs(second) > largest)
                    largest = fabs(second);
                double error = fabs(information[a * P + b] + second);
                if (error > worst)
                    worst = error;
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
    const char *words[] = {"Gaussian", "binomial", "binomial"};
    for (int e = 0; e < 3; ++e) {
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.family = MOE_FAMILY_BINOMIAL;
        spec.n_features = D;
        spec.trials_feature = 1;
        spec.intercept = e == 0 ? 0 : 1;
        moe_model_t *model = NULL;
        EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
        moe_fitter_t *fitter = test_fitter(estimators[e], 1);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, SMALL, X, D, Y, NULL), MOE_ERR_UNSUPPORTED);
        const char *message = moe_fitter_last_error(fitter);
        ck_assert_msg(strstr(message, words[e]) != NULL, "%s: '%s'", estimators[e], message);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
}
END_TEST

START_TEST(responses_and_trials_that_are_not_counts)
{
    make_data(SMALL, 45);
    moe_model_t *model = new_model(2);
    double loglik = 0.0;
    /* (successes, trials) of row 8 (which has trials 1..15) */
    const double bad[][2] = {{-1.0, 3.0}, {2.5, 3.0}, {4.0, 3.0}, {1.0, 2.5}, {1.0, -2.0},
                             {NAN, 3.0}};
    const moe_status expected[] = {MOE_ERR_INVALID_LABEL, MOE_ERR_INVALID_LABEL,
                                   MOE_ERR_INVALID_LABEL, MOE_ERR_INVALID_ARGUMENT,
                                   MOE_ERR_INVALID_ARGUMENT, MOE_ERR_NON_FINITE};
    double saved_y = Y[8], saved_trials = X[8 * D + 1];
    for (int b = 0; b < 6; ++b) {
        Y[8] = bad[b][0];
        X[8 * D + 1] = bad[b][1];
        EXPECT_STATUS(moe_model_loglik(model, SMALL, X, D, Y, NULL, &loglik), expected[b]);
        ck_assert_ptr_nonnull(strstr(moe_last_error(), "row 8"));
        moe_fitter_t *fitter = test_fitter("em", 1);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, SMALL, X, D, Y, NULL), expected[b]);
        ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "row 8"));
        moe_fitter_free(fitter);
    }
    Y[8] = saved_y;
    X[8 * D + 1] = saved_trials;
    moe_model_free(model);
}
END_TEST

static Suite *binomial_suite(void)
{
    Suite *suite = suite_create("binomial");
    TCase *unit = tcase_create("unit");
    tcase_set_timeout(unit, 120);
    tcase_add_test(unit, names_and_spec);
    tcase_add_test(unit, loglik_is_dbinoms_and_zero_trials_count_nothing);
    tcase_add_test(unit, gradient_matches_differences);
    tcase_add_test(unit, m_step_is_exact_and_never_lowers_the_objective);
    tcase_add_test(unit, em_is_monotone);
    tcase_add_test(unit, recovers_known_experts);
    tcase_add_test(unit, gem_and_gd_fit_binomial_experts);
    tcase_add_test(unit, save_load_round_trip);
    tcase_add_test(unit, predict_is_the_mixture_probability);
    tcase_add_test(unit, information_is_the_negative_hessian);
    tcase_add_test(unit, unsupported_estimators_refuse);
    tcase_add_test(unit, responses_and_trials_that_are_not_counts);
    suite_add_tcase(suite, unit);
    return suite;
}

int main(void)
{
    return run_suite(binomial_suite());
}
