/*
 * bench_cqt: the tensor estimator's cost against n and d, and against EM iterations of the
 * same shape (bench/RESULTS.md).
 *
 * Every configuration runs in a child process so that its peak RSS is its own, on data from
 * the paper's model (x ~ N(0, I), unit experts, gate rows on the unit sphere, sigma = 0.5,
 * no intercepts). Timed through the public API:
 *   stage 1  cqt's report.stage_seconds[0] (n_init = 1, max_iter = 1): the two passes, the
 *            eigensolvers and the decomposition;
 *   gate it  cqt's report.stage_seconds[1] with that one gate iteration (an E-step, a gate
 *            Newton solve to convergence, an E-step);
 *   em x 3   three em iterations: em from the truth (init = model) with max_iter = 4 less
 *            em with max_iter = 1, times 3/3 (the starting E-step cancels).
 * The ratio stage 1 / (em x 3) below 1 means stage 1 costs less than three EM iterations.
 *
 * usage: bench_cqt [--threads T] [--quick]
 */
#define _DEFAULT_SOURCE

#include "isolated.h"

#include <moe/moe.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct result {
    double cqt_seconds, gate_seconds, em_seconds;
    int status;
} result;

static moe_model_t *truth_model(size_t K, size_t d, moe_rng *rng)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    spec.intercept = 0;
    moe_model_t *model = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK)
        return NULL;
    double *experts = calloc(K * d, sizeof(double)), *gate = calloc(K * d, sizeof(double));
    double *variances = malloc(K * sizeof(double));
    for (size_t k = 0; k < K; ++k) {
        double a = 0.0, w = 0.0;
        for (size_t j = 0; j < d; ++j) {
            experts[k * d + j] = moe_rng_normal(rng);
            a += experts[k * d + j] * experts[k * d + j];
            if (k + 1 < K) {
                gate[k * d + j] = moe_rng_normal(rng);
                w += gate[k * d + j] * gate[k * d + j];
            }
        }
        for (size_t j = 0; j < d; ++j) {
            experts[k * d + j] /= sqrt(a);
            if (k + 1 < K)
                gate[k * d + j] /= sqrt(w);
        }
        variances[k] = 0.25;
    }
    moe_model_set_experts(model, experts, K * d);
    moe_model_set_gate(model, gate, K * d);
    moe_model_set_variances(model, variances, K);
    free(experts);
    free(gate);
    free(variances);
    return model;
}

