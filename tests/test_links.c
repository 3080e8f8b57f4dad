/*
 * Gaussian experts with a sigmoid or ReLU link (include/moe/model.h, moe_link): the
 * family's gradient against finite differences of an objective written out here, the
 * public predict / loglik / posterior against values computed by hand, save and load,
 * the Gauss-Newton M-step's monotonicity, and em, gem and gd on data drawn from link
 * models.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/checksum.h"
#include "common/data.h"
#include "model/family.h"
#include "model/model_impl.h"
#include "support/runner.h"
#include "support/synthetic.h"

/* ---------------------------------------------------------------------------------------- */
/* The links in plain math, independent of the library                                     */
/* ---------------------------------------------------------------------------------------- */

static double link_g(moe_link link, double t)
{
    switch (link) {
    case MOE_LINK_SIGMOID: return 1.0 / (1.0 + exp(-t));
    case MOE_LINK_RELU: return t > 0.0 ? t : 0.0;
    case MOE_LINK_IDENTITY: break;
    }
    return t;
}

static const double two_pi = 6.283185307179586476925286766559;

static moe_model_t *make_model(moe_link link, size_t K, size_t d, int intercept)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    spec.intercept = intercept;
    spec.link = link;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

/* ---------------------------------------------------------------------------------------- */
/* Gradient against central differences                                                      */
/* ---------------------------------------------------------------------------------------- */

enum { GN = 80, GD = 3, GK = 3, GP = GD + 1 };

typedef struct gradient_problem {
    double X[GN * GD], y[GN], weights[GN], resp[GN * GK];
    double experts[GK * GP], log_variances[GK];
    double total, ridge;
    moe_link link;
} gradient_problem;

/* The surrogate the family's gradient differentiates, written out:
   -(1/N) sum_i w_i sum_k r_ik log N(y_i; g(beta_k'x_i), exp(l_k)) + ridge/2 ||beta||^2. */
static double surrogate(const gradient_problem *pr)
{
    double sum = 0.0;
    for (size_t i = 0; i < GN; ++i)
        for (size_t k = 0; k < GK; ++k) {
            const double *beta = pr->experts + k * GP;
            double t = beta[0];
            for (size_t j = 0; j < GD; ++j)
                t += beta[j + 1] * pr->X[i * GD + j];
            double variance = exp(pr->log_variances[k]), e = pr->y[i] - link_g(pr->link, t);
            double log_density = -0.5 * log(two_pi * variance) - 0.5 * e * e / variance;
            sum += pr->weights[i] * pr->resp[i * GK + k] * log_density;
        }
    double penalty = 0.0;
    for (size_t k = 0; k < GK; ++k)
        for (size_t j = 1; j < GP; ++j)
            penalty += pr->experts[k * GP + j] * pr->experts[k * GP + j];
    return -sum / pr->total + 0.5 * pr->ridge * penalty;
}

/* Smallest |beta_k'x_i| over the rows and experts: ReLU's kink must stay out of reach of the
   differences. */
static double smallest_predictor(const gradient_problem *pr)
{
    double smallest = INFINITY;
    for (size_t i = 0; i < GN; ++i)
        for (size_t k = 0; k < GK; ++k) {
            double t = pr->experts[k * GP];
            for (size_t j = 0; j < GD; ++j)
                t += pr->experts[k * GP + j + 1] * pr->X[i * GD + j];
            smallest = fmin(smallest, fabs(t));
        }
    return smallest;
}

static void gradient_problem_make(gradient_problem *pr, moe_link link, uint64_t seed)
{
    test_rng rng = {seed};
    pr->link = link;
    pr->ridge = 0.05;
    for (size_t a = 0; a < GK * GP; ++a)
        pr->experts[a] = 0.8 * test_normal(&rng);
    for (size_t k = 0; k < GK; ++k)
        pr->log_variances[k] = log(0.3 + test_uniform(&rng));
    pr->total = 0.0;
    for (size_t i = 0; i < GN; ++i) {
        /* Redraw a row until every expert's predictor is clear of zero (ReLU's kink). */
        for (int attempt = 0;; ++attempt) {
            ck_assert_int_lt(attempt, 1000);
            double clearance = INFINITY;
            for (size_t j = 0; j < GD; ++j)
                pr->X[i * GD + j] = test_normal(&rng);
            for (size_t k = 0; k < GK; ++k) {
                double t = pr->experts[k * GP];
                for (size_t j = 0; j < GD; ++j)
                    t += pr->experts[k * GP + j + 1] * pr->X[i * GD + j];
                clearance = fmin(clearance, fabs(t));
            }
            if (clearance > 1e-2)
                break;
        }
        pr->y[i] = link == MOE_LINK_SIGMOID ? test_uniform(&rng) : 1.5 * test_normal(&rng);
        pr->weights[i] = 0.2 + 1.5 * test_uniform(&rng);
        pr->total += pr->weights[i];
        double sum = 0.0;
        for (size_t k = 0; k < GK; ++k)
            sum += pr->resp[i * GK + k] = 0.05 + test_uniform(&rng);
        for (size_t k = 0; k < GK; ++k)
            pr->resp[i * GK + k] /= sum;
    }
}

