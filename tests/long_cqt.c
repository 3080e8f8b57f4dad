/*
 * The tensor method's slow checks (label long): Stein's identities for the Hermite tensors,
 * the population structure of the transformed moments (Theorem 1) by Monte Carlo with the
 * library's constants, and the consistency of cqt (its error falls like n^-1/2).
 */
#include "support/runner.h"
#include "support/synthetic.h"
#include "support/tensor_truth.h"

#include "estimators/cqt/cqt.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SD = 6 };

/* S2 and S3 of x ~ N(0, I) average to 0; E[<v,x>^2 S2] = 2 v v' and E[<v,x>^3 S3] = 6 v^3,
   every entry within 4 standard errors (d = 4, n = 1e6). */
START_TEST(hermite_tensors_satisfy_stein)
{
    enum { d = 4 };
    const size_t n = 1000000;
    test_rng rng = {31};
    double v[d] = {0.5, -0.5, 0.5, 0.5};
    double s2[d][d] = {{0}}, s2sq[d][d] = {{0}}, f2[d][d] = {{0}}, f2sq[d][d] = {{0}};
    static double s3[d][d][d], s3sq[d][d][d], f3[d][d][d], f3sq[d][d][d];
    memset(s3, 0, sizeof s3);
    memset(s3sq, 0, sizeof s3sq);
    memset(f3, 0, sizeof f3);
    memset(f3sq, 0, sizeof f3sq);
    for (size_t t = 0; t < n; ++t) {
        double x[d], projection = 0.0;
        for (int j = 0; j < d; ++j) {
            x[j] = test_normal(&rng);
            projection += v[j] * x[j];
        }
        for (int a = 0; a < d; ++a)
            for (int b = 0; b < d; ++b) {
                double h2 = x[a] * x[b] - (a == b);
                double g2 = projection * projection * h2;
                s2[a][b] += h2;
                s2sq[a][b] += h2 * h2;
                f2[a][b] += g2;
                f2sq[a][b] += g2 * g2;
                for (int c = 0; c < d; ++c) {
                    double h3 = x[a] * x[b] * x[c] - x[a] * (b == c) - x[b] * (a == c) -
                                x[c] * (a == b);
                    double g3 = projection * projection * projection * h3;
                    s3[a][b][c] += h3;
                    s3sq[a][b][c] += h3 * h3;
                    f3[a][b][c] += g3;
                    f3sq[a][b][c] += g3 * g3;
                }
            }
    }
    const double N = (double)n;
#define WITHIN(sum, squares, expected, name)                                                   \
    do {                                                                                       \
        double mean_ = (sum) / N, error_ = sqrt(((squares) / N - mean_ * mean_) / N);          \
        ck_assert_msg(fabs(mean_ - (expected)) <= 4.0 * error_ + 1e-12,                        \
                      "%s: %g against %g (standard error %g)", name, mean_, (double)(expected), \
                      error_);                                                                 \
    } while (0)
    for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) {
            WITHIN(s2[a][b], s2sq[a][b], 0.0, "E[S2]");
            WITHIN(f2[a][b], f2sq[a][b], 2.0 * v[a] * v[b], "E[<v,x>^2 S2]");
            for (int c = 0; c < d; ++c) {
                WITHIN(s3[a][b][c], s3sq[a][b][c], 0.0, "E[S3]");
                WITHIN(f3[a][b][c], f3sq[a][b][c], 6.0 * v[a] * v[b] * v[c], "E[<v,x>^3 S3]");
            }
        }
#undef WITHIN
}
END_TEST

/* The Monte Carlo truth of the population check: d = 6, a1 = e0, a2 = .6 e0 + .8 e1, a3 =
   .6 e1 + .8 e2, w1 = e3, w2 = e4 (orthogonal to every expert). */
typedef struct moments {
    double T2[SD][SD];
    double T3[SD][SD][SD];
    double pi[3];
} moments;

static double link(moe_link l, double t)
{
    if (l == MOE_LINK_RELU)
        return t > 0.0 ? t : 0.0;
    if (l == MOE_LINK_SIGMOID)
        return 1.0 / (1.0 + exp(-t));
    return t;
}

