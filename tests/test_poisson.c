/*
 * Poisson experts (MOE_FAMILY_POISSON, log link): the expert gradient against central
 * differences of the surrogate written out here, the exact M-step (its gradient vanishes and
 * it never lowers the objective), em's monotone log-likelihood, recovery of a known truth,
 * save/load bit for bit, the observed information against second differences of the
 * log-likelihood, ot's reduction (monotone, recovery, its log-likelihood against em's), the
 * estimators that refuse the family, and the response errors.
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

/* The truth of the recovery test: gate P(expert 0 | x) = sigmoid(2.5 x), experts
   log mu = 1 + 0.8 x and 2 - 0.5 x, x uniform on (-2, 2). */
static void make_data(size_t n, uint64_t seed)
{
    test_rng rng = {seed};
    for (size_t i = 0; i < n; ++i) {
        double x = -2.0 + 4.0 * test_uniform(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.5 * x));
        double eta = first ? 1.0 + 0.8 * x : 2.0 - 0.5 * x;
        X[i] = x;
        Y[i] = test_poisson(&rng, exp(eta));
        W[i] = 0.5 + test_uniform(&rng);
    }
}

static moe_model_t *new_model(size_t K)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_POISSON;
    spec.n_experts = K;
    spec.n_features = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

static void set_random(moe_model_t *model, test_rng *rng)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    double gate[16], experts[16];
    for (size_t a = 0; a < K * p; ++a) {
        gate[a] = 0.7 * test_normal(rng);
        experts[a] = 0.5 * test_normal(rng);
    }
    EXPECT_STATUS(moe_model_set_gate(model, gate, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, experts, K * p), MOE_OK);
}

START_TEST(names_and_spec)
{
    ck_assert_str_eq(moe_family_name(MOE_FAMILY_POISSON), "poisson");
    moe_family family = MOE_FAMILY_GAUSSIAN;
    EXPECT_STATUS(moe_family_from_name("poisson", &family), MOE_OK);
    ck_assert_int_eq(family, MOE_FAMILY_POISSON);
    ck_assert_int_eq(MOE_FAMILY_POISSON, 4);
    moe_model_t *model = new_model(2);
    ck_assert_uint_eq(moe_model_expert_rows(model), 1);
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 + 4); /* gate row, two experts */
    double variances[2];
    ck_assert_int_ne(moe_model_get_variances(model, variances, 2), MOE_OK);
    moe_model_free(model);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_POISSON;
    spec.link = MOE_LINK_SIGMOID;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_UNSUPPORTED);
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
            sum += W[i] * resp[i * K + k] * (Y[i] * eta - exp(eta) - lgamma(Y[i] + 1.0));
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

START_TEST(gradient_matches_differences)
{
    enum { K = 3 };
    make_data(SMALL, 5);
    test_rng rng = {9};
    moe_model_t *model = new_model(K);
    set_random(model, &rng);
    double resp[SMALL * K], gradient[K * 2];
    random_resp(SMALL, K, resp, &rng);
    moe_data data = {SMALL, 1, 1, 1, X, Y, W};
    double total = 0.0;
    for (size_t i = 0; i < SMALL; ++i)
        total += W[i];
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
    moe_model_free(model);
}
END_TEST

START_TEST(m_step_is_exact_and_never_lowers_the_objective)
{
    enum { K = 2 };
    make_data(SMALL, 6);
    test_rng rng = {10};
    moe_data data = {SMALL, 1, 1, 1, X, Y, W};
    double total = 0.0;
    for (size_t i = 0; i < SMALL; ++i)
        total += W[i];
    for (int trial = 0; trial < 4; ++trial) {
        moe_model_t *model = new_model(K);
        set_random(model, &rng);
        double resp[SMALL * K], gradient[K * 2];
        random_resp(SMALL, K, resp, &rng);
        double ridge = trial % 2 ? 0.1 : 0.0;
        /* Newton stops at a decrement of 1e-14: gradients near 1e-7 */
        moe_expert_mstep_options options = {ridge, total, 1e-12, 1e-9, 0, 0, 0.0, 50, 1e-14, 1, 0};
        moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
        double before = surrogate(model, SMALL, resp, ridge);
        char message[256] = "";
        EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options, &report, message),
                      MOE_OK);
        double after = surrogate(model, SMALL, resp, ridge);
        ck_assert_msg(after <= before, "the M-step raised the surrogate %g -> %g", before, after);
        EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, ridge, total, 1, gradient,
                                                  NULL, NULL),
                      MOE_OK);
        for (size_t a = 0; a < K * 2; ++a)
            ck_assert_msg(fabs(gradient[a]) < 1e-6, "gradient %zu is %g after the M-step", a,
                          gradient[a]);
        ck_assert_uint_eq(report.degenerate_experts, 0);
        ck_assert_uint_eq(report.line_search_failures, 0);
        /* The inexact M-step: gradient steps, each halved until the objective drops. */
        set_random(model, &rng);
        before = surrogate(model, SMALL, resp, ridge);
        options.inner_steps = 5;
        options.step = 10.0; /* far beyond the curvature: the halving must save it */
        EXPECT_STATUS(model->family_ops->m_step(model, &data, resp, &options, &report, message),
                      MOE_OK);
        ck_assert(surrogate(model, SMALL, resp, ridge) <= before);
        moe_model_free(model);
    }
}
END_TEST