/* The family's gradient at the problem's parameters. */
static void family_gradient(const gradient_problem *pr, double *coefficients,
                            double *log_variances)
{
    moe_model_t *model = make_model(pr->link, GK, GD, 1);
    double variances[GK];
    for (size_t k = 0; k < GK; ++k)
        variances[k] = exp(pr->log_variances[k]);
    EXPECT_STATUS(moe_model_set_experts(model, pr->experts, GK * GP), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, GK), MOE_OK);
    moe_data data = {GN, GD, GD, 1, pr->X, pr->y, pr->weights};
    char message[MOE_MESSAGE_SIZE] = "";
    EXPECT_STATUS(model->family_ops->gradient(model, &data, pr->resp, pr->ridge, pr->total, 1,
                                              coefficients, log_variances, message),
                  MOE_OK);
    moe_model_free(model);
}

static double central_difference(gradient_problem *pr, double *value)
{
    double saved = *value, h = 1e-5 * fmax(1.0, fabs(saved));
    *value = saved + h;
    double up = surrogate(pr);
    *value = saved - h;
    double down = surrogate(pr);
    *value = saved;
    return (up - down) / (2.0 * h);
}

/* Relative error with a floor on the scale, so that components near zero are compared
   absolutely. */
static double relative_error(double got, double expected)
{
    return fabs(got - expected) / fmax(fabs(expected), 1e-3);
}

START_TEST(gradient_matches_finite_differences)
{
    moe_link links[] = {MOE_LINK_SIGMOID, MOE_LINK_RELU};
    for (size_t l = 0; l < 2; ++l)
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            gradient_problem pr;
            gradient_problem_make(&pr, links[l], 100 * l + seed);
            ck_assert(smallest_predictor(&pr) > 1e-2);
            double coefficients[GK * GP], log_variances[GK];
            family_gradient(&pr, coefficients, log_variances);
            double worst = 0.0, worst_without_chain = 0.0;
            for (size_t a = 0; a < GK * GP; ++a) {
                double expected = central_difference(&pr, &pr.experts[a]);
                worst = fmax(worst, relative_error(coefficients[a], expected));
                /* The same gradient without the factor g'(t): what a missing chain rule
                   would give. The check above must be able to tell it apart. */
                size_t k = a / GP, j = a % GP;
                double wrong = 0.0;
                for (size_t i = 0; i < GN; ++i) {
                    double t = pr.experts[k * GP];
                    for (size_t c = 0; c < GD; ++c)
                        t += pr.experts[k * GP + c + 1] * pr.X[i * GD + c];
                    double x = j == 0 ? 1.0 : pr.X[i * GD + j - 1];
                    wrong += pr.weights[i] * pr.resp[i * GK + k] *
                             (link_g(pr.link, t) - pr.y[i]) * x / exp(pr.log_variances[k]);
                }
                wrong = wrong / pr.total + (j > 0 ? pr.ridge * pr.experts[a] : 0.0);
                worst_without_chain = fmax(worst_without_chain, relative_error(wrong, expected));
            }
            for (size_t k = 0; k < GK; ++k) {
                double expected = central_difference(&pr, &pr.log_variances[k]);
                worst = fmax(worst, relative_error(log_variances[k], expected));
            }
            ck_assert_msg(worst <= 1e-6, "link %d seed %d: relative error %.3g", (int)links[l],
                          (int)seed, worst);
            ck_assert_msg(worst_without_chain > 1e-2,
                          "link %d seed %d: a gradient without g' is within %.3g: the check "
                          "would not catch it",
                          (int)links[l], (int)seed, worst_without_chain);
        }
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* A small model by hand                                                                      */
/* ---------------------------------------------------------------------------------------- */

