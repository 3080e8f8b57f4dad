/*
 * A gate and experts that see different columns of the design (model spec version 2), and
 * the experts' offset: the spec's checks, held coefficients (zero, or one for the offset)
 * that the setters guard and every estimator keeps, recovery of a known truth whose gate
 * and experts use different covariates, the information as the submatrix of the
 * unrestricted model's, save/load (format version 3) and Poisson exposure.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/runner.h"
#include "support/synthetic.h"

enum { N = 3000, D = 2 };

/* Column 0 is x (the experts' covariate), column 1 is z (the gate's). */
static double X[N * D], Y[N];

static const unsigned char GATE_SEES_Z[D] = {0, 1};
static const unsigned char EXPERTS_SEE_X[D] = {1, 0};

/* Truth: P(expert 0 | z) = sigmoid(3 z); experts y = 1 + 2 x and -1 - 1.5 x, sigma 0.3.
   x and z independent, so a gate on x learns nothing and experts on z fit nothing. */
static void make_data(size_t n, uint64_t seed)
{
    test_rng rng = {seed};
    for (size_t i = 0; i < n; ++i) {
        double x = test_normal(&rng), z = test_normal(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-3.0 * z));
        X[i * D] = x;
        X[i * D + 1] = z;
        Y[i] = (first ? 1.0 + 2.0 * x : -1.0 - 1.5 * x) + 0.3 * test_normal(&rng);
    }
}

static moe_model_spec split_spec(moe_family family)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_features = D;
    spec.gate_features = GATE_SEES_Z;
    spec.expert_features = EXPERTS_SEE_X;
    return spec;
}

static moe_model_t *split_model(void)
{
    moe_model_spec spec = split_spec(MOE_FAMILY_GAUSSIAN);
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

/* Gate and expert coefficients of the inputs a part does not see are exactly zero. */
static void assert_held(const moe_model_t *model)
{
    double gate[6], experts[6];
    EXPECT_STATUS(moe_model_get_gate(model, gate, 6), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
    for (size_t k = 0; k < 2; ++k) {
        ck_assert_msg(gate[k * 3 + 1] == 0.0, "gate %zu sees x: %g", k, gate[k * 3 + 1]);
        ck_assert_msg(experts[k * 3 + 2] == 0.0, "expert %zu sees z: %g", k,
                      experts[k * 3 + 2]);
    }
}

START_TEST(spec_checks)
{
    moe_model_spec spec = split_spec(MOE_FAMILY_GAUSSIAN);
    moe_model_t *model = NULL;
    static const unsigned char none[D] = {0, 0};
    spec.gate_features = none;
    spec.gate_intercept = 0;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(moe_last_error(), "gate sees no input"));
    spec.gate_intercept = 1; /* an intercept-only gate: constant weights */
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    ck_assert_uint_eq(moe_model_n_free_params(model), 1 + 2 * (2 + 1));
    moe_model_free(model);
    spec = split_spec(MOE_FAMILY_GAUSSIAN);
    spec.expert_intercept = 2;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_INVALID_ARGUMENT);
    spec.expert_intercept = 1;
    spec.offset_feature = D;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_INVALID_ARGUMENT);
    /* the range names the last feature, D - 1 */
    ck_assert_msg(strstr(moe_last_error(), "a feature in 0..1, got 2") != NULL, "%s",
                  moe_last_error());
    spec.n_features = 0; /* an intercept alone: no feature can be the offset */
    spec.gate_features = spec.expert_features = NULL;
    spec.offset_feature = 0;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(moe_last_error(), "no features") != NULL &&
                      strstr(moe_last_error(), "0..") == NULL,
                  "%s", moe_last_error());
    spec = split_spec(MOE_FAMILY_GAUSSIAN);
    spec.offset_feature = -2;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_INVALID_ARGUMENT);
    spec.offset_feature = 1;
    spec.link = MOE_LINK_SIGMOID;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_UNSUPPORTED);
    spec = split_spec(MOE_FAMILY_MULTINOMIAL);
    spec.n_classes = 3;
    spec.offset_feature = 1;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_ERR_UNSUPPORTED);
    /* A version 1 spec never reads the later fields, whatever they hold. */
    spec = split_spec(MOE_FAMILY_GAUSSIAN);
    spec.version = 1;
    spec.gate_intercept = 7;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    moe_model_spec read = MOE_MODEL_SPEC_INIT;
    EXPECT_STATUS(moe_model_get_spec(model, &read), MOE_OK);
    ck_assert_ptr_null(read.gate_features);
    ck_assert_ptr_null(read.expert_features);
    ck_assert_int_eq(read.offset_feature, -1);
    ck_assert_uint_eq(moe_model_n_free_params(model), 3 + 2 * 4);
    moe_model_free(model);
}
END_TEST