/* The exact M-step of one expert with every responsibility 1 on the first SMALL rows of
   X, Y (the message into `message`, 256 bytes). */
static moe_status one_expert_m_step(moe_model_t *model, char *message)
{
    double resp[SMALL];
    for (size_t i = 0; i < SMALL; ++i)
        resp[i] = 1.0;
    moe_data data = {SMALL, 1, 1, 1, X, Y, NULL};
    moe_expert_mstep_options options = {0.0, SMALL, 1e-12, 1e-9, 0, 0, 0.0, 50, 1e-14, 1, 0};
    moe_expert_mstep_report report = MOE_EXPERT_MSTEP_REPORT_INIT;
    return model->family_ops->m_step(model, &data, resp, &options, &report, message);
}

START_TEST(m_step_refuses_overflowing_rates)
{
    make_data(SMALL, 6);
    moe_model_t *model = new_model(1);
    double experts[2] = {800.0, 0.0}; /* exp(800) overflows */
    EXPECT_STATUS(moe_model_set_experts(model, experts, 2), MOE_OK);
    char message[256] = "";
    EXPECT_STATUS(one_expert_m_step(model, message), MOE_ERR_NUMERICAL);
    ck_assert_ptr_nonnull(strstr(message, "overflow"));
    double after[2];
    EXPECT_STATUS(moe_model_get_experts(model, after, 2), MOE_OK);
    ck_assert(after[0] == 800.0 && after[1] == 0.0);
    moe_model_free(model);
}
END_TEST

/* Counts up to 2^53 are in the documented range. One count of 8e15 or 2^53 among counts
   of a few: a model whose rate at that row misses it by a factor of 2 loses about 0.19 y
   (1.5e15 nats), so a log-likelihood above -1e4 says some expert took the count. Before,
   em's M-step from the starting zeros overshot (a Newton step of about y / n in the log
   rate, beyond 40 halvings), kept the zeros and called that converged (-2.8e17), and gem
   and gd failed. Each estimator here; and the M-step itself from zeros. */