START_TEST(predict_loglik_posterior_by_hand)
{
    /* K = 2, one feature with an intercept; the rows put both experts' predictors on both
       sides of zero. */
    const double gate[4] = {0.5, -1.0, 0.0, 0.0};
    const double experts[4] = {0.2, 1.5, -0.4, -2.0};
    const double variances[2] = {0.5, 2.0};
    const double X[4] = {-1.0, 0.3, 2.0, -0.1};
    const double y[4] = {0.1, 0.7, 1.3, 0.45};
    const double weights[4] = {1.0, 2.0, 0.5, 1.5};
    moe_link links[] = {MOE_LINK_IDENTITY, MOE_LINK_SIGMOID, MOE_LINK_RELU};
    for (size_t l = 0; l < 3; ++l) {
        moe_link link = links[l];
        moe_model_t *model = make_model(link, 2, 1, 1);
        EXPECT_STATUS(moe_model_set_gate(model, gate, 4), MOE_OK);
        EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
        EXPECT_STATUS(moe_model_set_variances(model, variances, 2), MOE_OK);
        double mean[4], posterior[8], loglik = 0.0, weighted = 0.0, total = 0.0;
        for (size_t i = 0; i < 4; ++i) {
            double logit = gate[0] + gate[1] * X[i];
            double pi[2] = {exp(logit) / (1.0 + exp(logit)), 1.0 / (1.0 + exp(logit))};
            double density[2], joint[2];
            mean[i] = 0.0;
            for (size_t k = 0; k < 2; ++k) {
                double mu = link_g(link, experts[2 * k] + experts[2 * k + 1] * X[i]);
                mean[i] += pi[k] * mu;
                double e = y[i] - mu;
                density[k] = exp(-0.5 * e * e / variances[k]) / sqrt(two_pi * variances[k]);
                joint[k] = pi[k] * density[k];
            }
            double row = joint[0] + joint[1];
            posterior[2 * i] = joint[0] / row;
            posterior[2 * i + 1] = joint[1] / row;
            loglik += log(row);
            weighted += weights[i] * log(row);
            total += weights[i];
        }
        double got[8];
        EXPECT_STATUS(moe_model_predict(model, 4, X, 1, got, 4), MOE_OK);
        for (size_t i = 0; i < 4; ++i)
            ck_assert_msg(fabs(got[i] - mean[i]) <= 1e-14 * fmax(1.0, fabs(mean[i])),
                          "link %d row %zu: predict %.17g, expected %.17g", (int)link, i,
                          got[i], mean[i]);
        EXPECT_STATUS(moe_model_posterior(model, 4, X, 1, y, got, 8), MOE_OK);
        for (size_t a = 0; a < 8; ++a)
            ck_assert_msg(fabs(got[a] - posterior[a]) <= 1e-13,
                          "link %d: posterior %zu is %.17g, expected %.17g", (int)link, a,
                          got[a], posterior[a]);
        double value = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, 4, X, 1, y, NULL, &value), MOE_OK);
        ck_assert_double_eq_tol(value, loglik, 1e-13 * fabs(loglik));
        EXPECT_STATUS(moe_model_loglik(model, 4, X, 1, y, weights, &value), MOE_OK);
        ck_assert_double_eq_tol(value, weighted, 1e-13 * fabs(weighted));
        EXPECT_STATUS(moe_model_cross_entropy(model, 4, X, 1, y, weights, &value), MOE_OK);
        ck_assert_double_eq_tol(value, -weighted / total, 1e-13 * fabs(weighted / total));
        moe_criteria criteria = MOE_CRITERIA_INIT;
        EXPECT_STATUS(moe_model_criteria(model, 4, X, 1, y, NULL, &criteria), MOE_OK);
        ck_assert_double_eq_tol(criteria.loglik, loglik, 1e-13 * fabs(loglik));
        ck_assert(criteria.n_params == 8.0); /* gate 2; per expert 2 coefficients, 1 variance */
        ck_assert_double_eq_tol(criteria.aic, -2.0 * loglik + 16.0, 1e-12 * fabs(loglik));
        /* The gate does not depend on the link. */
        EXPECT_STATUS(moe_model_gate_proba(model, 4, X, 1, got, 8), MOE_OK);
        for (size_t i = 0; i < 4; ++i) {
            double logit = gate[0] + gate[1] * X[i];
            ck_assert_double_eq_tol(got[2 * i], exp(logit) / (1.0 + exp(logit)), 1e-15);
        }
        moe_model_free(model);
    }
}
END_TEST

