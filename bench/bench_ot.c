/*
 * bench_ot: the distributed estimator's modelled speed-up and its log-likelihood against the
 * global em (bench/RESULTS.md, docs/REPRODUCTIONS.md).
 *
 * Simulations in the paper's style (bench_ot_simulate: K experts, d features, integer
 * parameters, x from a mixture of clusters, the rows in random order), a training set of
 * N rows and a held-out test set of N / 5 rows from the same truth, several seeds. For each
 * seed, repetition and M, alternated in one process: the global em on all training rows
 * (defaults, one thread), then the M shards' local fits one by one (each as ot fits it: an
 * "ot" fitter with one shard, which is ot's local em with its search scaled to its rows and
 * local_tol) and their reduction by moe_fitter_aggregate on a support of training rows
 * (ot's default: N / M, at most 25 per free parameter, at least 2000, the cap times 16 / M
 * beyond 16 shards, at least 500; with their responses,
 * as ot's fit and moe-mpi pass them, so that the reduction screens the local models). The modelled
 * speed-up of M machines is the global time over the slowest shard's time plus the
 * reduction's; the gaps are the global fit's log-likelihood per row minus the
 * reduced model's (held-out and training rows; positive: the reduction is worse).
 *
 * usage: bench_ot [--rows N] [--seeds S] [--first-seed F] [--repeats R] [--experts K] [--features d]
 *                 [--layout clustered|overlapping|uniform] [--shards 4,8,16,64]
 *                 [--full-search] [--paper-support] [--support S] [--reduction-restarts R]
 *                 [--cpu-time] [--public]
 * (--full-search: the local fits search as a global fit does, as ot's did in 0.1.0;
 * --paper-support: N / M support rows, the paper's and 0.1.0's default; --support S: S rows;
 * --cpu-time: times are the process's CPU time, not wall time, for a loaded machine; run with
 * OPENBLAS_NUM_THREADS=1; --public: the local fits are em fitters with search_shards = M, the
 * fits a user makes through the public calls before moe_fitter_aggregate)
 */
#define _POSIX_C_SOURCE 200809L

#include <moe/moe.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K = 4, D = 20, P = D + 1 };

/* --cpu-time: the process's CPU time instead of the wall clock (one thread: the work a
   machine does, whatever else the machine runs). */
static int cpu_time = 0;

static double now(void)
{
    struct timespec t;
    clock_gettime(cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A Gaussian truth of K experts over d features with these parameters (K x (d + 1), K). */
static moe_model_t *truth_model(size_t K, size_t d, const double *gate, const double *experts,
                                const double *variances)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *truth = NULL;
    moe_model_create(&truth, &spec);
    moe_model_set_gate(truth, gate, K * (d + 1));
    moe_model_set_experts(truth, experts, K * (d + 1));
    moe_model_set_variances(truth, variances, K);
    return truth;
}

/* A response at x from the truth: an expert drawn by the gate's probabilities (proba: K
   doubles of workspace), then its mean plus Gaussian noise of its variance. */
static double draw_response(const moe_model_t *truth, const double *experts,
                            const double *variances, const double *x, moe_rng *rng,
                            double *proba)
{
    size_t K = moe_model_n_experts(truth), d = moe_model_n_features(truth), p = d + 1;
    moe_model_gate_proba(truth, 1, x, d, proba, K);
    double u = moe_rng_uniform(rng);
    size_t k = 0;
    while (k + 1 < K && (u -= proba[k]) >= 0.0)
        ++k;
    double mean = experts[k * p];
    for (size_t j = 0; j < d; ++j)
        mean += experts[k * p + 1 + j] * x[j];
    return mean + sqrt(variances[k]) * moe_rng_normal(rng);
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
    moe_model_t *truth = truth_model(K, D, gate, experts, variances);
    double proba[K];
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * D, z = moe_rng_normal(&rng);
        for (int j = 0; j < D; ++j) {
            if (j > 0)
                z = 0.25 * z + sqrt(1.0 - 0.0625) * moe_rng_normal(&rng);
            x[j] = centres[(i % K) * D + j] + z;
        }
        y[i] = draw_response(truth, experts, variances, x, &rng, proba);
    }
    moe_model_free(truth);
}

#ifndef BENCH_OT_NO_MAIN
/* Cluster layouts of x: K well separated clusters (the paper's), 2K clusters half as far
   apart, or one uniform cloud. */
typedef enum layout { LAYOUT_CLUSTERED, LAYOUT_OVERLAPPING, LAYOUT_UNIFORM } layout;

/* A truth of K experts over d features and n rows from it (X: n x d). Integer coefficients
   in [-5, 5], gate coefficients in [-2, 2] (so the gate is neither flat nor a hard switch
   everywhere), variances in 1..5. */