START_TEST(one_huge_count_is_fitted)
{
    static const double huge[] = {8e15, 9007199254740992.0};
    static const char *const estimators[] = {"em", "gem", "gd"};
    for (size_t h = 0; h < 2; ++h) {
        make_data(SMALL, 21);
        Y[3] = huge[h];
        for (size_t e = 0; e < 3; ++e) {
            moe_model_t *model = new_model(2);
            moe_fitter_t *fitter = NULL;
            EXPECT_STATUS(moe_fitter_create(&fitter, estimators[e]), MOE_OK);
            ck_assert_msg(moe_fitter_fit(fitter, model, SMALL, X, 1, Y, NULL) == MOE_OK,
                          "%s, y = %g: %s", estimators[e], huge[h],
                          moe_fitter_last_error(fitter));
            double loglik = 0.0;
            EXPECT_STATUS(moe_model_loglik(model, SMALL, X, 1, Y, NULL, &loglik), MOE_OK);
            ck_assert_msg(loglik > -1e4, "%s, y = %g: log-likelihood %g", estimators[e], huge[h],
                          loglik);
            moe_fitter_free(fitter);
            moe_model_free(model);
        }
        /* one expert, every responsibility 1, from zeros: the exact M-step reaches the
           optimum, where the intercept's gradient (sum mu - sum y) / n vanishes */
        moe_model_t *model = new_model(1);
        char message[256] = "";
        EXPECT_STATUS(one_expert_m_step(model, message), MOE_OK);
        double resp[SMALL];
        for (size_t i = 0; i < SMALL; ++i)
            resp[i] = 1.0;
        moe_data data = {SMALL, 1, 1, 1, X, Y, NULL};
        double gradient[2];
        EXPECT_STATUS(model->family_ops->gradient(model, &data, resp, 0.0, SMALL, 1, gradient,
                                                  NULL, NULL),
                      MOE_OK);
        double counts = 0.0;
        for (size_t i = 0; i < SMALL; ++i)
            counts += Y[i];
        ck_assert_msg(fabs(gradient[0]) * SMALL <= 1e-6 * counts,
                      "y = %g: the intercept's gradient is %g of counts %g", huge[h],
                      gradient[0] * SMALL, counts);
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

/* The fitted experts matched to the truth's by their slopes' signs. */
static double recovery_error(const moe_model_t *model)
{
    double experts[4];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
    int rising = experts[1] > experts[3] ? 0 : 1;
    const double *a = experts + 2 * rising, *b = experts + 2 * (1 - rising);
    double truth[4] = {1.0, 0.8, 2.0, -0.5}, fitted[4] = {a[0], a[1], b[0], b[1]};
    double worst = 0.0;
    for (int j = 0; j < 4; ++j)
        if (fabs(fitted[j] - truth[j]) > worst)
            worst = fabs(fitted[j] - truth[j]);
    return worst;
}

/*
 * n = 2000 from the truth above, five data seeds, em from the defaults. The tolerance 0.25 is
 * about four standard errors of the least well determined coefficient (the rising expert's
 * intercept, about 0.06 at this n by moe_model_vcov), so a correct fit fails it by chance
 * about once in 10^4 coefficients; a fit stuck in the wrong mode misses by more than 0.5.
 */
START_TEST(recovers_known_experts)
{
    double worst = 0.0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        make_data(N, 100 + seed);
        moe_model_t *model = new_model(2);
        moe_fitter_t *fitter = test_fitter("em", seed);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, 1, Y, NULL), MOE_OK);
        double error = recovery_error(model);
        if (error > worst)
            worst = error;
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    printf("poisson recovery: worst coefficient error %.4f over 5 seeds\n", worst);
    ck_assert_msg(worst < 0.25, "worst coefficient error %g", worst);
}
END_TEST

START_TEST(gem_and_gd_fit_poisson_experts)
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
        /* From a perturbed em fit, the gradient estimators climb back to its value. */
        double experts[4];
        EXPECT_STATUS(moe_model_get_experts(model, experts, 4), MOE_OK);
        experts[0] -= 0.3;
        experts[3] += 0.2;
        EXPECT_STATUS(moe_model_set_experts(model, experts, 4), MOE_OK);
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

/*
 * ot on the recovery test's data (n = 2000, four shards of 500 rows, K = 2): the same
 * tolerance as em's, 0.25, about four standard errors at the full n (the reduction pools
 * four local fits, so it sees all the rows). Measured: worst coefficient error 0.044 over
 * five seeds (em's 0.045).
 */
START_TEST(ot_recovers_known_experts)
{
    double worst = 0.0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        make_data(N, 100 + seed);
        moe_model_t *model = new_model(2);
        moe_fitter_t *fitter = test_fitter("ot", seed);
        EXPECT_STATUS(moe_fitter_set_option(fitter, "shards", "4"), MOE_OK);
        ck_assert_msg(moe_fitter_fit(fitter, model, N, X, 1, Y, NULL) == MOE_OK, "seed %d: %s",
                      (int)seed, moe_fitter_last_error(fitter));
        double error = recovery_error(model);
        if (error > worst)
            worst = error;
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    printf("poisson ot recovery: worst coefficient error %.4f over 5 seeds\n", worst);
    ck_assert_msg(worst < 0.25, "worst coefficient error %g", worst);
}
END_TEST

/*
 * ot's fit against em's on the same rows (weighted, n = 2000, four shards, five seeds): the
 * transport reduction's and the average baseline's log-likelihood per unit weight is within
 * 2e-3 nats of em's, the middle baseline's (one local model, fitted on a quarter of the rows)
 * within 2e-2. Measured: at most 4.7e-4 below em's (transport), 1.9e-4 (average), 5.6e-3
 * (middle). One shard is a local em on all the rows, returned as it is.
 */