START_TEST(sigmoid_is_stable_in_the_tails)
{
    /* Predictors of +-1e6 and +-800: exp(-t) would overflow in the naive formula. */
    moe_model_t *model = make_model(MOE_LINK_SIGMOID, 1, 1, 0);
    const double beta[1] = {1000.0};
    EXPECT_STATUS(moe_model_set_experts(model, beta, 1), MOE_OK);
    const double X[4] = {1000.0, -1000.0, 0.8, -0.8};
    const double y[4] = {1.0, 0.0, 1.0, 0.0};
    double mean[4];
    EXPECT_STATUS(moe_model_predict(model, 4, X, 1, mean, 4), MOE_OK);
    ck_assert(mean[0] == 1.0 && mean[1] == 0.0 && mean[2] == 1.0);
    ck_assert(mean[3] >= 0.0 && mean[3] < 1e-300);
    double loglik = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, 4, X, 1, y, NULL, &loglik), MOE_OK);
    ck_assert_double_eq_tol(loglik, -2.0 * log(two_pi), 1e-12);
    /* The gradient stays finite too. */
    double resp[4] = {1.0, 1.0, 1.0, 1.0}, coefficients[1], log_variances[1];
    moe_data data = {4, 1, 1, 0, X, y, NULL};
    char message[MOE_MESSAGE_SIZE] = "";
    EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, 0.0, 4.0, 1, coefficients,
                                              log_variances, message),
                  MOE_OK);
    ck_assert(isfinite(coefficients[0]) && isfinite(log_variances[0]));
    moe_model_free(model);
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* Save and load                                                                              */
/* ---------------------------------------------------------------------------------------- */

static moe_model_t *random_model(moe_link link, uint64_t seed)
{
    test_rng rng = {seed};
    moe_model_t *model = make_model(link, 3, 2, 1);
    double gate[9], experts[9], variances[3];
    for (size_t a = 0; a < 9; ++a) {
        gate[a] = test_normal(&rng) / 3.0; /* not exactly representable in decimal */
        experts[a] = test_normal(&rng) * 1e-3;
    }
    for (size_t k = 0; k < 3; ++k)
        variances[k] = test_uniform(&rng) + DBL_MIN;
    EXPECT_STATUS(moe_model_set_gate(model, gate, 9), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, experts, 9), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, 3), MOE_OK);
    return model;
}

static void assert_same_model(const moe_model_t *a, const moe_model_t *b)
{
    ck_assert_int_eq((int)moe_model_link(a), (int)moe_model_link(b));
    ck_assert_int_eq((int)moe_model_family(a), (int)moe_model_family(b));
    double x[9], y[9];
    EXPECT_STATUS(moe_model_get_gate(a, x, 9), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(b, y, 9), MOE_OK);
    ck_assert(memcmp(x, y, sizeof x) == 0);
    EXPECT_STATUS(moe_model_get_experts(a, x, 9), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(b, y, 9), MOE_OK);
    ck_assert(memcmp(x, y, sizeof x) == 0);
    EXPECT_STATUS(moe_model_get_variances(a, x, 3), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(b, y, 3), MOE_OK);
    ck_assert(memcmp(x, y, 3 * sizeof(double)) == 0);
}

START_TEST(save_load_round_trip_is_exact)
{
    moe_link links[] = {MOE_LINK_SIGMOID, MOE_LINK_RELU};
    char path[] = "/tmp/moe_links_XXXXXX";
    int descriptor = mkstemp(path);
    ck_assert_int_ge(descriptor, 0);
    for (size_t l = 0; l < 2; ++l) {
        moe_model_t *model = random_model(links[l], 7 + l);
        if (l == 1)
            EXPECT_STATUS(moe_model_set_name(model, MOE_NAME_RESPONSE, 0, "y"), MOE_OK);
        size_t size = 0, again_size = 0;
        EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &size), MOE_OK);
        unsigned char *bytes = malloc(size), *again = malloc(size);
        EXPECT_STATUS(moe_model_save_buffer(model, bytes, size, &size), MOE_OK);
        ck_assert_uint_eq(bytes[28], (unsigned)links[l]); /* the link field (lib/model/io.c) */
        moe_model_t *loaded = NULL;
        EXPECT_STATUS(moe_model_load_buffer(&loaded, bytes, size), MOE_OK);
        assert_same_model(model, loaded);
        EXPECT_STATUS(moe_model_save_buffer(loaded, again, size, &again_size), MOE_OK);
        ck_assert(again_size == size && memcmp(bytes, again, size) == 0);
        moe_model_free(loaded);
        /* Through a file. */
        EXPECT_STATUS(moe_model_save(model, path), MOE_OK);
        loaded = NULL;
        EXPECT_STATUS(moe_model_load(&loaded, path), MOE_OK);
        assert_same_model(model, loaded);
        moe_model_free(loaded);
        free(bytes);
        free(again);
        moe_model_free(model);
    }
    close(descriptor);
    unlink(path);
}
END_TEST

/* Overwrite the u32 at `offset` and renew the checksum, as a writer of such a file would. */
static void patch_u32(unsigned char *bytes, size_t size, size_t offset, uint32_t value)
{
    for (int b = 0; b < 4; ++b)
        bytes[offset + (size_t)b] = (unsigned char)(value >> (8 * b));
    uint32_t crc = moe_crc32(bytes, size - 4);
    for (int b = 0; b < 4; ++b)
        bytes[size - 4 + (size_t)b] = (unsigned char)(crc >> (8 * b));
}

