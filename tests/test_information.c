/*
 * The observed information (moe_model_information) and the covariance (moe_model_vcov):
 * against central second differences of the log-likelihood at random parameters for the
 * three families, with and without intercept and weights; the least-squares closed forms for
 * one Gaussian expert; the gradient of the log-likelihood vanishing at a fit; and the errors.
 * The penalised variants: against central differences of the penalised objective's gradient
 * (written here, from Fisher's identity, and itself checked against differences of the
 * objective), zero penalties bit for bit, a penalised em fit (where that gradient vanishes,
 * so the penalty here is the one the fitter maximises), and their errors.
 */
#include "support/runner.h"
#include "support/synthetic.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 400, D = 2 };

static double X[N * D], Y[N], W[N];

static void data(moe_family family, size_t classes, uint64_t seed)
{
    test_rng rng = {seed};
    for (int i = 0; i < N; ++i) {
        X[i * D] = test_normal(&rng);
        X[i * D + 1] = test_normal(&rng);
        W[i] = 0.5 + test_uniform(&rng);
        double signal = X[i * D] - 0.5 * X[i * D + 1] + 0.3 * test_normal(&rng);
        if (family == MOE_FAMILY_GAUSSIAN)
            Y[i] = signal + (test_uniform(&rng) < 0.5 ? 1.0 : -1.0);
        else if (family == MOE_FAMILY_LOGISTIC)
            Y[i] = test_uniform(&rng) < 1.0 / (1.0 + exp(-2.0 * signal));
        else
            Y[i] = (double)(size_t)(test_uniform(&rng) * (double)classes);
    }
}

/* Random parameters through a flat vector in the information's order. */
static size_t parameter_count(const moe_model_t *model)
{
    return moe_model_n_free_params(model);
}

static void set_parameters(moe_model_t *model, const double *theta)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    size_t rows = moe_model_expert_rows(model);
    int multinomial = moe_model_family(model) == MOE_FAMILY_MULTINOMIAL;
    size_t R = multinomial ? rows - 1 : 1;
    double gate[16 * 8] = {0}, experts[16 * 8 * 4] = {0};
    memcpy(gate, theta, (K - 1) * p * sizeof(double));
    const double *e = theta + (K - 1) * p;
    for (size_t k = 0; k < K; ++k)
        for (size_t q = 0; q < R; ++q)
            memcpy(experts + (k * rows + q) * p, e + (k * R + q) * p, p * sizeof(double));
    ck_assert_int_eq(moe_model_set_gate(model, gate, K * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, experts, K * rows * p), MOE_OK);
    if (moe_model_family(model) == MOE_FAMILY_GAUSSIAN)
        ck_assert_int_eq(moe_model_set_variances(model, e + K * R * p, K), MOE_OK);
}

static double loglik_at(moe_model_t *model, const double *theta, int weighted)
{
    set_parameters(model, theta);
    double value = 0.0;
    ck_assert_int_eq(moe_model_loglik(model, N, X, D, Y, weighted ? W : NULL, &value), MOE_OK);
    return value;
}