static moe_model_t *simulate_truth(size_t K, size_t d, uint64_t seed)
{
    size_t p = d + 1;
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0x74727574ULL);
    double *gate = calloc(K * p, sizeof(double)), *experts = malloc(K * p * sizeof(double));
    double *variances = malloc(K * sizeof(double));
    for (size_t k = 0; k < K; ++k) {
        for (size_t j = 0; j < p; ++j) {
            experts[k * p + j] = (double)moe_rng_below(&rng, 11) - 5.0;
            if (k + 1 < K)
                gate[k * p + j] = (double)moe_rng_below(&rng, 5) - 2.0;
        }
        variances[k] = 1.0 + (double)moe_rng_below(&rng, 5);
    }
    moe_model_t *truth = truth_model(K, d, gate, experts, variances);
    free(gate);
    free(experts);
    free(variances);
    return truth;
}

static void bench_ot_simulate(const moe_model_t *truth, layout shape, size_t n, uint64_t seed,
                              uint64_t stream, double *X, double *y)
{
    size_t K = moe_model_n_experts(truth), d = moe_model_n_features(truth), p = d + 1;
    size_t clusters = shape == LAYOUT_OVERLAPPING ? 2 * K : K;
    double spread = shape == LAYOUT_OVERLAPPING ? 1.5 : 3.0;
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0x63656e74ULL);
    double *centres = malloc(clusters * d * sizeof(double));
    for (size_t i = 0; i < clusters * d; ++i)
        centres[i] = spread * ((double)moe_rng_below(&rng, 5) - 2.0);
    double *experts = malloc(K * p * sizeof(double)), *variances = malloc(K * sizeof(double));
    double *proba = malloc(K * sizeof(double));
    moe_model_get_experts(truth, experts, K * p);
    moe_model_get_variances(truth, variances, K);
    moe_rng_seed(&rng, seed, stream);
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * d;
        size_t c = moe_rng_below(&rng, clusters);
        for (size_t j = 0; j < d; ++j)
            x[j] = shape == LAYOUT_UNIFORM ? 6.0 * moe_rng_uniform(&rng) - 3.0
                                           : centres[c * d + j] + moe_rng_normal(&rng);
        y[i] = draw_response(truth, experts, variances, x, &rng, proba);
    }
    free(centres);
    free(experts);
    free(variances);
    free(proba);
}

typedef struct problem {
    size_t n, test, K, d;
    double *X, *y, *test_X, *test_y;
} problem;

static double loglik_per_row(const moe_model_t *model, size_t n, const double *X, size_t d,
                             const double *y)
{
    double loglik = NAN;
    moe_model_loglik(model, n, X, d, y, NULL, &loglik);
    return loglik / (double)n;
}

static moe_model_t *empty_model(const problem *data)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = data->K;
    spec.n_features = data->d;
    moe_model_t *model = NULL;
    moe_model_create(&model, &spec);
    return model;
}

/* One fit on rows [first, first + n) of the training set; its wall time. */
static double timed_fit(const problem *data, moe_fitter_t *fitter, moe_model_t *model,
                        size_t first, size_t n)
{
    double start = now();
    moe_status status = moe_fitter_fit(fitter, model, n, data->X + first * data->d, data->d,
                                       data->y + first, NULL);
    double seconds = now() - start;
    if (status != MOE_OK)
        fprintf(stderr, "a fit failed: %s\n", moe_fitter_last_error(fitter));
    return seconds;
}

typedef struct outcome {
    double global_seconds, slowest, reduction, test_gap, train_gap;
    size_t reduction_iterations;
} outcome;

/* search_shards of the local fits: 0 for ot's (by the shard's rows), 1 for a full search
   (--full-search). */
static size_t local_search = 0;
/* --public: the local fits through public calls, as a user of moe_fitter_aggregate makes
   them: an "em" fitter with search_shards = M and its own tol, not ot's local em. */
static int public_calls = 0;
/* Support rows of the reduction: 0, ot's default (N / M, at most 25 per free parameter, at
   least 2000, times 16 / M beyond 16 shards, at least 500); 1, N / M (--paper-support); else
   that many. */
static size_t support_rows = 0;
/* The reduction's option reduction_restarts ("": ot's default). */
static const char *reduction_restarts = "";