START_TEST(links_the_format_does_not_allow_are_rejected)
{
    /* An unknown link number, and a link on a classification family: MOE_ERR_FORMAT. */
    moe_model_t *gaussian = random_model(MOE_LINK_IDENTITY, 3);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_LOGISTIC;
    moe_model_t *logistic = NULL;
    EXPECT_STATUS(moe_model_create(&logistic, &spec), MOE_OK);
    moe_model_t *models[] = {gaussian, logistic};
    uint32_t links[][2] = {{3, UINT32_MAX}, {MOE_LINK_SIGMOID, MOE_LINK_RELU}};
    for (size_t m = 0; m < 2; ++m)
        for (size_t l = 0; l < 2; ++l) {
            size_t size = 0;
            EXPECT_STATUS(moe_model_save_buffer(models[m], NULL, 0, &size), MOE_OK);
            unsigned char *bytes = malloc(size);
            EXPECT_STATUS(moe_model_save_buffer(models[m], bytes, size, &size), MOE_OK);
            patch_u32(bytes, size, 28, links[m][l]);
            moe_model_t *out = NULL;
            EXPECT_STATUS(moe_model_load_buffer(&out, bytes, size), MOE_ERR_FORMAT);
            ck_assert_ptr_null(out);
            free(bytes);
        }
    moe_model_free(gaussian);
    moe_model_free(logistic);
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* The M-step                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* sum_i w_i sum_k r_ik log N(y_i; g(beta_k'x_i), sigma_k^2) - N ridge/2 ||beta||^2 at the
   model's parameters, written out: what an EM M-step must not decrease. */
static double penalised_surrogate(const moe_model_t *model, size_t n, size_t d, const double *X,
                                  const double *y, const double *resp, double ridge)
{
    size_t K = moe_model_n_experts(model), p = d + 1;
    double experts[16], variances[4];
    EXPECT_STATUS(moe_model_get_experts(model, experts, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, variances, K), MOE_OK);
    moe_link link = moe_model_link(model);
    double sum = 0.0, penalty = 0.0;
    for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < K; ++k) {
            double t = experts[k * p];
            for (size_t j = 0; j < d; ++j)
                t += experts[k * p + j + 1] * X[i * d + j];
            double e = y[i] - link_g(link, t);
            sum += resp[i * K + k] *
                   (-0.5 * log(two_pi * variances[k]) - 0.5 * e * e / variances[k]);
        }
    for (size_t k = 0; k < K; ++k)
        for (size_t j = 1; j < p; ++j)
            penalty += experts[k * p + j] * experts[k * p + j];
    return sum - (double)n * 0.5 * ridge * penalty;
}

START_TEST(m_step_never_decreases_the_surrogate)
{
    enum { N = 400, D = 2, K = 2, P = D + 1 };
    static double X[N * D], y[N], resp[N * K];
    moe_link links[] = {MOE_LINK_SIGMOID, MOE_LINK_RELU};
    double ridges[] = {0.0, 0.1};
    for (size_t l = 0; l < 2; ++l)
        for (size_t r = 0; r < 2; ++r)
            for (uint64_t seed = 1; seed <= 4; ++seed) {
                test_rng rng = {1000 * l + 10 * r + seed};
                for (size_t i = 0; i < N; ++i) {
                    for (size_t j = 0; j < D; ++j)
                        X[i * D + j] = test_normal(&rng);
                    double t = 0.5 + X[i * D] - X[i * D + 1];
                    y[i] = link_g(links[l], 2.0 * t) + 0.1 * test_normal(&rng);
                    double a = test_uniform(&rng);
                    resp[i * K] = a;
                    resp[i * K + 1] = 1.0 - a;
                }
                moe_model_t *model = make_model(links[l], K, D, 1);
                /* Seed 1 starts at the neutral model: for ReLU every predictor is at the
                   kink, no row has a slope, and only the least-squares restart can move. */
                if (seed > 1) {
                    double experts[K * P], variances[K];
                    for (size_t a = 0; a < K * P; ++a)
                        experts[a] = 2.0 * test_normal(&rng);
                    for (size_t k = 0; k < K; ++k)
                        variances[k] = 0.05 + test_uniform(&rng);
                    EXPECT_STATUS(moe_model_set_experts(model, experts, K * P), MOE_OK);
                    EXPECT_STATUS(moe_model_set_variances(model, variances, K), MOE_OK);
                }
                moe_data data = {N, D, D, 1, X, y, NULL};
                moe_expert_mstep_options options = {ridges[r], (double)N, 1e-8, 1e-9, 1, 0,
                                                    0.0, 25, 1e-10, 1, 0};
                double before = penalised_surrogate(model, N, D, X, y, resp, ridges[r]);
                for (int step = 0; step < 3; ++step) {
                    moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
                    char message[MOE_MESSAGE_SIZE] = "";
                    EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options,
                                                            &report, message),
                                  MOE_OK);
                    double after = penalised_surrogate(model, N, D, X, y, resp, ridges[r]);
                    ck_assert_msg(after >= before - 1e-12 * fabs(before),
                                  "link %d ridge %g seed %d step %d: %.17g after %.17g",
                                  (int)links[l], ridges[r], (int)seed, step, after, before);
                    if (step == 0)
                        ck_assert_msg(after > before + 1e-6 * fabs(before),
                                      "link %d ridge %g seed %d: the first M-step made no "
                                      "progress (%.17g, %.17g)",
                                      (int)links[l], ridges[r], (int)seed, after, before);
                    /* The variance alone would make progress: the coefficients must move
                       too, out of ReLU's dead start included. */
                    if (step == 0) {
                        double experts[K * P], moved = 0.0;
                        EXPECT_STATUS(moe_model_get_experts(model, experts, K * P), MOE_OK);
                        for (size_t a = 0; a < K * P; ++a)
                            moved += fabs(experts[a]);
                        ck_assert_msg(seed > 1 || moved > 0.1,
                                      "link %d ridge %g: the experts stayed at zero",
                                      (int)links[l], ridges[r]);
                    }
                    before = after;
                }
                moe_model_free(model);
            }
}
END_TEST