/* -Hessian by central second differences, each entry. */
static void check_against_differences(moe_model_t *model, const double *theta, int weighted,
                                      const char *what)
{
    size_t P = parameter_count(model);
    double *information = malloc(P * P * sizeof(double));
    set_parameters(model, theta);
    ck_assert_int_eq(moe_model_information(model, N, X, D, Y, weighted ? W : NULL, information,
                                           P * P),
                     MOE_OK);
    double *t = malloc(P * sizeof(double));
    double largest = 0.0, worst = 0.0;
    for (size_t a = 0; a < P; ++a)
        for (size_t b = a; b < P; ++b) {
            double ha = 1e-4 * (1.0 + fabs(theta[a])), hb = 1e-4 * (1.0 + fabs(theta[b]));
            double f[4];
            for (int s = 0; s < 4; ++s) {
                memcpy(t, theta, P * sizeof(double));
                t[a] += (s & 1 ? -ha : ha);
                t[b] += (s & 2 ? -hb : hb);
                f[s] = loglik_at(model, t, weighted);
            }
            double second = (f[0] - f[1] - f[2] + f[3]) / (4.0 * ha * hb);
            double analytic = information[a * P + b];
            ck_assert_double_eq_tol(information[a * P + b], information[b * P + a], 1e-9);
            if (fabs(second) > largest)
                largest = fabs(second);
            double error = fabs(analytic + second);
            if (error > worst)
                worst = error;
        }
    ck_assert_msg(worst <= 1e-4 * largest + 1e-6, "%s: information differs from -Hessian by %g "
                  "(largest entry %g)",
                  what, worst, largest);
    free(t);
    free(information);
}

static moe_model_t *random_model(int family, int intercept, test_rng *rng, double *theta)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family == 0   ? MOE_FAMILY_GAUSSIAN
                  : family == 1 ? MOE_FAMILY_LOGISTIC
                                : MOE_FAMILY_MULTINOMIAL;
    spec.n_classes = family == 2 ? 3 : 0;
    spec.n_experts = 3;
    spec.n_features = D;
    spec.intercept = intercept;
    data(spec.family, 3, 11 + (uint64_t)family);
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    size_t P = parameter_count(model);
    for (size_t i = 0; i < P; ++i)
        theta[i] = 0.5 * test_normal(rng);
    if (family == 0)
        for (size_t k = 0; k < 3; ++k)
            theta[P - 3 + k] = 0.5 + test_uniform(rng);
    set_parameters(model, theta);
    return model;
}

START_TEST(information_is_the_negative_hessian)
{
    test_rng rng = {7};
    for (int family = 0; family < 3; ++family)
        for (int intercept = 0; intercept < 2; ++intercept)
            for (int weighted = 0; weighted < 2; ++weighted) {
                double theta[128];
                moe_model_t *model = random_model(family, intercept, &rng, theta);
                char what[64];
                snprintf(what, sizeof what, "family %d intercept %d weights %d", family,
                         intercept, weighted);
                check_against_differences(model, theta, weighted, what);
                moe_model_free(model);
            }
}
END_TEST

/* ---- The penalised objective ---------------------------------------------------------- */

typedef struct shape {
    size_t K, p, R, P, classes; /* classes: C of multinomial experts, else 0 */
    int intercept;
    moe_family family;
} shape;

static shape shape_of(const moe_model_t *model)
{
    shape s;
    s.K = moe_model_n_experts(model);
    s.p = moe_model_n_inputs(model);
    s.intercept = moe_model_has_intercept(model);
    s.family = moe_model_family(model);
    s.classes = s.family == MOE_FAMILY_MULTINOMIAL ? moe_model_expert_rows(model) : 0;
    s.R = s.classes > 0 ? s.classes - 1 : 1;
    s.P = moe_model_n_free_params(model);
    return s;
}

static double total_weight(int weighted)
{
    double total = 0.0;
    for (int i = 0; i < N; ++i)
        total += weighted ? W[i] : 1.0;
    return total;
}

/* The fitters' penalty (include/moe/fitter.h, "The objective") at theta, written out on its
   own: the reference rows are 0, a multinomial expert is centred over its C classes. */
static double penalty_at(const shape *s, const double *theta, double gate_l2, double ridge)
{
    double sum = 0.0;
    for (size_t j = (size_t)s->intercept; j < s->p; ++j) {
        double column = 0.0, squares = 0.0;
        for (size_t a = 0; a + 1 < s->K; ++a) {
            column += theta[a * s->p + j];
            squares += theta[a * s->p + j] * theta[a * s->p + j];
        }
        sum += gate_l2 * (squares - column * column / (double)s->K);
        for (size_t k = 0; k < s->K; ++k) {
            const double *beta = theta + (s->K - 1) * s->p + k * s->R * s->p;
            column = squares = 0.0;
            for (size_t q = 0; q < s->R; ++q) {
                column += beta[q * s->p + j];
                squares += beta[q * s->p + j] * beta[q * s->p + j];
            }
            sum += ridge * (s->classes > 0 ? squares - column * column / (double)s->classes
                                           : squares);
        }
    }
    return 0.5 * sum;
}