START_TEST(ot_loglik_is_close_to_em)
{
    const char *reductions[] = {"transport", "middle", "average", "transport"};
    double worst[4] = {0.0, 0.0, 0.0, 0.0};
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        make_data(N, 200 + seed);
        moe_model_t *reference = new_model(2);
        moe_fitter_t *em = test_fitter("em", seed);
        EXPECT_STATUS(moe_fitter_fit(em, reference, N, X, 1, Y, W), MOE_OK);
        double best = 0.0, total = 0.0;
        EXPECT_STATUS(moe_model_loglik(reference, N, X, 1, Y, W, &best), MOE_OK);
        for (size_t i = 0; i < N; ++i)
            total += W[i];
        for (int r = 0; r < 4; ++r) {
            moe_model_t *model = new_model(2);
            moe_fitter_t *fitter = test_fitter("ot", seed);
            EXPECT_STATUS(moe_fitter_set_option(fitter, "reduction", reductions[r]), MOE_OK);
            EXPECT_STATUS(moe_fitter_set_option(fitter, "shards", r == 3 ? "1" : "4"), MOE_OK);
            ck_assert_msg(moe_fitter_fit(fitter, model, N, X, 1, Y, W) == MOE_OK, "%s: %s",
                          reductions[r], moe_fitter_last_error(fitter));
            double loglik = 0.0;
            EXPECT_STATUS(moe_model_loglik(model, N, X, 1, Y, W, &loglik), MOE_OK);
            double gap = (best - loglik) / total;
            if (gap > worst[r])
                worst[r] = gap;
            ck_assert_msg(gap < (r == 1 ? 2e-2 : 2e-3), "seed %d, %s: log-likelihood %.10g, em's %.10g", (int)seed,
                          reductions[r], loglik, best);
            moe_fitter_free(fitter);
            moe_model_free(model);
        }
        moe_fitter_free(em);
        moe_model_free(reference);
    }
    printf("poisson ot: log-likelihood per unit weight below em's at most %.2e (transport), %.2e "
           "(middle), %.2e (average), %.2e (one shard)\n",
           worst[0], worst[1], worst[2], worst[3]);
}
END_TEST

/* Random local models (three experts each) reduced to two by moe_fitter_aggregate: the
   transport objective never increases, with or without the expert ridge (which the
   reduction's M-step adds), and the posterior gate targets take Poisson densities. */
START_TEST(ot_transport_objective_never_increases)
{
    make_data(SMALL, 46);
    test_rng rng = {14};
    for (int trial = 0; trial < 6; ++trial) {
        moe_model_t *locals[4];
        for (int m = 0; m < 4; ++m) {
            locals[m] = new_model(3);
            set_random(locals[m], &rng);
        }
        moe_model_t *target = new_model(2);
        moe_fitter_t *fitter = test_fitter("ot", (uint64_t)trial);
        EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_option(fitter, "local_tol", "0"), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 100), MOE_OK);
        EXPECT_STATUS(moe_fitter_set_double(fitter, MOE_OPT_EXPERT_RIDGE, trial % 2 ? 0.05 : 0.0),
                      MOE_OK);
        if (trial >= 4)
            EXPECT_STATUS(moe_fitter_set_option(fitter, "gate_targets", "posterior"), MOE_OK);
        ck_assert_msg(moe_fitter_aggregate(fitter, target, 4, (const moe_model_t *const *)locals,
                                           NULL, SMALL, X, 1, Y, NULL) == MOE_OK,
                      "trial %d: %s", trial, moe_fitter_last_error(fitter));
        size_t length = 0;
        double *trace = test_fit_trace(fitter, &length);
        ck_assert_uint_ge(length, 3);
        for (size_t t = 1; t < length; ++t)
            ck_assert_msg(trace[t] >= trace[t - 1] - 1e-12 * (SMALL + fabs(trace[t - 1])),
                          "trial %d: the objective rose from %.15g to %.15g", trial,
                          -trace[t - 1], -trace[t]);
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        EXPECT_STATUS(moe_fitter_get_report(fitter, &report), MOE_OK);
        ck_assert_uint_eq(report.monotonicity_violations, 0);
        double parameters[4];
        EXPECT_STATUS(moe_model_get_experts(target, parameters, 4), MOE_OK);
        for (int i = 0; i < 4; ++i)
            ck_assert(isfinite(parameters[i]));
        free(trace);
        moe_fitter_free(fitter);
        moe_model_free(target);
        for (int m = 0; m < 4; ++m)
            moe_model_free(locals[m]);
    }
}
END_TEST