START_TEST(link_models_have_no_one_pass_statistics)
{
    moe_link links[] = {MOE_LINK_IDENTITY, MOE_LINK_SIGMOID, MOE_LINK_RELU};
    for (size_t l = 0; l < 3; ++l) {
        moe_model_t *model = make_model(links[l], 2, 2, 1);
        ck_assert_int_eq(moe_family_has_statistics(model) != 0, links[l] == MOE_LINK_IDENTITY);
        moe_model_free(model);
    }
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* Fits                                                                                       */
/* ---------------------------------------------------------------------------------------- */

enum { FN = 20000, FD = 2, FK = 2, FP = FD + 1 };

typedef struct link_truth {
    moe_link link;
    double gate[FK * FP], experts[FK * FP], variances[FK];
} link_truth;

/* Well separated experts, small noise; the gate splits the x plane along x1 - x2. */
static const link_truth sigmoid_truth = {
    MOE_LINK_SIGMOID,
    {0.3, 3.0, -3.0, 0.0, 0.0, 0.0},
    {-1.0, -1.5, 2.0, 1.0, 2.0, -1.0},
    {0.0025, 0.0016}};
static const link_truth relu_truth = {
    MOE_LINK_RELU,
    {-0.2, 3.0, -3.0, 0.0, 0.0, 0.0},
    {0.5, -1.5, 1.0, 1.0, 2.0, 1.5},
    {0.01, 0.0225}};

static void link_data(const link_truth *truth, uint64_t seed, double *X, double *y)
{
    test_rng rng = {seed};
    for (size_t i = 0; i < FN; ++i) {
        double *x = X + i * FD;
        for (size_t j = 0; j < FD; ++j)
            x[j] = test_normal(&rng);
        double logit = truth->gate[0] + truth->gate[1] * x[0] + truth->gate[2] * x[1];
        size_t z = test_uniform(&rng) < 1.0 / (1.0 + exp(-logit)) ? 0 : 1;
        const double *beta = truth->experts + z * FP;
        double t = beta[0] + beta[1] * x[0] + beta[2] * x[1];
        y[i] = link_g(truth->link, t) + sqrt(truth->variances[z]) * test_normal(&rng);
    }
}

static moe_fitter_t *make_fitter(const char *estimator, long long init, long long max_iter)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, estimator), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_INIT, init), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, max_iter), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_SEED, 5), MOE_OK);
    return fitter;
}

static moe_fit_report report_of(const moe_fitter_t *fitter)
{
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
    return report;
}

/* Largest coefficient error after matching the fitted experts to the truth. */
static double coefficient_error(const moe_model_t *model, const link_truth *truth,
                                double *variance_error)
{
    double experts[FK * FP], variances[FK];
    EXPECT_STATUS(moe_model_get_experts(model, experts, FK * FP), MOE_OK);
    EXPECT_STATUS(moe_model_get_variances(model, variances, FK), MOE_OK);
    size_t perm[FK];
    synthetic_align(FK, FP, truth->experts, experts, perm);
    double worst = 0.0;
    *variance_error = 0.0;
    for (size_t k = 0; k < FK; ++k) {
        for (size_t j = 0; j < FP; ++j)
            worst = fmax(worst, fabs(experts[perm[k] * FP + j] - truth->experts[k * FP + j]));
        *variance_error = fmax(*variance_error, fabs(variances[perm[k]] / truth->variances[k] -
                                                     1.0));
    }
    return worst;
}