static result run(size_t n, size_t d, size_t K, int threads)
{
    result out = {0.0, 0.0, 0.0, 0};
    moe_rng rng;
    moe_rng_seed(&rng, 7, d);
    moe_model_t *truth = truth_model(K, d, &rng);
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    double *proba = malloc(K * sizeof(double)), *mean = malloc(K * sizeof(double));
    double *experts = malloc(K * d * sizeof(double));
    if (truth == NULL || X == NULL || y == NULL || proba == NULL || mean == NULL ||
        experts == NULL) {
        out.status = 2;
        return out;
    }
    moe_model_get_experts(truth, experts, K * d);
    for (size_t i = 0; i < n * d; ++i)
        X[i] = moe_rng_normal(&rng);
    for (size_t i = 0; i < n; ++i) {
        moe_model_gate_proba(truth, 1, X + i * d, d, proba, K);
        double u = moe_rng_uniform(&rng);
        size_t z = 0;
        while (z + 1 < K && (u -= proba[z]) >= 0.0)
            ++z;
        double value = 0.0;
        for (size_t j = 0; j < d; ++j)
            value += experts[z * d + j] * X[i * d + j];
        y[i] = value + 0.5 * moe_rng_normal(&rng);
    }
    char text[32];
    snprintf(text, sizeof text, "%d", threads);

    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    moe_model_clone(&model, truth);
    moe_fitter_create(&fitter, "cqt");
    moe_fitter_set_option(fitter, "n_init", "1");
    moe_fitter_set_option(fitter, "max_iter", "1");
    moe_fitter_set_option(fitter, "threads", text);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    if (moe_fitter_fit(fitter, model, n, X, d, y, NULL) != MOE_OK) {
        fprintf(stderr, "cqt: %s\n", moe_fitter_last_error(fitter));
        out.status = 1;
    }
    moe_fitter_get_report(fitter, &report);
    out.cqt_seconds = report.stage_seconds[0];
    out.gate_seconds = report.stage_seconds[1];
    moe_fitter_free(fitter);
    moe_model_free(model);

    double em_seconds[2];
    static const char *const iterations[2] = {"1", "4"};
    for (int run = 0; run < 2; ++run) {
        moe_model_clone(&model, truth);
        moe_fitter_create(&fitter, "em");
        moe_fitter_set_option(fitter, "n_init", "1");
        moe_fitter_set_option(fitter, "max_iter", iterations[run]);
        moe_fitter_set_option(fitter, "init", "model");
        moe_fitter_set_option(fitter, "tol", "0");
        moe_fitter_set_option(fitter, "threads", text);
        double start = now();
        if (moe_fitter_fit(fitter, model, n, X, d, y, NULL) != MOE_OK) {
            fprintf(stderr, "em: %s\n", moe_fitter_last_error(fitter));
            out.status = 1;
        }
        em_seconds[run] = now() - start;
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    out.em_seconds = em_seconds[1] - em_seconds[0];
    moe_model_free(truth);
    free(X);
    free(y);
    free(proba);
    free(mean);
    free(experts);
    return out;
}

typedef struct configuration {
    size_t n, d, K;
    int threads;
} configuration;

static void run_configuration(const void *arguments, void *out)
{
    const configuration *c = arguments;
    *(result *)out = run(c->n, c->d, c->K, c->threads);
}

/* The configuration in a child (bench/isolated.h), with its own peak RSS. */
static result run_isolated(size_t n, size_t d, size_t K, int threads, double *rss)
{
    configuration c = {n, d, K, threads};
    result out = {0.0, 0.0, 0.0, 2};
    if (run_isolated_child(run_configuration, &c, &out, sizeof out, rss) != 0)
        out.status = 2;
    return out;
}

static void line(size_t n, size_t d, size_t K, int threads)
{
    double rss = 0.0;
    result r = run_isolated(n, d, K, threads, &rss);
    double x_bytes = (double)n * (double)d * 8.0;
    printf("%9zu %4zu %2zu %9.3f %9.3f %9.3f %7.3f %9.1f %7.2f %s\n", n, d, K, r.cqt_seconds,
           r.gate_seconds, r.em_seconds, r.cqt_seconds / r.em_seconds, rss / 1048576.0,
           rss / x_bytes, r.status == 0 ? "" : "FAILED");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int threads = 1, quick = 0;
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            threads = atoi(argv[++a]);
        else if (strcmp(argv[a], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: bench_cqt [--threads T] [--quick]\n");
            return 2;
        }
    }
    printf("bench_cqt: %d thread(s); ratio = stage 1 / three EM iterations\n", threads);
    printf("%9s %4s %2s %9s %9s %9s %7s %9s %7s\n", "n", "d", "K", "stage1 s", "gate it s",
           "em x3 s", "ratio", "RSS MB", "RSS/X");
    static const size_t sizes[] = {10000, 100000, 1000000, 10000000};
    for (size_t i = 0; i < (quick ? 2u : 4u); ++i)
        line(sizes[i], 10, 4, threads);
    static const size_t dimensions[] = {10, 20, 50, 100, 200};
    for (size_t i = 0; i < (quick ? 2u : 5u); ++i)
        line(quick ? 20000 : 100000, dimensions[i], 4, threads);
    if (!quick)
        line(1000000, 200, 4, threads);
    return 0;
}