static double objective_at(moe_model_t *model, const double *theta, int weighted,
                           double gate_l2, double ridge)
{
    shape s = shape_of(model);
    return loglik_at(model, theta, weighted) -
           total_weight(weighted) * penalty_at(&s, theta, gate_l2, ridge);
}

static double log_sum_exp(const double *v, size_t n)
{
    double largest = v[0], sum = 0.0;
    for (size_t i = 1; i < n; ++i)
        largest = v[i] > largest ? v[i] : largest;
    for (size_t i = 0; i < n; ++i)
        sum += exp(v[i] - largest);
    return largest + log(sum);
}

/* The gradient of the penalised objective at theta: Fisher's identity, sum_i v_i sum_k r_k
   s_k with the complete-data scores s_k, minus N times the penalty's gradient. */
static void objective_gradient(const shape *s, const double *theta, int weighted,
                               double gate_l2, double ridge, double *gradient)
{
    size_t K = s->K, p = s->p, R = s->R;
    const double *experts = theta + (K - 1) * p, *variances = experts + K * R * p;
    memset(gradient, 0, s->P * sizeof(double));
    for (int i = 0; i < N; ++i) {
        double x[D + 1], v = weighted ? W[i] : 1.0, y = Y[i];
        size_t at = 0;
        if (s->intercept)
            x[at++] = 1.0;
        for (int j = 0; j < D; ++j)
            x[at++] = X[i * D + j];
        double logits[8], pi[8], joint[8], r[8], residual[8], class_p[8][8];
        size_t label = s->classes > 0 ? (size_t)y : (y > 0.5 ? 0u : 1u);
        for (size_t a = 0; a < K; ++a) {
            logits[a] = 0.0;
            for (size_t j = 0; a + 1 < K && j < p; ++j)
                logits[a] += theta[a * p + j] * x[j];
        }
        double total = log_sum_exp(logits, K);
        for (size_t k = 0; k < K; ++k) {
            pi[k] = exp(logits[k] - total);
            const double *beta = experts + k * R * p;
            if (s->family == MOE_FAMILY_GAUSSIAN) {
                double mean = 0.0;
                for (size_t j = 0; j < p; ++j)
                    mean += beta[j] * x[j];
                residual[k] = y - mean;
                joint[k] = logits[k] - total -
                           0.5 * (log(2.0 * 3.14159265358979323846 * variances[k]) +
                                  residual[k] * residual[k] / variances[k]);
            } else {
                double z[8];
                for (size_t q = 0; q < R; ++q) {
                    z[q] = 0.0;
                    for (size_t j = 0; j < p; ++j)
                        z[q] += beta[q * p + j] * x[j];
                }
                z[R] = 0.0;
                double normaliser = log_sum_exp(z, R + 1);
                for (size_t q = 0; q <= R; ++q)
                    class_p[k][q] = exp(z[q] - normaliser);
                joint[k] = logits[k] - total + z[label] - normaliser;
            }
        }
        double loglik = log_sum_exp(joint, K);
        for (size_t k = 0; k < K; ++k)
            r[k] = exp(joint[k] - loglik);
        for (size_t a = 0; a + 1 < K; ++a)
            for (size_t j = 0; j < p; ++j)
                gradient[a * p + j] += v * (r[a] - pi[a]) * x[j];
        for (size_t k = 0; k < K; ++k) {
            double *g = gradient + (K - 1) * p + k * R * p;
            if (s->family == MOE_FAMILY_GAUSSIAN) {
                double variance = variances[k], e = residual[k];
                for (size_t j = 0; j < p; ++j)
                    g[j] += v * r[k] * e * x[j] / variance;
                gradient[(K - 1) * p + K * p + k] +=
                    v * r[k] * (-0.5 / variance + 0.5 * e * e / (variance * variance));
            } else {
                for (size_t q = 0; q < R; ++q)
                    for (size_t j = 0; j < p; ++j)
                        g[q * p + j] +=
                            v * r[k] * ((q == label ? 1.0 : 0.0) - class_p[k][q]) * x[j];
            }
        }
    }
    double weight = total_weight(weighted);
    for (size_t j = (size_t)s->intercept; j < p; ++j) {
        double mean = 0.0;
        for (size_t a = 0; a + 1 < K; ++a)
            mean += theta[a * p + j] / (double)K;
        for (size_t a = 0; a + 1 < K; ++a)
            gradient[a * p + j] -= weight * gate_l2 * (theta[a * p + j] - mean);
        for (size_t k = 0; k < K; ++k) {
            const double *beta = experts + k * R * p;
            double centre = 0.0;
            for (size_t q = 0; s->classes > 0 && q < R; ++q)
                centre += beta[q * p + j] / (double)s->classes;
            for (size_t q = 0; q < R; ++q)
                gradient[(K - 1) * p + (k * R + q) * p + j] -=
                    weight * ridge * (beta[q * p + j] - centre);
        }
    }
}

