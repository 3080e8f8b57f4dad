/*
 * bench_estep_paths: the time of each path that reaches the fused E-step
 * (lib/pass/posterior_block.c) with a different set of its copies' constants, so that
 * each copy can be weighed on the path where it runs (bench/RESULTS.md, "Which copies of
 * the fused E-step pay").
 *
 *   bench_estep_paths --path PATH [--n 1e6] [--d 5] [--k 3] [--iterations 10]
 *
 * PATH (the copy it runs: previous targets, normal parts, unit weights):
 *   em                  Gaussian experts, EM, no weights        (1, 1, 1)
 *   em-weighted         Gaussian experts, EM, weights in [0.5, 1.5]  (1, 1, 0)
 *   em-logistic         logistic experts, EM                    (1, 0, 0)
 *   posterior           Gaussian experts, moe_model_posterior   (0, 1, 0)
 *   posterior-logistic  logistic experts, moe_model_posterior   (0, 0, 0)
 * The EM paths print the seconds per iteration (the intervals between progress callbacks
 * after the first); the posterior paths the seconds per call, over `iterations` calls at a
 * model fitted by five EM iterations. Both as the minimum and the median. One thread.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime; strdup, strtok_r in harness.h */

#include <moe/moe.h>

#include "harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* xorshift64*, uniform in (0, 1), and Box-Muller normals. */
typedef struct rng {
    uint64_t state;
} rng;

static double uniform(rng *r)
{
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return ((double)((r->state * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(rng *r)
{
    return sqrt(-2.0 * log(uniform(r))) * cos(6.283185307179586 * uniform(r));
}

/* Softmax-gated experts' linear predictors plus noise; logistic: their sign. */
static void make_data(size_t n, size_t d, size_t K, int logistic, double *X, double *y,
                      double *weights)
{
    rng r = {12345 + d * 100 + K};
    size_t p = d + 1;
    double gate[8 * 64], experts[8 * 64], logits[8];
    for (size_t k = 0; k < K; ++k)
        for (size_t j = 0; j < p; ++j) {
            experts[k * p + j] = j == 0 ? (logistic ? 0.5 : 3.0) * (double)k : normal(&r);
            gate[k * p + j] = k + 1 < K && j > 0 ? normal(&r) / sqrt((double)d) : 0.0;
        }
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = normal(&r);
        double mean = gated_mean(gate, experts, K, d, x, uniform(&r), logits);
        y[i] = logistic ? (mean + normal(&r) > 0.0) : mean + 0.5 * normal(&r);
        weights[i] = 0.5 + uniform(&r);
    }
}

static void print_times(const char *path, size_t K, double *seconds, size_t count)
{
    sort_seconds(seconds, count);
    printf("%-19s K=%zu  min %.5f s  median %.5f s  (%zu)\n", path, K, seconds[0],
           seconds[count / 2], count);
}

/* EM iterations of a fit from a random start; the intervals between them in seconds. */
static size_t em_intervals(moe_model_t *model, size_t n, size_t d, const double *X,
                           const double *y, const double *weights, size_t iterations,
                           double *seconds)
{
    timing stamps = {{0.0}, 0};
    moe_fitter_t *fitter = NULL;
    if (moe_fitter_create(&fitter, "em") != MOE_OK)
        return 0;
    moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1);
    moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, (long long)iterations);
    moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0);
    moe_fitter_set_option(fitter, "init", "random");
    moe_fitter_set_int(fitter, MOE_OPT_THREADS, 1);
    moe_fitter_set_progress(fitter, record, &stamps);
    moe_status status = moe_fitter_fit(fitter, model, n, X, d, y, weights);
    if (status != MOE_OK)
        fprintf(stderr, "fit: %s\n", moe_fitter_last_error(fitter));
    moe_fitter_free(fitter);
    return timing_intervals(&stamps, 1, seconds);
}

static size_t posterior_calls(moe_model_t *model, size_t n, size_t d, const double *X,
                              const double *y, size_t iterations, double *seconds)
{
    size_t K = moe_model_n_experts(model), count = 0;
    double *out = malloc(n * K * sizeof(double)), scratch[MAX_ITERATIONS];
    em_intervals(model, n, d, X, y, NULL, 5, scratch);
    for (size_t s = 0; out != NULL && s < iterations && s < MAX_ITERATIONS; ++s) {
        double start = now();
        if (moe_model_posterior(model, n, X, d, y, out, n * K) != MOE_OK)
            break;
        seconds[count++] = now() - start;
    }
    free(out);
    return count;
}

static int run(const char *path, size_t n, size_t d, size_t K, size_t iterations)
{
    int logistic = strstr(path, "logistic") != NULL, em = strncmp(path, "em", 2) == 0;
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    double *weights = malloc(n * sizeof(double)), seconds[MAX_ITERATIONS];
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = logistic ? MOE_FAMILY_LOGISTIC : MOE_FAMILY_GAUSSIAN;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    size_t count = 0;
    if (X != NULL && y != NULL && weights != NULL && moe_model_create(&model, &spec) == MOE_OK) {
        make_data(n, d, K, logistic, X, y, weights);
        count = em ? em_intervals(model, n, d, X, y,
                                  strcmp(path, "em-weighted") == 0 ? weights : NULL,
                                  iterations + 1, seconds)
                   : posterior_calls(model, n, d, X, y, iterations, seconds);
    }
    if (count > 0)
        print_times(path, K, seconds, count);
    moe_model_free(model);
    free(X);
    free(y);
    free(weights);
    return count > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *path = "em";
    size_t n = 1000000, d = 5, K = 3, iterations = 10;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--path") == 0)
            path = argv[a + 1];
        else if (strcmp(argv[a], "--n") == 0)
            n = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--d") == 0)
            d = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--k") == 0)
            K = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--iterations") == 0)
            iterations = (size_t)strtod(argv[a + 1], NULL);
    }
    if (K < 1 || K > 8 || d < 1 || d > 63 || iterations < 1 || iterations >= MAX_ITERATIONS) {
        fprintf(stderr, "bench_estep_paths: K in 1..8, d in 1..63, iterations in 1..63\n");
        return 2;
    }
    return run(path, n, d, K, iterations);
}