/* A caller compiled against 1.0's header has a version 1 spec: nothing past its fields may
   be written. */
START_TEST(version_1_specs_are_written_within_their_size)
{
    size_t size = offsetof(moe_model_spec, gate_features);
    unsigned char buffer[sizeof(moe_model_spec) + 16];
    memset(buffer, 0xA5, sizeof buffer);
    moe_model_spec *spec = (moe_model_spec *)(void *)buffer;
    EXPECT_STATUS(moe_model_spec_init(spec, 1), MOE_OK);
    for (size_t i = size; i < sizeof buffer; ++i)
        ck_assert_msg(buffer[i] == 0xA5, "spec_init(version 1) wrote byte %zu", i);
    ck_assert_uint_eq(spec->n_experts, 2);
    spec->n_features = D;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, spec), MOE_OK);
    EXPECT_STATUS(moe_model_get_spec(model, spec), MOE_OK);
    for (size_t i = size; i < sizeof buffer; ++i)
        ck_assert_msg(buffer[i] == 0xA5, "get_spec(version 1) wrote byte %zu", i);
    moe_model_free(model);
}
END_TEST

START_TEST(spec_reads_back_and_clones)
{
    moe_model_t *model = split_model(), *copy = NULL;
    /* (K - 1) x (intercept, z) + K x (intercept, x, variance) */
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 + 2 * 3);
    EXPECT_STATUS(moe_model_clone(&copy, model), MOE_OK);
    moe_model_spec read = MOE_MODEL_SPEC_INIT;
    EXPECT_STATUS(moe_model_get_spec(copy, &read), MOE_OK);
    ck_assert_ptr_nonnull(read.gate_features);
    ck_assert_mem_eq(read.gate_features, GATE_SEES_Z, D);
    ck_assert_mem_eq(read.expert_features, EXPERTS_SEE_X, D);
    ck_assert_int_eq(read.gate_intercept, 1);
    ck_assert_int_eq(read.expert_intercept, 1);
    EXPECT_STATUS(moe_model_copy_parameters(copy, model), MOE_OK);
    /* A model that sees every input has another structure. */
    moe_model_spec full = MOE_MODEL_SPEC_INIT;
    full.n_features = D;
    moe_model_t *other = NULL;
    EXPECT_STATUS(moe_model_create(&other, &full), MOE_OK);
    EXPECT_STATUS(moe_model_copy_parameters(other, model), MOE_ERR_DIMENSION);
    moe_model_free(other);
    moe_model_free(copy);
    moe_model_free(model);
}
END_TEST

START_TEST(setters_guard_held_coefficients)
{
    moe_model_t *model = split_model();
    double gate[6] = {0.5, 0.0, 1.0, 0, 0, 0}, experts[6] = {1, 2, 0, -1, -1.5, 0};
    EXPECT_STATUS(moe_model_set_gate(model, gate, 6), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, experts, 6), MOE_OK);
    gate[1] = 0.25;
    EXPECT_STATUS(moe_model_set_gate(model, gate, 6), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(moe_model_last_error(model), "gate does not see"));
    experts[5] = 1e-300;
    EXPECT_STATUS(moe_model_set_experts(model, experts, 6), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(moe_model_last_error(model), "is 1e-300, but it must "
                                                      "be 0") != NULL,
                  "%s", moe_model_last_error(model));
    /* a value one ulp from the held one reads as itself, not as "1, but it must be 1" */
    moe_model_spec offset = split_spec(MOE_FAMILY_GAUSSIAN);
    offset.offset_feature = 1;
    moe_model_t *with_offset = NULL;
    EXPECT_STATUS(moe_model_create(&with_offset, &offset), MOE_OK);
    double shifted[6] = {0, 0, 1.0 + DBL_EPSILON, 0, 0, 1};
    EXPECT_STATUS(moe_model_set_experts(with_offset, shifted, 6), MOE_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(moe_model_last_error(with_offset), "is 1.0000000000000002, but it must "
                                                            "be 1") != NULL,
                  "%s", moe_model_last_error(with_offset));
    moe_model_free(with_offset);
    double back[6];
    EXPECT_STATUS(moe_model_get_gate(model, back, 6), MOE_OK);
    ck_assert(back[1] == 0.0 && back[0] == 0.5);
    moe_model_free(model);
}
END_TEST