/* The model's free parameters in the information's order. */
static void get_parameters(const moe_model_t *model, double *theta)
{
    shape s = shape_of(model);
    size_t rows = moe_model_expert_rows(model);
    double gate[16 * 8], experts[16 * 8 * 4];
    ck_assert_int_eq(moe_model_get_gate(model, gate, s.K * s.p), MOE_OK);
    ck_assert_int_eq(moe_model_get_experts(model, experts, s.K * rows * s.p), MOE_OK);
    memcpy(theta, gate, (s.K - 1) * s.p * sizeof(double));
    double *e = theta + (s.K - 1) * s.p;
    for (size_t k = 0; k < s.K; ++k)
        for (size_t q = 0; q < s.R; ++q)
            memcpy(e + (k * s.R + q) * s.p, experts + (k * rows + q) * s.p,
                   s.p * sizeof(double));
    if (s.family == MOE_FAMILY_GAUSSIAN)
        ck_assert_int_eq(moe_model_get_variances(model, e + s.K * s.R * s.p, s.K), MOE_OK);
}

START_TEST(penalised_information_is_the_negative_hessian)
{
    test_rng rng = {17};
    /* Large enough that N * penalty is of the order of the likelihood's entries: a wrong
       centring (1/(K-1) for 1/K) or a penalised intercept moves entries by 5% of N. */
    const double gate_l2 = 0.3, ridge = 0.2;
    for (int family = 0; family < 3; ++family)
        for (int intercept = 0; intercept < 2; ++intercept)
            for (int weighted = 0; weighted < 2; ++weighted) {
                double theta[128], t[128], up[128], down[128];
                moe_model_t *model = random_model(family, intercept, &rng, theta);
                shape s = shape_of(model);
                size_t P = s.P;
                char what[64];
                snprintf(what, sizeof what, "family %d intercept %d weights %d", family,
                         intercept, weighted);
                /* The gradient written here is that of the penalised objective. */
                double gradient[128], largest = 0.0, worst = 0.0;
                objective_gradient(&s, theta, weighted, gate_l2, ridge, gradient);
                for (size_t a = 0; a < P; ++a) {
                    double h = 1e-5 * (1.0 + fabs(theta[a]));
                    memcpy(t, theta, P * sizeof(double));
                    t[a] = theta[a] + h;
                    double f_up = objective_at(model, t, weighted, gate_l2, ridge);
                    t[a] = theta[a] - h;
                    double f_down = objective_at(model, t, weighted, gate_l2, ridge);
                    double difference = (f_up - f_down) / (2.0 * h);
                    largest = fmax(largest, fabs(difference));
                    worst = fmax(worst, fabs(difference - gradient[a]));
                }
                ck_assert_msg(worst <= 1e-6 * largest + 1e-6,
                              "%s: the test's gradient is off by %g (largest %g)", what, worst,
                              largest);
                /* The penalised information against differences of that gradient. */
                double *information = malloc(P * P * sizeof(double));
                set_parameters(model, theta);
                ck_assert_int_eq(moe_model_information_penalized(model, N, X, D, Y,
                                                                 weighted ? W : NULL, gate_l2,
                                                                 ridge, information, P * P),
                                 MOE_OK);
                largest = worst = 0.0;
                for (size_t b = 0; b < P; ++b) {
                    double h = 1e-5 * (1.0 + fabs(theta[b]));
                    memcpy(t, theta, P * sizeof(double));
                    t[b] = theta[b] + h;
                    objective_gradient(&s, t, weighted, gate_l2, ridge, up);
                    t[b] = theta[b] - h;
                    objective_gradient(&s, t, weighted, gate_l2, ridge, down);
                    for (size_t a = 0; a < P; ++a) {
                        double second = (up[a] - down[a]) / (2.0 * h);
                        ck_assert_double_eq(information[a * P + b], information[b * P + a]);
                        largest = fmax(largest, fabs(second));
                        worst = fmax(worst, fabs(information[a * P + b] + second));
                    }
                }
                ck_assert_msg(worst <= 1e-6 * largest + 1e-6,
                              "%s: penalised information differs from -Hessian by %g "
                              "(largest entry %g)",
                              what, worst, largest);
                free(information);
                moe_model_free(model);
            }
}
END_TEST

