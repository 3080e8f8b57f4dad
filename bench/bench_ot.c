/*
 * bench_ot: the distributed estimator's wall time against the global em on the same data
 * (bench/RESULTS.md), N rows of the distributed paper's design (K = 4, d = 20, clustered x,
 * integer parameters): em on all rows, then ot with M = 2, 4, 8 shards on the `threads`
 * option (each shard one em, the shards at once), with each fit's iterations and its test
 * log-likelihood per row. The MPI counterpart is bench/mpi/bench_ot_mpi.c.
 *
 * usage: bench_ot [--rows N] [--threads T] [--n-init R]
 */
#define _POSIX_C_SOURCE 200809L

#include <moe/moe.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K = 4, D = 20, P = D + 1 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The paper's design: integer parameters in [-5, 5], variances in 1..5, four clusters of x
   with AR(1) correlation 1/4. */
void bench_ot_data(size_t n, uint64_t seed, double *X, double *y)
{
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0);
    double gate[K * P] = {0}, experts[K * P], variances[K], centres[K * D];
    for (int k = 0; k < K; ++k) {
        for (int j = 0; j < P; ++j) {
            experts[k * P + j] = (double)moe_rng_below(&rng, 11) - 5.0;
            if (k + 1 < K)
                gate[k * P + j] = (double)moe_rng_below(&rng, 11) - 5.0;
        }
        variances[k] = 1.0 + (double)moe_rng_below(&rng, 5);
        for (int j = 0; j < D; ++j)
            centres[k * D + j] = (double)moe_rng_below(&rng, 11) - 5.0;
    }
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *truth = NULL;
    moe_model_create(&truth, &spec);
    moe_model_set_gate(truth, gate, K * P);
    moe_model_set_experts(truth, experts, K * P);
    moe_model_set_variances(truth, variances, K);
    double proba[K];
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * D, z = moe_rng_normal(&rng);
        for (int j = 0; j < D; ++j) {
            if (j > 0)
                z = 0.25 * z + sqrt(1.0 - 0.0625) * moe_rng_normal(&rng);
            x[j] = centres[(i % K) * D + j] + z;
        }
        moe_model_gate_proba(truth, 1, x, D, proba, K);
        double u = moe_rng_uniform(&rng);
        int k = 0;
        while (k + 1 < K && (u -= proba[k]) >= 0.0)
            ++k;
        double mean = experts[k * P];
        for (int j = 0; j < D; ++j)
            mean += experts[k * P + 1 + j] * x[j];
        y[i] = mean + sqrt(variances[k]) * moe_rng_normal(&rng);
    }
    moe_model_free(truth);
}

#ifndef BENCH_OT_NO_MAIN
static void run(const char *estimator, const char *shards, size_t n, const double *X,
                const double *y, const char *threads, const char *n_init)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    moe_model_create(&model, &spec);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, estimator);
    moe_fitter_set_option(fitter, "threads", threads);
    moe_fitter_set_option(fitter, "n_init", n_init);
    moe_fitter_set_option(fitter, "tol", "1e-6");
    if (shards != NULL)
        moe_fitter_set_option(fitter, "shards", shards);
    size_t train = n * 9 / 10;
    double start = now();
    moe_status status = moe_fitter_fit(fitter, model, train, X, D, y, NULL);
    double seconds = now() - start;
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    double loglik = NAN;
    moe_model_loglik(model, n - train, X + train * D, D, y + train, NULL, &loglik);
    printf("%-4s %6s %9.2f %10zu %12.4f %s\n", estimator, shards != NULL ? shards : "-", seconds,
           report.total_iterations, loglik / (double)(n - train),
           status == MOE_OK ? "" : moe_fitter_last_error(fitter));
    fflush(stdout);
    moe_fitter_free(fitter);
    moe_model_free(model);
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    const char *threads = "2", *n_init = "5";
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--rows") == 0 && a + 1 < argc)
            n = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            threads = argv[++a];
        else if (strcmp(argv[a], "--n-init") == 0 && a + 1 < argc)
            n_init = argv[++a];
        else {
            fprintf(stderr, "usage: bench_ot [--rows N] [--threads T] [--n-init R]\n");
            return 2;
        }
    }
    double *X = malloc(n * D * sizeof(double)), *y = malloc(n * sizeof(double));
    bench_ot_data(n, 1, X, y);
    printf("bench_ot: %zu rows (90%% fitted, 10%% test), K = %d, d = %d, threads %s, n_init %s\n",
           n, K, D, threads, n_init);
    printf("%-4s %6s %9s %10s %12s\n", "fit", "shards", "seconds", "iterations", "test ll/row");
    run("em", NULL, n, X, y, threads, n_init);
    static const char *const shard_counts[] = {"2", "4", "8"};
    for (int s = 0; s < 3; ++s)
        run("ot", shard_counts[s], n, X, y, threads, n_init);

    /* The pieces of a distributed fit, for a model of M machines: one shard's em (the
       slowest of the first four), the bytes a local model takes, and the reduction of all M
       local models on the N/M support rows at the coordinator. */
    printf("\n%4s %14s %12s %14s %14s\n", "M", "shard rows", "shard em s", "model bytes",
           "reduction s");
    size_t train = n * 9 / 10;
    static const size_t counts[] = {8, 64};
    for (int c = 0; c < 2; ++c) {
        size_t M = counts[c];
        moe_model_t **locals = malloc(M * sizeof *locals);
        double *shares = malloc(M * sizeof(double)), slowest = 0.0;
        size_t bytes = 0;
        for (size_t m = 0; m < M; ++m) {
            size_t first = m * train / M, last = (m + 1) * train / M;
            moe_model_spec spec = MOE_MODEL_SPEC_INIT;
            spec.n_experts = K;
            spec.n_features = D;
            moe_model_create(&locals[m], &spec);
            moe_fitter_t *em = NULL;
            moe_fitter_create(&em, "em");
            moe_fitter_set_option(em, "n_init", n_init);
            moe_fitter_set_option(em, "tol", "1e-6");
            char seed[32];
            snprintf(seed, sizeof seed, "%zu", m);
            moe_fitter_set_option(em, "seed", seed);
            double start = now();
            moe_fitter_fit(em, locals[m], last - first, X + first * D, D, y + first, NULL);
            double seconds = now() - start;
            if (m < 4 && seconds > slowest)
                slowest = seconds;
            moe_fitter_free(em);
            shares[m] = (double)(last - first) / (double)train;
            moe_model_save_buffer(locals[m], NULL, 0, &bytes);
        }
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.n_experts = K;
        spec.n_features = D;
        moe_model_t *reduced = NULL;
        moe_model_create(&reduced, &spec);
        moe_fitter_t *ot = NULL;
        moe_fitter_create(&ot, "ot");
        double start = now();
        moe_fitter_aggregate(ot, reduced, M, (const moe_model_t *const *)locals, shares,
                             train / M, X, D, y, NULL);
        double reduction = now() - start;
        printf("%4zu %14zu %12.3f %14zu %14.3f\n", M, train / M, slowest, bytes, reduction);
        fflush(stdout);
        moe_fitter_free(ot);
        moe_model_free(reduced);
        for (size_t m = 0; m < M; ++m)
            moe_model_free(locals[m]);
        free(locals);
        free(shares);
    }
    free(X);
    free(y);
    return 0;
}
#endif