/* The fitted experts in the truth's order (by the sign of their slope on x). */
static void fitted_slopes(const moe_model_t *model, double *intercepts, double *slopes)
{
    double experts[6];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
    size_t first = experts[1] > experts[4] ? 0 : 1;
    intercepts[0] = experts[first * 3];
    slopes[0] = experts[first * 3 + 1];
    intercepts[1] = experts[(1 - first) * 3];
    slopes[1] = experts[(1 - first) * 3 + 1];
}

START_TEST(em_recovers_a_gate_on_its_own_covariate)
{
    double worst = 0.0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        make_data(N, 100 + seed);
        moe_model_t *model = split_model();
        moe_fitter_t *fitter = test_fitter("em", seed);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
        assert_held(model);
        double intercepts[2], slopes[2], gate[6];
        fitted_slopes(model, intercepts, slopes);
        EXPECT_STATUS(moe_model_get_gate(model, gate, 6), MOE_OK);
        double errors[] = {intercepts[0] - 1.0, slopes[0] - 2.0, intercepts[1] + 1.0,
                           slopes[1] + 1.5, fabs(gate[2] - gate[5]) - 3.0};
        for (size_t a = 0; a < 5; ++a)
            worst = fmax(worst, fabs(errors[a]) / (a == 4 ? 3.0 : 1.0));
        /* The log-likelihood is nested under the model that sees every input. */
        double restricted = 0.0, full_loglik = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, N, X, D, Y, NULL, &restricted), MOE_OK);
        moe_model_spec full = MOE_MODEL_SPEC_INIT;
        full.n_features = D;
        moe_model_t *unrestricted = NULL;
        EXPECT_STATUS(moe_model_create(&unrestricted, &full), MOE_OK);
        EXPECT_STATUS(moe_fitter_fit(fitter, unrestricted, N, X, D, Y, NULL), MOE_OK);
        EXPECT_STATUS(moe_model_loglik(unrestricted, N, X, D, Y, NULL, &full_loglik), MOE_OK);
        ck_assert_msg(restricted <= full_loglik + 1e-6 * fabs(full_loglik) &&
                          restricted >= full_loglik - 5.0,
                      "restricted %g, full %g", restricted, full_loglik);
        moe_model_free(unrestricted);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    /* Worst seed: coefficients within 0.08, the gate's slope within 20%. */
    ck_assert_msg(worst < 0.2, "worst relative error %g", worst);
}
END_TEST