START_TEST(save_load_round_trip)
{
    make_data(SMALL, 41);
    test_rng rng = {3};
    moe_model_t *model = new_model(3);
    set_random(model, &rng);
    EXPECT_STATUS(moe_model_set_name(model, MOE_NAME_RESPONSE, 0, "visits"), MOE_OK);
    unsigned char buffer[4096];
    size_t written = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, buffer, sizeof buffer, &written), MOE_OK);
    moe_model_t *loaded = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&loaded, buffer, written), MOE_OK);
    ck_assert_int_eq(moe_model_family(loaded), MOE_FAMILY_POISSON);
    ck_assert_str_eq(moe_model_get_name(loaded, MOE_NAME_RESPONSE, 0), "visits");
    double a[6], b[6];
    EXPECT_STATUS(moe_model_get_experts(model, a, 6), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(loaded, b, 6), MOE_OK);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    EXPECT_STATUS(moe_model_get_gate(model, a, 6), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(loaded, b, 6), MOE_OK);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    double first[SMALL], second[SMALL];
    EXPECT_STATUS(moe_model_predict(model, SMALL, X, 1, first, SMALL), MOE_OK);
    EXPECT_STATUS(moe_model_predict(loaded, SMALL, X, 1, second, SMALL), MOE_OK);
    ck_assert(memcmp(first, second, sizeof first) == 0);
    /* A second save of the loaded model is the same bytes. */
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
    size_t classes[SMALL];
    double accuracy = 0.0;
    EXPECT_STATUS(moe_model_classify(model, SMALL, X, 1, classes, SMALL), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_model_accuracy(model, SMALL, X, 1, Y, NULL, &accuracy),
                  MOE_ERR_UNSUPPORTED);
    moe_model_free(model);
}
END_TEST

static double loglik_at(moe_model_t *model, const double *theta, int weighted)
{
    /* theta: gate row 0 (2), experts (4) */
    double gate[4] = {theta[0], theta[1], 0.0, 0.0};
    EXPECT_STATUS(moe_model_set_gate(model, gate, 4), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, theta + 2, 4), MOE_OK);
    double value = 0.0;
    EXPECT_STATUS(moe_model_loglik(model, SMALL, X, 1, Y, weighted ? W : NULL, &value), MOE_OK);
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
    const char *estimators[] = {"cqt", "ismm"};
    const char *words[] = {"Gaussian", "no quadratic majoriser"};
    for (int e = 0; e < 2; ++e) {
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.family = MOE_FAMILY_POISSON;
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

START_TEST(responses_that_are_not_counts)
{
    make_data(SMALL, 45);
    moe_model_t *model = new_model(2);
    double saved = Y[7], loglik = 0.0;
    const double bad[] = {-1.0, 2.5, NAN};
    const moe_status expected[] = {MOE_ERR_INVALID_LABEL, MOE_ERR_INVALID_LABEL,
                                   MOE_ERR_NON_FINITE};
    for (int b = 0; b < 3; ++b) {
        Y[7] = bad[b];
        EXPECT_STATUS(moe_model_loglik(model, SMALL, X, 1, Y, NULL, &loglik), expected[b]);
        ck_assert_ptr_nonnull(strstr(moe_last_error(), "7"));
        moe_fitter_t *fitter = test_fitter("em", 1);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, SMALL, X, 1, Y, NULL), expected[b]);
        ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "7"));
        moe_fitter_free(fitter);
    }
    Y[7] = saved;
    moe_model_free(model);
}
END_TEST

static Suite *poisson_suite(void)
{
    Suite *suite = suite_create("poisson");
    TCase *unit = tcase_create("unit");
    tcase_set_timeout(unit, 120);
    tcase_add_test(unit, names_and_spec);
    tcase_add_test(unit, gradient_matches_differences);
    tcase_add_test(unit, m_step_is_exact_and_never_lowers_the_objective);
    tcase_add_test(unit, m_step_refuses_overflowing_rates);
    tcase_add_test(unit, one_huge_count_is_fitted);
    tcase_add_test(unit, em_is_monotone);
    tcase_add_test(unit, recovers_known_experts);
    tcase_add_test(unit, gem_and_gd_fit_poisson_experts);
    tcase_add_test(unit, ot_recovers_known_experts);
    tcase_add_test(unit, ot_loglik_is_close_to_em);
    tcase_add_test(unit, ot_transport_objective_never_increases);
    tcase_add_test(unit, save_load_round_trip);
    tcase_add_test(unit, predict_is_the_mixture_mean);
    tcase_add_test(unit, information_is_the_negative_hessian);
    tcase_add_test(unit, unsupported_estimators_refuse);
    tcase_add_test(unit, responses_that_are_not_counts);
    suite_add_tcase(suite, unit);
    return suite;
}

int main(void)
{
    return run_suite(poisson_suite());
}