START_TEST(zero_penalty_is_unpenalised)
{
    test_rng rng = {23};
    for (int family = 0; family < 3; ++family)
        for (int intercept = 0; intercept < 2; ++intercept)
            for (int weighted = 0; weighted < 2; ++weighted) {
                double theta[128];
                moe_model_t *model = random_model(family, intercept, &rng, theta);
                size_t P = parameter_count(model);
                const double *w = weighted ? W : NULL;
                double *plain = malloc(P * P * sizeof(double));
                double *penalised = malloc(P * P * sizeof(double));
                ck_assert_int_eq(moe_model_information(model, N, X, D, Y, w, plain, P * P),
                                 MOE_OK);
                ck_assert_int_eq(moe_model_information_penalized(model, N, X, D, Y, w, 0.0, 0.0,
                                                                 penalised, P * P),
                                 MOE_OK);
                ck_assert(memcmp(plain, penalised, P * P * sizeof(double)) == 0);
                /* Random parameters need not give a positive definite information: the two
                   must agree on the status as well as on the matrix. */
                moe_status a = moe_model_vcov(model, N, X, D, Y, w, plain, P * P);
                moe_status b =
                    moe_model_vcov_penalized(model, N, X, D, Y, w, 0.0, 0.0, penalised, P * P);
                ck_assert_int_eq(a, b);
                if (a == MOE_OK)
                    ck_assert(memcmp(plain, penalised, P * P * sizeof(double)) == 0);
                free(plain);
                free(penalised);
                moe_model_free(model);
            }
}
END_TEST

/* Two regimes chosen by a soft gate along the second input, each with its own expert, so
   that every family's fit is a regular maximum (data()'s random classes are not). */