START_TEST(every_estimator_keeps_held_coefficients)
{
    make_data(N, 7);
    const char *estimators[] = {"em", "gem", "gd", "ismm", "ot"};
    double em_loglik = 0.0;
    for (size_t e = 0; e < sizeof estimators / sizeof estimators[0]; ++e) {
        moe_model_t *model = split_model();
        moe_fitter_t *fitter = test_fitter(estimators[e], 3);
        EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
        assert_held(model);
        double loglik = 0.0;
        EXPECT_STATUS(moe_model_loglik(model, N, X, D, Y, NULL, &loglik), MOE_OK);
        if (e == 0)
            em_loglik = loglik;
        ck_assert_msg(loglik > em_loglik - 0.02 * fabs(em_loglik), "%s: %g against em's %g",
                      estimators[e], loglik, em_loglik);
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    /* cqt's moments need one design for the gate and the experts (cqt's models have no
       intercept, so that is not what it refuses here). */
    moe_model_spec spec = split_spec(MOE_FAMILY_GAUSSIAN);
    spec.intercept = 0;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = test_fitter("cqt", 3);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(moe_fitter_last_error(fitter), "see every column"));
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

START_TEST(em_is_monotone_with_held_coefficients)
{
    make_data(N, 9);
    moe_model_t *model = split_model();
    test_assert_em_monotone(model, N, X, D, Y, NULL, 5, 4);
    moe_model_free(model);
}
END_TEST

/* The information of the restricted model is the unrestricted one's submatrix at the same
   parameters: the held coefficients are not estimated, the others' curvature is the same. */
START_TEST(information_is_the_submatrix)
{
    make_data(600, 11);
    moe_model_t *model = split_model();
    moe_model_spec full_spec = MOE_MODEL_SPEC_INIT;
    full_spec.n_features = D;
    moe_model_t *full = NULL;
    EXPECT_STATUS(moe_model_create(&full, &full_spec), MOE_OK);
    double gate[6] = {0.2, 0.0, 2.5, 0, 0, 0}, experts[6] = {0.9, 1.8, 0, -1.1, -1.4, 0};
    double variances[2] = {0.1, 0.12};
    moe_model_t *models[2] = {model, full};
    for (size_t m = 0; m < 2; ++m) {
        EXPECT_STATUS(moe_model_set_gate(models[m], gate, 6), MOE_OK);
        EXPECT_STATUS(moe_model_set_experts(models[m], experts, 6), MOE_OK);
        EXPECT_STATUS(moe_model_set_variances(models[m], variances, 2), MOE_OK);
    }
    enum { P = 8, Q = 11 };
    ck_assert_uint_eq(moe_model_n_free_params(model), P);
    ck_assert_uint_eq(moe_model_n_free_params(full), Q);
    double small[P * P], large[Q * Q];
    EXPECT_STATUS(moe_model_information(model, 600, X, D, Y, NULL, small, P * P - 1),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_information(model, 600, X, D, Y, NULL, small, P * P), MOE_OK);
    EXPECT_STATUS(moe_model_information(full, 600, X, D, Y, NULL, large, Q * Q), MOE_OK);
    /* Full layout: gate row 0 (1, x, z), experts (1, x, z) x 2, variances; kept: */
    const size_t kept[P] = {0, 2, 3, 4, 6, 7, 9, 10};
    for (size_t a = 0; a < P; ++a)
        for (size_t b = 0; b < P; ++b)
            ck_assert_msg(fabs(small[a * P + b] - large[kept[a] * Q + kept[b]]) <=
                              1e-10 * (1.0 + fabs(large[kept[a] * Q + kept[b]])),
                          "entry (%zu, %zu): %g against %g", a, b, small[a * P + b],
                          large[kept[a] * Q + kept[b]]);
    double covariance[P * P];
    EXPECT_STATUS(moe_model_vcov(model, 600, X, D, Y, NULL, covariance, P * P), MOE_OK);
    moe_model_free(full);
    moe_model_free(model);
}
END_TEST

START_TEST(save_load_round_trip)
{
    make_data(N, 13);
    moe_model_t *model = split_model();
    moe_fitter_t *fitter = test_fitter("em", 2);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
    size_t size = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &size), MOE_OK);
    unsigned char *bytes = malloc(size), *again = malloc(size);
    EXPECT_STATUS(moe_model_save_buffer(model, bytes, size, &size), MOE_OK);
    ck_assert_uint_eq(bytes[8], 3); /* format version 3: the inputs section */
    moe_model_t *loaded = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&loaded, bytes, size), MOE_OK);
    size_t size_again = 0;
    EXPECT_STATUS(moe_model_save_buffer(loaded, again, size, &size_again), MOE_OK);
    ck_assert_uint_eq(size_again, size);
    ck_assert_mem_eq(bytes, again, size);
    moe_model_spec read = MOE_MODEL_SPEC_INIT;
    EXPECT_STATUS(moe_model_get_spec(loaded, &read), MOE_OK);
    ck_assert_mem_eq(read.gate_features, GATE_SEES_Z, D);
    ck_assert_mem_eq(read.expert_features, EXPERTS_SEE_X, D);
    /* With names, too. */
    EXPECT_STATUS(moe_model_set_name(loaded, MOE_NAME_FEATURE, 1, "z"), MOE_OK);
    free(again);
    EXPECT_STATUS(moe_model_save_buffer(loaded, NULL, 0, &size_again), MOE_OK);
    again = malloc(size_again);
    EXPECT_STATUS(moe_model_save_buffer(loaded, again, size_again, &size_again), MOE_OK);
    moe_model_t *named = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&named, again, size_again), MOE_OK);
    ck_assert_str_eq(moe_model_get_name(named, MOE_NAME_FEATURE, 1), "z");
    ck_assert_uint_eq(moe_model_n_free_params(named), 8);
    moe_model_free(named);
    moe_model_free(loaded);
    free(bytes);
    free(again);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