/* A start near the truth: experts off by 0.3 per coefficient, variances 4 times too
   large, a flat gate. */
static moe_model_t *start_near(const link_truth *truth)
{
    moe_model_t *model = make_model(truth->link, FK, FD, 1);
    double experts[FK * FP], variances[FK];
    for (size_t a = 0; a < FK * FP; ++a)
        experts[a] = truth->experts[a] + (a % 2 == 0 ? 0.3 : -0.3);
    for (size_t k = 0; k < FK; ++k)
        variances[k] = 4.0 * truth->variances[k];
    EXPECT_STATUS(moe_model_set_experts(model, experts, FK * FP), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, FK), MOE_OK);
    return model;
}

static void expect_recovery(const link_truth *truth, uint64_t seed)
{
    double *X = malloc(FN * FD * sizeof(double)), *y = malloc(FN * sizeof(double));
    link_data(truth, seed, X, y);
    /* From the library's own k-means starts, not from the truth: on these data every
       single k-means start tried (seeds 0 to 5) reached the truth, so two restarts leave
       a wide margin. */
    moe_model_t *model = make_model(truth->link, FK, FD, 1);
    moe_fitter_t *fitter = make_fitter("em", MOE_INIT_KMEANS, 500);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 2), MOE_OK);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, FN, X, FD, y, NULL), MOE_OK);
    moe_fit_report report = report_of(fitter);
    double variance_error = 0.0, error = coefficient_error(model, truth, &variance_error);
    ck_assert_msg(report.converged, "link %d: not converged in %zu iterations", (int)truth->link,
                  report.iterations);
    ck_assert_msg(report.monotonicity_violations == 0, "link %d: %zu violations (worst %.3g)",
                  (int)truth->link, report.monotonicity_violations,
                  report.worst_relative_decrease);
    if (getenv("MOE_TEST_VERBOSE") != NULL)
        fprintf(stderr, "link %d: %zu iterations, coefficient error %.3g, variance error %.3g\n",
                (int)truth->link, report.iterations, error, variance_error);
    ck_assert_msg(error < 0.05, "link %d: coefficient error %.4g", (int)truth->link, error);
    ck_assert_msg(variance_error < 0.1, "link %d: relative variance error %.4g",
                  (int)truth->link, variance_error);
    moe_fitter_free(fitter);
    moe_model_free(model);
    free(X);
    free(y);
}

START_TEST(em_recovers_a_sigmoid_mixture)
{
    expect_recovery(&sigmoid_truth, 21);
}
END_TEST

START_TEST(em_recovers_a_relu_mixture)
{
    expect_recovery(&relu_truth, 22);
}
END_TEST

START_TEST(em_trace_never_decreases)
{
    /* From the neutral model's k-means start, a few iterations with a ridge: the
       log-likelihood trace may not fall by more than rounding. */
    const link_truth *truths[] = {&sigmoid_truth, &relu_truth};
    double *X = malloc(FN * FD * sizeof(double)), *y = malloc(FN * sizeof(double));
    for (size_t t = 0; t < 2; ++t) {
        link_data(truths[t], 30 + t, X, y);
        moe_model_t *model = make_model(truths[t]->link, FK, FD, 1);
        moe_fitter_t *fitter = make_fitter("em", MOE_INIT_KMEANS, 12);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, FN, X, FD, y, NULL), MOE_OK);
        size_t length = 0;
        EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
        ck_assert(length >= 12 && length <= 16);
        double trace[16];
        EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, 16, &length), MOE_OK);
        for (size_t i = 1; i < length; ++i)
            ck_assert_msg(trace[i] >= trace[i - 1] - 1e-12 * (FN + fabs(trace[i - 1])),
                          "link %d: the log-likelihood fell at iteration %zu: %.17g -> %.17g",
                          (int)truths[t]->link, i, trace[i - 1], trace[i]);
        ck_assert(trace[length - 1] > trace[0]);
        ck_assert_uint_eq(report_of(fitter).monotonicity_violations, 0);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    free(X);
    free(y);
}
END_TEST