static void regimes(moe_family family, uint64_t seed)
{
    test_rng rng = {seed};
    for (int i = 0; i < N; ++i) {
        double a = test_normal(&rng), b = test_normal(&rng);
        X[i * D] = a;
        X[i * D + 1] = b;
        W[i] = 0.5 + test_uniform(&rng);
        int first = test_uniform(&rng) < 1.0 / (1.0 + exp(-5.0 * b));
        double u = test_uniform(&rng);
        if (family == MOE_FAMILY_GAUSSIAN)
            Y[i] = (first ? 1.0 + 2.0 * a : -1.0 - a) + 0.3 * test_normal(&rng);
        else if (family == MOE_FAMILY_LOGISTIC)
            Y[i] = u < 1.0 / (1.0 + exp(first ? -2.0 * a : 2.0 * a - 1.0));
        else {
            double z0 = first ? 2.0 * a : -2.0 * a, z1 = first ? -2.0 * a : 2.0 * a;
            double p0 = exp(z0) / (exp(z0) + exp(z1) + 1.0),
                   p1 = exp(z1) / (exp(z0) + exp(z1) + 1.0);
            Y[i] = u < p0 ? 0.0 : u < p0 + p1 ? 1.0 : 2.0;
        }
    }
}

/* At an em fit with penalties the penalised objective's gradient vanishes (the penalty
   above is the one the fitter maximises), the penalised information is positive definite,
   and the covariance inverts it. */
START_TEST(penalised_fit)
{
    const double gate_l2 = 0.1, ridge = 0.1;
    for (int family = 0; family < 3; ++family)
        for (int weighted = 0; weighted < 2; ++weighted) {
            moe_model_spec spec = MOE_MODEL_SPEC_INIT;
            spec.family = family == 0   ? MOE_FAMILY_GAUSSIAN
                          : family == 1 ? MOE_FAMILY_LOGISTIC
                                        : MOE_FAMILY_MULTINOMIAL;
            spec.n_classes = family == 2 ? 3 : 0;
            spec.n_experts = 2;
            spec.n_features = D;
            /* With class intercepts, which no penalty touches, a mixture of multinomial
               experts on 400 rows runs to the boundary (an expert that never gives some
               class), where the information is singular along the intercepts. */
            spec.intercept = family != 2;
            regimes(spec.family, 31 + (uint64_t)family);
            const double *w = weighted ? W : NULL;
            moe_model_t *model = NULL;
            moe_fitter_t *fitter = NULL;
            ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
            ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
            ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_GATE_L2, gate_l2), MOE_OK);
            ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_EXPERT_RIDGE, ridge), MOE_OK);
            ck_assert_int_eq(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-13), MOE_OK);
            ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 5000), MOE_OK);
            ck_assert_int_eq(moe_fitter_fit(fitter, model, N, X, D, Y, w), MOE_OK);
            moe_fit_report report = MOE_FIT_REPORT_INIT;
            ck_assert_int_eq(moe_fitter_get_report(fitter, &report), MOE_OK);
            ck_assert_msg(report.converged, "family %d weights %d: em did not converge", family,
                          weighted);
            shape s = shape_of(model);
            size_t P = s.P;
            double theta[128], penalised[128], plain[128];
            get_parameters(model, theta);
            objective_gradient(&s, theta, weighted, gate_l2, ridge, penalised);
            objective_gradient(&s, theta, weighted, 0.0, 0.0, plain);
            double stationary = 0.0, unpenalised = 0.0;
            for (size_t a = 0; a < P; ++a) {
                stationary = fmax(stationary, fabs(penalised[a]));
                unpenalised = fmax(unpenalised, fabs(plain[a]));
            }
            ck_assert_msg(stationary <= 1e-4 * unpenalised,
                          "family %d weights %d: the penalised gradient %g at the fit (the "
                          "likelihood's alone %g)",
                          family, weighted, stationary, unpenalised);
            double *information = malloc(P * P * sizeof(double));
            double *covariance = malloc(P * P * sizeof(double));
            ck_assert_int_eq(moe_model_information_penalized(model, N, X, D, Y, w, gate_l2,
                                                             ridge, information, P * P),
                             MOE_OK);
            ck_assert_int_eq(moe_model_vcov_penalized(model, N, X, D, Y, w, gate_l2, ridge,
                                                      covariance, P * P),
                             MOE_OK);
            /* Positive definite: every pivot of a Cholesky factorisation is positive (the
               covariance's existence says the same through LAPACK; this does not rely on
               it). */
            double *factor = malloc(P * P * sizeof(double));
            memcpy(factor, information, P * P * sizeof(double));
            for (size_t j = 0; j < P; ++j) {
                for (size_t k = 0; k < j; ++k)
                    factor[j * P + j] -= factor[j * P + k] * factor[j * P + k];
                ck_assert_msg(factor[j * P + j] > 0.0, "family %d: pivot %zu is %g", family, j,
                              factor[j * P + j]);
                factor[j * P + j] = sqrt(factor[j * P + j]);
                for (size_t i = j + 1; i < P; ++i) {
                    for (size_t k = 0; k < j; ++k)
                        factor[i * P + j] -= factor[i * P + k] * factor[j * P + k];
                    factor[i * P + j] /= factor[j * P + j];
                }
            }
            for (size_t a = 0; a < P; ++a) {
                ck_assert(covariance[a * P + a] > 0.0);
                for (size_t b = 0; b < P; ++b) {
                    /* Rounding is relative to the terms of the sum, not to its value. */
                    double product = 0.0, size = 0.0;
                    for (size_t c = 0; c < P; ++c) {
                        product += information[a * P + c] * covariance[c * P + b];
                        size += fabs(information[a * P + c] * covariance[c * P + b]);
                    }
                    ck_assert_double_eq_tol(product, a == b ? 1.0 : 0.0, 1e-9 * size);
                }
            }
            free(factor);
            free(information);
            free(covariance);
            moe_fitter_free(fitter);
            moe_model_free(model);
        }
}
END_TEST

