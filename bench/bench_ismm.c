/*
 * bench_ismm: the streaming estimator's throughput (bench/RESULTS.md).
 *
 *   For d in {5, 50} and K in {2, 8}, on rows of a random Gaussian mixture of experts:
 *   samples per second of one session over the data (moe_fitter_partial_fit with batch_size
 *   1 and 256), the one-pass bound (rows per second of reading X and y once, summing them),
 *   and one epoch of ismm at batch 256 against two em iterations on the same data (em from
 *   the truth, max_iter = 3 less max_iter = 1): the target is a ratio of at most 1.
 *   Then a stream of 1e8 rows (d = 5, K = 2) generated batch by batch, with the peak RSS at
 *   1e6, 1e7 and 1e8 rows.
 *
 * usage: bench_ismm [--quick] [--threads T]
 */
#define _DEFAULT_SOURCE

#include <moe/moe.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double peak_rss_mb(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_maxrss / 1024.0;
}

static moe_model_t *random_truth(size_t K, size_t d, moe_rng *rng)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    moe_model_create(&model, &spec);
    size_t p = d + 1;
    double *gate = calloc(K * p, sizeof(double)), *experts = malloc(K * p * sizeof(double));
    double *variances = malloc(K * sizeof(double));
    for (size_t k = 0; k < K; ++k) {
        for (size_t j = 0; j < p; ++j) {
            experts[k * p + j] = 2.0 * moe_rng_normal(rng);
            if (k + 1 < K)
                gate[k * p + j] = moe_rng_normal(rng) / sqrt((double)p);
        }
        variances[k] = 0.25;
    }
    moe_model_set_gate(model, gate, K * p);
    moe_model_set_experts(model, experts, K * p);
    moe_model_set_variances(model, variances, K);
    free(gate);
    free(experts);
    free(variances);
    return model;
}

/* n rows of the truth: x ~ N(0, I), z from the gate, y from expert z. */
static void sample(const moe_model_t *truth, size_t n, moe_rng *rng, double *X, double *y)
{
    size_t d = moe_model_n_features(truth), K = moe_model_n_experts(truth), p = d + 1;
    double *experts = malloc(K * p * sizeof(double)), *proba = malloc(K * sizeof(double));
    double variances[64];
    moe_model_get_experts(truth, experts, K * p);
    moe_model_get_variances(truth, variances, K);
    for (size_t i = 0; i < n * d; ++i)
        X[i] = moe_rng_normal(rng);
    for (size_t i = 0; i < n; ++i) {
        moe_model_gate_proba(truth, 1, X + i * d, d, proba, K);
        double u = moe_rng_uniform(rng);
        size_t z = 0;
        while (z + 1 < K && (u -= proba[z]) >= 0.0)
            ++z;
        double mean = experts[z * p];
        for (size_t j = 0; j < d; ++j)
            mean += experts[z * p + 1 + j] * X[i * d + j];
        y[i] = mean + sqrt(variances[z]) * moe_rng_normal(rng);
    }
    free(experts);
    free(proba);
}

static double session_seconds(const moe_model_t *truth, size_t n, const double *X,
                              const double *y, const char *batch, const char *threads)
{
    size_t d = moe_model_n_features(truth);
    moe_model_t *model = NULL;
    moe_model_clone(&model, truth);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "ismm");
    moe_fitter_set_option(fitter, "batch_size", batch);
    moe_fitter_set_option(fitter, "init", "model");
    moe_fitter_set_option(fitter, "threads", threads);
    double start = now();
    moe_status status = moe_fitter_partial_fit(fitter, model, n, X, d, y, NULL);
    double seconds = now() - start;
    if (status != MOE_OK)
        fprintf(stderr, "ismm: %s\n", moe_fitter_last_error(fitter));
    moe_fitter_free(fitter);
    moe_model_free(model);
    return status == MOE_OK ? seconds : NAN;
}