START_TEST(gradient_estimators_fit_link_models)
{
    /* gem and gd with their default (safe) steps, the variances held as the start has
       them: the step bound covers the coefficients' Gauss-Newton curvature only
       (lib/model/family.h, curvature), and near a good fit that is what matters. */
    const link_truth *truths[] = {&sigmoid_truth, &relu_truth};
    const char *estimators[] = {"gem", "gd"};
    double *X = malloc(FN * FD * sizeof(double)), *y = malloc(FN * sizeof(double));
    for (size_t t = 0; t < 2; ++t) {
        link_data(truths[t], 40 + t, X, y);
        for (size_t e = 0; e < 2; ++e) {
            moe_model_t *model = start_near(truths[t]);
            moe_fitter_t *fitter = make_fitter(estimators[e], MOE_INIT_MODEL, 60);
            EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
            EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0), MOE_OK);
            EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_UPDATE_VARIANCE, 0), MOE_OK);
            EXPECT_STATUS(moe_fitter_fit(fitter, model, FN, X, FD, y, NULL), MOE_OK);
            moe_fit_report report = report_of(fitter);
            ck_assert_msg(report.monotonicity_violations == 0,
                          "%s link %d: %zu violations (worst %.3g)", estimators[e],
                          (int)truths[t]->link, report.monotonicity_violations,
                          report.worst_relative_decrease);
            size_t length = 0;
            EXPECT_STATUS(moe_fitter_get_trace(fitter, NULL, 0, &length), MOE_OK);
            double *trace = malloc(length * sizeof(double));
            EXPECT_STATUS(moe_fitter_get_trace(fitter, trace, length, &length), MOE_OK);
            ck_assert_msg(trace[length - 1] > trace[0], "%s link %d made no progress",
                          estimators[e], (int)truths[t]->link);
            free(trace);
            moe_fitter_free(fitter);
            moe_model_free(model);
        }
    }
    free(X);
    free(y);
}
END_TEST

START_TEST(link_fits_do_not_depend_on_threads)
{
    /* 20000 rows are five row chunks: the Gauss-Newton passes add their partial sums in
       chunk order, so two threads must give the one-thread fit bit for bit. */
    const link_truth *truths[] = {&sigmoid_truth, &relu_truth};
    double *X = malloc(FN * FD * sizeof(double)), *y = malloc(FN * sizeof(double));
    for (size_t t = 0; t < 2; ++t) {
        link_data(truths[t], 50 + t, X, y);
        double experts[2][FK * FP], variances[2][FK], gate[2][FK * FP];
        for (int threads = 1; threads <= 2; ++threads) {
            moe_model_t *model = make_model(truths[t]->link, FK, FD, 1);
            moe_fitter_t *fitter = make_fitter("em", MOE_INIT_KMEANS, 30);
            EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1), MOE_OK);
            EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_THREADS, threads), MOE_OK);
            EXPECT_STATUS(moe_fitter_fit(fitter, model, FN, X, FD, y, NULL), MOE_OK);
            EXPECT_STATUS(moe_model_get_experts(model, experts[threads - 1], FK * FP), MOE_OK);
            EXPECT_STATUS(moe_model_get_variances(model, variances[threads - 1], FK), MOE_OK);
            EXPECT_STATUS(moe_model_get_gate(model, gate[threads - 1], FK * FP), MOE_OK);
            moe_fitter_free(fitter);
            moe_model_free(model);
        }
        ck_assert(memcmp(experts[0], experts[1], sizeof experts[0]) == 0);
        ck_assert(memcmp(variances[0], variances[1], sizeof variances[0]) == 0);
        ck_assert(memcmp(gate[0], gate[1], sizeof gate[0]) == 0);
    }
    free(X);
    free(y);
}
END_TEST

static Suite *links_suite(void)
{
    Suite *suite = suite_create("links");
    TCase *model = tcase_create("model");
    tcase_add_test(model, gradient_matches_finite_differences);
    tcase_add_test(model, predict_loglik_posterior_by_hand);
    tcase_add_test(model, sigmoid_is_stable_in_the_tails);
    tcase_add_test(model, save_load_round_trip_is_exact);
    tcase_add_test(model, links_the_format_does_not_allow_are_rejected);
    tcase_add_test(model, m_step_never_decreases_the_surrogate);
    tcase_add_test(model, link_models_have_no_one_pass_statistics);
    suite_add_tcase(suite, model);
    TCase *fits = tcase_create("fits");
    tcase_set_timeout(fits, 120);
    tcase_add_test(fits, em_recovers_a_sigmoid_mixture);
    tcase_add_test(fits, em_recovers_a_relu_mixture);
    tcase_add_test(fits, em_trace_never_decreases);
    tcase_add_test(fits, gradient_estimators_fit_link_models);
    tcase_add_test(fits, link_fits_do_not_depend_on_threads);
    suite_add_tcase(suite, fits);
    return suite;
}

int main(void)
{
    return run_suite(links_suite());
}