/* One Gaussian expert: least squares. At the MLE, SE(beta) = sqrt(sigma^2 diag((X'X)^-1))
   and SE(sigma^2) = sigma^2 sqrt(2 / n). */
START_TEST(one_expert_is_least_squares)
{
    data(MOE_FAMILY_GAUSSIAN, 0, 3);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 1;
    spec.n_features = D;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = NULL;
    ck_assert_int_eq(moe_fitter_create(&fitter, "em"), MOE_OK);
    ck_assert_int_eq(moe_fitter_fit(fitter, model, N, X, D, Y, NULL), MOE_OK);
    double covariance[16];
    ck_assert_int_eq(moe_model_vcov(model, N, X, D, Y, NULL, covariance, 16), MOE_OK);
    double variance = 0.0;
    EXPECT_STATUS(moe_model_get_variances(model, &variance, 1), MOE_OK);
    /* (X~'X~)^-1 by hand: 3 x 3 */
    double G[9] = {0};
    for (int i = 0; i < N; ++i) {
        double x[3] = {1.0, X[i * D], X[i * D + 1]};
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                G[a * 3 + b] += x[a] * x[b];
    }
    double det = G[0] * (G[4] * G[8] - G[5] * G[7]) - G[1] * (G[3] * G[8] - G[5] * G[6]) +
                 G[2] * (G[3] * G[7] - G[4] * G[6]);
    double inverse_diagonal[3] = {(G[4] * G[8] - G[5] * G[7]) / det,
                                  (G[0] * G[8] - G[2] * G[6]) / det,
                                  (G[0] * G[4] - G[1] * G[3]) / det};
    for (int a = 0; a < 3; ++a)
        ck_assert_double_eq_tol(covariance[a * 4 + a], variance * inverse_diagonal[a],
                                1e-6 * variance * inverse_diagonal[a]);
    ck_assert_double_eq_tol(covariance[15], 2.0 * variance * variance / N,
                            1e-6 * 2.0 * variance * variance / N);
    moe_model_free(model);
    moe_fitter_free(fitter);
}
END_TEST