/* Experts that see the intercept alone: a mixture of means whose weights follow z. */
START_TEST(mixture_of_means_with_covariate_weights)
{
    test_rng rng = {77};
    for (size_t i = 0; i < N; ++i) {
        double x = test_normal(&rng), z = test_normal(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.0 * z));
        X[i * D] = x;
        X[i * D + 1] = z;
        Y[i] = (first ? 3.0 : -2.0) + 0.5 * test_normal(&rng);
    }
    static const unsigned char nothing[D] = {0, 0};
    moe_model_spec spec = split_spec(MOE_FAMILY_GAUSSIAN);
    spec.expert_features = nothing;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 + 2 * 2);
    moe_fitter_t *fitter = test_fitter("em", 1);
    EXPECT_STATUS(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
    double experts[6], gate[6];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(model, gate, 6), MOE_OK);
    double high = fmax(experts[0], experts[3]), low = fmin(experts[0], experts[3]);
    ck_assert_msg(fabs(high - 3.0) < 0.1 && fabs(low + 2.0) < 0.1, "means %g %g", high, low);
    for (size_t a = 1; a < 3; ++a)
        ck_assert(experts[a] == 0.0 && experts[3 + a] == 0.0);
    ck_assert_msg(fabs(fabs(gate[2]) - 2.0) < 0.3, "gate slope %g", gate[2]);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

/* Poisson counts over exposures t: log E[y] = log t + eta. Column 1 holds log t. */
START_TEST(poisson_exposure_offset)
{
    test_rng rng = {5};
    for (size_t i = 0; i < N; ++i) {
        double x = -1.0 + 2.0 * test_uniform(&rng);
        double exposure = exp(-1.0 + 3.0 * test_uniform(&rng));
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-3.0 * x));
        double mu = exposure * exp(first ? 0.5 + 1.0 * x : 1.5 - 1.0 * x);
        X[i * D] = x;
        X[i * D + 1] = log(exposure);
        Y[i] = test_poisson(&rng, mu);
    }
    static const unsigned char gate_x[D] = {1, 0};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_POISSON;
    spec.n_features = D;
    spec.gate_features = gate_x;
    spec.offset_feature = 1;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    double experts[6];
    EXPECT_STATUS(moe_model_get_experts(model, experts, 6), MOE_OK);
    ck_assert(experts[2] == 1.0 && experts[5] == 1.0);
    ck_assert_uint_eq(moe_model_n_free_params(model), 2 + 2 * 2);
    experts[2] = 0.0;
    EXPECT_STATUS(moe_model_set_experts(model, experts, 6), MOE_ERR_INVALID_ARGUMENT);
    const char *estimators[] = {"em", "gem", "gd", "ot"};
    for (size_t e = 0; e < sizeof estimators / sizeof estimators[0]; ++e) {
        moe_model_t *fitted = NULL;
        EXPECT_STATUS(moe_model_clone(&fitted, model), MOE_OK);
        moe_fitter_t *fitter = test_fitter(estimators[e], 3);
        EXPECT_STATUS(moe_fitter_fit(fitter, fitted, N, X, D, Y, NULL), MOE_OK);
        EXPECT_STATUS(moe_model_get_experts(fitted, experts, 6), MOE_OK);
        ck_assert(experts[2] == 1.0 && experts[5] == 1.0);
        size_t up = experts[1] > experts[4] ? 0 : 1;
        double errors[] = {experts[up * 3] - 0.5, experts[up * 3 + 1] - 1.0,
                           experts[(1 - up) * 3] - 1.5, experts[(1 - up) * 3 + 1] + 1.0};
        for (size_t a = 0; a < 4; ++a)
            ck_assert_msg(fabs(errors[a]) < 0.1, "%s: coefficient %zu off by %g",
                          estimators[e], a, errors[a]);
        double covariance[36];
        EXPECT_STATUS(moe_model_vcov(fitted, N, X, D, Y, NULL, covariance, 36), MOE_OK);
        moe_fitter_free(fitter);
        moe_model_free(fitted);
    }
    moe_model_free(model);
}
END_TEST

static Suite *gate_inputs_suite(void)
{
    Suite *suite = suite_create("gate_inputs");
    TCase *unit = tcase_create("unit");
    tcase_set_timeout(unit, 120);
    tcase_add_test(unit, spec_checks);
    tcase_add_test(unit, version_1_specs_are_written_within_their_size);
    tcase_add_test(unit, spec_reads_back_and_clones);
    tcase_add_test(unit, setters_guard_held_coefficients);
    tcase_add_test(unit, em_recovers_a_gate_on_its_own_covariate);
    tcase_add_test(unit, every_estimator_keeps_held_coefficients);
    tcase_add_test(unit, em_is_monotone_with_held_coefficients);
    tcase_add_test(unit, information_is_the_submatrix);
    tcase_add_test(unit, save_load_round_trip);
    tcase_add_test(unit, mixture_of_means_with_covariate_weights);
    tcase_add_test(unit, poisson_exposure_offset);
    suite_add_tcase(suite, unit);
    return suite;
}

int main(void)
{
    return run_suite(gate_inputs_suite());
}