static void population_moments(size_t k, moe_link l, cqt_preset preset, double sigma,
                               size_t n, uint64_t seed, moments *out)
{
    static const double A[3][SD] = {
        {1, 0, 0, 0, 0, 0}, {0.6, 0.8, 0, 0, 0, 0}, {0, 0.6, 0.8, 0, 0, 0}};
    static const double W[3][SD] = {{0, 0, 0, 1, 0, 0}, {0, 0, 0, 0, 1, 0}, {0}};
    cqt_constants c;
    char message[256];
    ck_assert_int_eq(cqt_constants_for(l, preset, sigma * sigma, &c, message, sizeof message), 0);
    memset(out, 0, sizeof *out);
    test_rng rng = {seed};
    double m[SD] = {0}, p2_mean = 0.0;
    for (size_t t = 0; t < n; ++t) {
        double x[SD], logits[3], largest = -INFINITY, total = 0.0;
        for (int j = 0; j < SD; ++j)
            x[j] = test_normal(&rng);
        for (size_t i = 0; i < k; ++i) {
            logits[i] = i + 1 < k ? x[3 + i] * W[i][3 + i] : 0.0;
            largest = logits[i] > largest ? logits[i] : largest;
        }
        for (size_t i = 0; i < k; ++i)
            total += logits[i] = exp(logits[i] - largest);
        double u = test_uniform(&rng) * total;
        size_t z = 0;
        for (; z + 1 < k; ++z)
            if ((u -= logits[z]) < 0.0)
                break;
        for (size_t i = 0; i < k; ++i)
            out->pi[i] += logits[i] / total;
        double mean = 0.0;
        for (int j = 0; j < SD; ++j)
            mean += A[z][j] * x[j];
        double y = link(l, mean) + sigma * test_normal(&rng);
        double p3 = y * y * y + c.alpha * y * y + c.beta * y, p2 = y * y + c.gamma * y;
        p2_mean += p2;
        for (int a = 0; a < SD; ++a) {
            m[a] += p3 * x[a];
            for (int b = 0; b < SD; ++b) {
                out->T2[a][b] += p2 * x[a] * x[b];
                for (int e = 0; e < SD; ++e)
                    out->T3[a][b][e] += p3 * x[a] * x[b] * x[e];
            }
        }
    }
    const double N = (double)n;
    for (size_t i = 0; i < k; ++i)
        out->pi[i] /= N;
    for (int a = 0; a < SD; ++a)
        for (int b = 0; b < SD; ++b) {
            out->T2[a][b] = out->T2[a][b] / N - (a == b) * p2_mean / N;
            for (int e = 0; e < SD; ++e)
                out->T3[a][b][e] = out->T3[a][b][e] / N -
                                   (m[a] * (b == e) + m[b] * (a == e) + m[e] * (a == b)) / N;
        }
}

/* Least squares of T on M = sum_i pi_i a_i^(x)r: the constant and the relative residual. */
static void fit_structure(const moments *mm, size_t k, int order, double *constant,
                          double *residual)
{
    static const double A[3][SD] = {
        {1, 0, 0, 0, 0, 0}, {0.6, 0.8, 0, 0, 0, 0}, {0, 0.6, 0.8, 0, 0, 0}};
    double tm = 0.0, mm2 = 0.0, tt = 0.0;
    for (int a = 0; a < SD; ++a)
        for (int b = 0; b < SD; ++b)
            for (int e = 0; e < (order == 3 ? SD : 1); ++e) {
                double model = 0.0;
                for (size_t i = 0; i < k; ++i)
                    model += mm->pi[i] * A[i][a] * A[i][b] * (order == 3 ? A[i][e] : 1.0);
                double value = order == 3 ? mm->T3[a][b][e] : mm->T2[a][b];
                tm += value * model;
                mm2 += model * model;
                tt += value * value;
            }
    *constant = tm / mm2;
    double remainder = tt - tm * tm / mm2;
    *residual = sqrt(remainder > 0.0 ? remainder : 0.0) / sqrt(tt);
}