/* Errors: NULL, short buffers, NaN, unsupported links, and a degenerate information. */
START_TEST(errors)
{
    data(MOE_FAMILY_GAUSSIAN, 0, 5);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = D;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    size_t P = moe_model_n_free_params(model);
    double *out = malloc(P * P * sizeof(double));
    EXPECT_STATUS(moe_model_information(NULL, N, X, D, Y, NULL, out, P * P), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, NULL, P * P),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, out, P * P - 1),
                  MOE_ERR_DIMENSION);
    double bad = Y[3];
    Y[3] = NAN;
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, out, P * P), MOE_ERR_NON_FINITE);
    Y[3] = bad;
    /* The neutral model's two experts are equal: the information is singular. */
    EXPECT_STATUS(moe_model_vcov(model, N, X, D, Y, NULL, out, P * P), MOE_ERR_NUMERICAL);
    /* The penalties: finite and not negative, checked before anything is computed. */
    EXPECT_STATUS(moe_model_information_penalized(NULL, N, X, D, Y, NULL, 0.1, 0.1, out, P * P),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_information_penalized(model, N, X, D, Y, NULL, 0.1, 0.1, NULL,
                                                  P * P),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_vcov_penalized(NULL, N, X, D, Y, NULL, 0.1, 0.1, out, P * P),
                  MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_information_penalized(model, N, X, D, Y, NULL, 0.1, 0.1, out,
                                                  P * P - 1),
                  MOE_ERR_DIMENSION);
    EXPECT_STATUS(moe_model_vcov_penalized(model, N, X, D, Y, NULL, 0.1, 0.1, out, P * P - 1),
                  MOE_ERR_DIMENSION);
    const double invalid[] = {NAN, INFINITY, -INFINITY, -1e-3};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; ++i) {
        EXPECT_STATUS(moe_model_information_penalized(model, N, X, D, Y, NULL, invalid[i], 0.1,
                                                      out, P * P),
                      MOE_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(moe_last_error(), "gate_l2"));
        EXPECT_STATUS(moe_model_vcov_penalized(model, N, X, D, Y, NULL, 0.1, invalid[i], out,
                                               P * P),
                      MOE_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(moe_last_error(), "expert_ridge"));
    }
    Y[3] = NAN;
    EXPECT_STATUS(moe_model_information_penalized(model, N, X, D, Y, NULL, 0.1, 0.1, out, P * P),
                  MOE_ERR_NON_FINITE);
    Y[3] = bad;
    /* So large that N times it overflows: no infinite information. */
    EXPECT_STATUS(moe_model_information_penalized(model, N, X, D, Y, NULL, 1e307, 0.0, out,
                                                  P * P),
                  MOE_ERR_NUMERICAL);
    /* A penalty makes the neutral model's singular information of the coefficients regular,
       but not that of the variances and intercepts. */
    EXPECT_STATUS(moe_model_vcov_penalized(model, N, X, D, Y, NULL, 0.1, 0.1, out, P * P),
                  MOE_ERR_NUMERICAL);
    moe_model_free(model);
    spec.link = MOE_LINK_SIGMOID;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    EXPECT_STATUS(moe_model_information(model, N, X, D, Y, NULL, out, P * P),
                  MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_model_vcov_penalized(model, N, X, D, Y, NULL, 0.1, 0.1, out, P * P),
                  MOE_ERR_UNSUPPORTED);
    moe_model_free(model);
    free(out);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("information");
    TCase *cases = tcase_create("information");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, information_is_the_negative_hessian);
    tcase_add_test(cases, one_expert_is_least_squares);
    tcase_add_test(cases, penalised_information_is_the_negative_hessian);
    tcase_add_test(cases, zero_penalty_is_unpenalised);
    tcase_add_test(cases, penalised_fit);
    tcase_add_test(cases, errors);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