/* The global em, then M local fits one by one and their reduction. */
static outcome distributed(const problem *data, size_t M, uint64_t seed)
{
    outcome result = {0};
    char seed_text[32], machines[32];
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)seed);
    snprintf(machines, sizeof machines, "%zu", local_search);
    moe_model_t *global = empty_model(data);
    moe_fitter_t *em = NULL;
    moe_fitter_create(&em, "em");
    moe_fitter_set_option(em, "seed", seed_text);
    result.global_seconds = timed_fit(data, em, global, 0, data->n);
    moe_fitter_free(em);
    moe_model_t **locals = malloc(M * sizeof *locals);
    double *shares = malloc(M * sizeof(double));
    for (size_t m = 0; m < M; ++m) {
        size_t first = m * data->n / M, last = (m + 1) * data->n / M;
        moe_fitter_t *local = NULL;
        if (public_calls) {
            snprintf(machines, sizeof machines, "%zu", M);
            moe_fitter_create(&local, "em");
        } else {
            moe_fitter_create(&local, "ot");
            moe_fitter_set_option(local, "shards", "1");
        }
        moe_fitter_set_option(local, "search_shards", machines);
        moe_fitter_set_option(local, "seed", seed_text);
        locals[m] = empty_model(data);
        double seconds = timed_fit(data, local, locals[m], first, last - first);
        result.slowest = seconds > result.slowest ? seconds : result.slowest;
        shares[m] = (double)(last - first) / (double)data->n;
        moe_fitter_free(local);
    }
    /* The support: N / M training rows, every M-th (the rows are in random order). */
    size_t p = data->d + 1, cap = 25 * ((2 * data->K - 1) * p + data->K);
    cap = cap > 2000 ? cap : 2000;
    if (M > 16)
        cap = cap * 16 / M > 500 ? cap * 16 / M : 500;
    size_t S = support_rows == 0 ? cap : support_rows;
    if (support_rows == 1 || S > data->n / M)
        S = data->n / M;
    double *support_X = malloc(S * data->d * sizeof(double)), *support_y = malloc(S * sizeof(double));
    for (size_t s = 0; s < S; ++s) {
        size_t row = s * (data->n / S) + M / 2;
        memcpy(support_X + s * data->d, data->X + row * data->d, data->d * sizeof(double));
        support_y[s] = data->y[row];
    }
    moe_model_t *reduced = empty_model(data);
    moe_fitter_t *ot = NULL;
    moe_fitter_create(&ot, "ot");
    moe_fitter_set_option(ot, "seed", seed_text);
    if (reduction_restarts[0] != '\0')
        moe_fitter_set_option(ot, "reduction_restarts", reduction_restarts);
    double start = now();
    if (moe_fitter_aggregate(ot, reduced, M, (const moe_model_t *const *)locals, shares, S,
                             support_X, data->d, support_y, NULL) != MOE_OK)
        fprintf(stderr, "the reduction failed: %s\n", moe_fitter_last_error(ot));
    result.reduction = now() - start;
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(ot, &report);
    result.reduction_iterations = report.total_iterations;
    moe_fitter_free(ot);
    result.test_gap = loglik_per_row(global, data->test, data->test_X, data->d, data->test_y) -
                      loglik_per_row(reduced, data->test, data->test_X, data->d, data->test_y);
    result.train_gap = loglik_per_row(global, data->n, data->X, data->d, data->y) -
                       loglik_per_row(reduced, data->n, data->X, data->d, data->y);
    for (size_t m = 0; m < M; ++m)
        moe_model_free(locals[m]);
    free(locals);
    free(shares);
    free(support_X);
    free(support_y);
    moe_model_free(reduced);
    moe_model_free(global);
    return result;
}

static int parse_shards(const char *text, size_t *counts, size_t capacity)
{
    int count = 0;
    char *end = NULL;
    while (*text != '\0' && (size_t)count < capacity) {
        counts[count++] = (size_t)strtoul(text, &end, 10);
        text = *end == ',' ? end + 1 : end;
        if (end == text && *text != '\0')
            return 0;
    }
    return count;
}