START_TEST(population_structure_linear)
{
    for (size_t k = 2; k <= 3; ++k) {
        static moments mm;
        population_moments(k, MOE_LINK_IDENTITY, CQT_PRESET_EXACT, 0.5, 4000000, 40 + k, &mm);
        double c3 = 0.0, r3 = 0.0, c2 = 0.0, r2 = 0.0;
        fit_structure(&mm, k, 3, &c3, &r3);
        fit_structure(&mm, k, 2, &c2, &r2);
        ck_assert_msg(fabs(c3 - 6.0) <= 0.02 * 6.0 && r3 < 0.05, "k = %zu: c3 %g, residual %g",
                      k, c3, r3);
        ck_assert_msg(fabs(c2 - 2.0) <= 0.02 * 2.0 && r2 < 0.05, "k = %zu: c2 %g, residual %g",
                      k, c2, r2);
    }
}
END_TEST

/* ReLU: with the exact constants the raw tensor has no gate cross term T3(w1, a1, a1); the
   published ones leave one of about 0.04 (sigma = 0.1, k = 2). */
START_TEST(relu_cross_term)
{
    static moments exact, paper;
    population_moments(2, MOE_LINK_RELU, CQT_PRESET_EXACT, 0.1, 4000000, 50, &exact);
    population_moments(2, MOE_LINK_RELU, CQT_PRESET_PAPER, 0.1, 4000000, 50, &paper);
    /* w1 = e3, a1 = e0 */
    double cross_exact = exact.T3[3][0][0], cross_paper = paper.T3[3][0][0];
    ck_assert_msg(fabs(cross_exact) < 0.01, "exact constants: T3(w1, a1, a1) = %g", cross_exact);
    ck_assert_msg(fabs(cross_paper) > 0.025 && fabs(cross_paper) < 0.07,
                  "paper constants: T3(w1, a1, a1) = %g", cross_paper);
}
END_TEST

/* E(A, W) at n = 8000, 32000, 128000 (k = 3, d = 10, sigma = 0.5, orthogonal): decreasing,
   by a factor in [1.5, 2.8] per 4x n (n^-1/2 gives 2). */
START_TEST(consistency)
{
    static const size_t sizes[] = {8000, 32000, 128000};
    static const int trials[] = {10, 5, 5};
    double errors[3];
    for (int s = 0; s < 3; ++s) {
        double sum = 0.0;
        for (int trial = 0; trial < trials[s]; ++trial) {
            tensor_truth truth;
            tensor_truth_make(&truth, 3, 10, 0.5, MOE_LINK_IDENTITY, 1, 600 + (uint64_t)trial);
            double *X, *y;
            tensor_truth_sample(&truth, sizes[s], 700 + (uint64_t)trial, &X, &y);
            moe_model_t *model = tensor_truth_model(&truth);
            moe_fitter_t *fitter = NULL;
            ck_assert_int_eq(moe_fitter_create(&fitter, "cqt"), MOE_OK);
            ck_assert_int_eq(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 2), MOE_OK);
            ck_assert_int_eq(moe_fitter_fit(fitter, model, sizes[s], X, 10, y, NULL), MOE_OK);
            sum += tensor_parameter_error(&truth, model);
            moe_model_free(model);
            moe_fitter_free(fitter);
            free(X);
            free(y);
            tensor_truth_free(&truth);
        }
        errors[s] = sum / trials[s];
    }
    for (int s = 1; s < 3; ++s) {
        double ratio = errors[s - 1] / errors[s];
        ck_assert_msg(ratio >= 1.5 && ratio <= 2.8, "E %.4f at n = %zu, %.4f at n = %zu: ratio %.3f",
                      errors[s - 1], sizes[s - 1], errors[s], sizes[s], ratio);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cqt_long");
    TCase *cases = tcase_create("population");
    tcase_set_timeout(cases, 1800);
    tcase_add_test(cases, hermite_tensors_satisfy_stein);
    tcase_add_test(cases, population_structure_linear);
    tcase_add_test(cases, relu_cross_term);
    tcase_add_test(cases, consistency);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