static double em_seconds(const moe_model_t *truth, size_t n, const double *X, const double *y,
                         const char *iterations, const char *threads)
{
    size_t d = moe_model_n_features(truth);
    moe_model_t *model = NULL;
    moe_model_clone(&model, truth);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "em");
    moe_fitter_set_option(fitter, "init", "model");
    moe_fitter_set_option(fitter, "n_init", "1");
    moe_fitter_set_option(fitter, "tol", "0");
    moe_fitter_set_option(fitter, "max_iter", iterations);
    moe_fitter_set_option(fitter, "threads", threads);
    double start = now();
    moe_status status = moe_fitter_fit(fitter, model, n, X, d, y, NULL);
    double seconds = now() - start;
    moe_fitter_free(fitter);
    moe_model_free(model);
    return status == MOE_OK ? seconds : NAN;
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *threads = "1";
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            threads = argv[++a];
        else {
            fprintf(stderr, "usage: bench_ismm [--quick] [--threads T]\n");
            return 2;
        }
    }
    printf("bench_ismm: threads %s\n", threads);
    printf("%4s %3s %9s %12s %12s %12s %10s %10s %7s\n", "d", "K", "n", "rows/s b=1",
           "rows/s b=256", "read rows/s", "epoch s", "2 em it s", "ratio");
    static const size_t dims[] = {5, 50}, experts[] = {2, 8};
    for (int di = 0; di < 2; ++di)
        for (int ki = 0; ki < 2; ++ki) {
            size_t d = dims[di], K = experts[ki];
            size_t n = quick ? 20000 : (d == 5 ? 1000000 : 200000);
            moe_rng rng;
            moe_rng_seed(&rng, 11, d * 100 + K);
            moe_model_t *truth = random_truth(K, d, &rng);
            double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
            sample(truth, n, &rng, X, y);
            /* The one-pass bound: touching every value once. */
            double start = now(), sum = 0.0;
            for (size_t i = 0; i < n * d; ++i)
                sum += X[i];
            for (size_t i = 0; i < n; ++i)
                sum += y[i];
            double read = now() - start;
            size_t n_one = n < 200000 ? n : 200000; /* batch 1 is slower: fewer rows */
            double one = session_seconds(truth, n_one, X, y, "1", threads);
            double epoch = session_seconds(truth, n, X, y, "256", threads);
            double em = em_seconds(truth, n, X, y, "3", threads) -
                        em_seconds(truth, n, X, y, "1", threads);
            printf("%4zu %3zu %9zu %12.0f %12.0f %12.3g %10.3f %10.3f %7.2f%s\n", d, K, n,
                   (double)n_one / one, (double)n / epoch, (double)n / read, epoch, em,
                   epoch / em, sum == 12345.678 ? " " : "");
            fflush(stdout);
            free(X);
            free(y);
            moe_model_free(truth);
        }

    /* A long stream generated on the fly. */
    size_t total = quick ? 1000000 : 100000000, batch = 256;
    moe_rng rng;
    moe_rng_seed(&rng, 5, 0);
    moe_model_t *truth = random_truth(2, 5, &rng);
    moe_model_t *model = NULL;
    moe_model_clone(&model, truth);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "ismm");
    moe_fitter_set_option(fitter, "batch_size", "256");
    moe_fitter_set_option(fitter, "init", "model");
    double *X = malloc(batch * 5 * sizeof(double)), *y = malloc(batch * sizeof(double));
    double start = now(), fitting = 0.0;
    size_t next_report = 1000000;
    printf("\nstream of %zu rows (d = 5, K = 2, batch 256), generated batch by batch:\n", total);
    for (size_t seen = 0; seen < total; seen += batch) {
        sample(truth, batch, &rng, X, y);
        double before = now();
        if (moe_fitter_partial_fit(fitter, model, batch, X, 5, y, NULL) != MOE_OK) {
            fprintf(stderr, "stream: %s\n", moe_fitter_last_error(fitter));
            return 1;
        }
        fitting += now() - before;
        if (seen + batch >= next_report) {
            printf("  %11zu rows: peak RSS %.1f MB, %.1f s (%.0f rows/s in partial_fit)\n",
                   seen + batch, peak_rss_mb(), now() - start, (double)(seen + batch) / fitting);
            fflush(stdout);
            next_report *= 10;
        }
    }
    free(X);
    free(y);
    moe_fitter_free(fitter);
    moe_model_free(model);
    moe_model_free(truth);
    return 0;
}