int main(int argc, char **argv)
{
    size_t n = 200000, seeds = 3, first_seed = 1, repeats = 3, experts = 4, features = 10;
    size_t shard_counts[16] = {4, 8, 16, 64};
    int n_shards = 4;
    layout shape = LAYOUT_CLUSTERED;
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--full-search") == 0) {
            local_search = 1;
            continue;
        }
        if (strcmp(argv[a], "--cpu-time") == 0) {
            cpu_time = 1;
            continue;
        }
        if (strcmp(argv[a], "--public") == 0) {
            public_calls = 1;
            continue;
        }
        if (strcmp(argv[a], "--paper-support") == 0) {
            support_rows = 1;
            continue;
        }
        const char *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (value == NULL)
            goto usage;
        if (strcmp(argv[a], "--rows") == 0)
            n = (size_t)strtod(value, NULL);
        else if (strcmp(argv[a], "--seeds") == 0)
            seeds = (size_t)strtoul(value, NULL, 10);
        else if (strcmp(argv[a], "--first-seed") == 0)
            first_seed = (size_t)strtoul(value, NULL, 10);
        else if (strcmp(argv[a], "--repeats") == 0)
            repeats = (size_t)strtoul(value, NULL, 10);
        else if (strcmp(argv[a], "--experts") == 0)
            experts = (size_t)strtoul(value, NULL, 10);
        else if (strcmp(argv[a], "--features") == 0)
            features = (size_t)strtoul(value, NULL, 10);
        else if (strcmp(argv[a], "--shards") == 0)
            n_shards = parse_shards(value, shard_counts, 16);
        else if (strcmp(argv[a], "--support") == 0)
            support_rows = (size_t)strtoul(value, NULL, 10);
        else if (strcmp(argv[a], "--reduction-restarts") == 0)
            reduction_restarts = value;
        else if (strcmp(argv[a], "--layout") == 0)
            shape = strcmp(value, "overlapping") == 0 ? LAYOUT_OVERLAPPING
                    : strcmp(value, "uniform") == 0   ? LAYOUT_UNIFORM
                                                      : LAYOUT_CLUSTERED;
        else
            goto usage;
        ++a;
    }
    if (n_shards == 0 || experts < 1 || features < 1 || n < 1000)
        goto usage;
    problem data = {n, n / 5, experts, features, NULL, NULL, NULL, NULL};
    data.X = malloc(n * features * sizeof(double));
    data.y = malloc(n * sizeof(double));
    data.test_X = malloc(data.test * features * sizeof(double));
    data.test_y = malloc(data.test * sizeof(double));
    static const char *const layouts[] = {"clustered", "overlapping", "uniform"};
    printf("bench_ot: N = %zu training rows (%zu held out), K = %zu, d = %zu, x %s, %zu seeds x "
           "%zu repetitions, one thread, %s time\n",
           n, data.test, experts, features, layouts[shape], seeds, repeats,
           cpu_time ? "CPU" : "wall");
    printf("%4s %4s %4s %9s %9s %9s %6s %8s %9s %9s\n", "seed", "rep", "M", "global s",
           "shard s", "reduce s", "MM its", "speed-up", "test gap", "train gap");
    double worst_speedup[16], worst_test[16], worst_train[16], best_speedup[16];
    for (int c = 0; c < n_shards; ++c) {
        worst_speedup[c] = INFINITY;
        best_speedup[c] = 0.0;
        worst_test[c] = worst_train[c] = -INFINITY;
    }
    for (size_t seed = first_seed; seed < first_seed + seeds; ++seed) {
        moe_model_t *truth = simulate_truth(experts, features, seed);
        bench_ot_simulate(truth, shape, n, seed, 1, data.X, data.y);
        bench_ot_simulate(truth, shape, data.test, seed, 2, data.test_X, data.test_y);
        moe_model_free(truth);
        for (size_t r = 0; r < repeats; ++r)
            for (int c = 0; c < n_shards; ++c) {
                outcome o = distributed(&data, shard_counts[c], seed);
                double speedup = o.global_seconds / (o.slowest + o.reduction);
                printf("%4zu %4zu %4zu %9.3f %9.3f %9.3f %6zu %8.2f %9.4f %9.4f\n", seed, r,
                       shard_counts[c], o.global_seconds, o.slowest, o.reduction,
                       o.reduction_iterations, speedup, o.test_gap, o.train_gap);
                fflush(stdout);
                worst_speedup[c] = speedup < worst_speedup[c] ? speedup : worst_speedup[c];
                best_speedup[c] = speedup > best_speedup[c] ? speedup : best_speedup[c];
                worst_test[c] = o.test_gap > worst_test[c] ? o.test_gap : worst_test[c];
                worst_train[c] = o.train_gap > worst_train[c] ? o.train_gap : worst_train[c];
            }
    }
    printf("\nover all seeds and repetitions (gaps in nats per row, the largest):\n");
    printf("%4s %17s %10s %10s\n", "M", "speed-up min-max", "test gap", "train gap");
    for (int c = 0; c < n_shards; ++c)
        printf("%4zu %8.2f - %6.2f %10.4f %10.4f\n", shard_counts[c], worst_speedup[c],
               best_speedup[c], worst_test[c], worst_train[c]);
    free(data.X);
    free(data.y);
    free(data.test_X);
    free(data.test_y);
    return 0;
usage:
    fprintf(stderr, "usage: bench_ot [--rows N] [--seeds S] [--first-seed F] [--repeats R] "
                    "[--experts K] "
                    "[--features d] [--layout clustered|overlapping|uniform] [--shards 4,8,...] "
                    "[--full-search] [--paper-support] [--support S] "
                    "[--reduction-restarts R] [--cpu-time] [--public]\n");
    return 2;
}
#endif
