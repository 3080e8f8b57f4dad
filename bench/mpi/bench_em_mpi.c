/*
 * bench_em_mpi: the exact em of moe_mpi_fit (an "em" fitter) against one process's fit of
 * the same rows (bench/RESULTS.md). Every rank generates bench_em's data set
 * (gaussian_data.h), optionally sorted by its first column (each rank then holds its own
 * region), and keeps its block; rank 0 first fits all rows alone with one thread, then
 * every rank calls moe_mpi_fit with one thread. Rank 0 prints both fits' seconds (the
 * fitter's and the report's, the slowest rank's), their log-likelihoods, the passes and the
 * bytes a rank exchanged a pass, and a modelled table for 8 to 64 ranks:
 *
 *   T(M) = T_start(M) + passes x (T_pass x N / (M N_rank) + log2(M) x latency + bytes(M) / bandwidth)
 *
 * T_pass the measured seconds of one pass over this rank's N_rank rows, T_start(M) the
 * start's (a rank's fit of the sample with 1 / M of the search, search_shards = M, measured
 * for each M on rank 0), latency and bandwidth the --latency and --bandwidth of the
 * network (default 5 us and 1 GB/s, a commodity Ethernet cluster's), bytes(M) the reduce and
 * broadcast of the sums through a tree.
 *
 *   mpirun -np 2 bench_em_mpi [--rows N] [--features D] [--experts K] [--sorted]
 *                             [--support S] [--latency SECONDS] [--bandwidth BYTES_PER_SECOND]
 */
#define _POSIX_C_SOURCE 200809L
#include "../gaussian_data.h"

#include <moe/mpi.h>

#include <stdio.h>
#include <string.h>

typedef struct setup {
    size_t n, d, K;
    int sorted;
    double latency, bandwidth;
    size_t support; /* the start's sample (moe_mpi_fit's support; 0: its default) */
} setup;

static const double *sort_key;

static int by_first_column(const void *a, const void *b)
{
    double x = sort_key[*(const size_t *)a], y = sort_key[*(const size_t *)b];
    return (x > y) - (x < y);
}

/* The rows by their first column: X and y rearranged in place through an index. */
static void sort_rows(size_t n, size_t d, double *X, double *y)
{
    size_t *order = malloc(n * sizeof *order);
    double *first = malloc(n * sizeof(double)), *X2 = malloc(n * d * sizeof(double));
    double *y2 = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        order[i] = i;
        first[i] = X[i * d];
    }
    sort_key = first;
    qsort(order, n, sizeof *order, by_first_column);
    for (size_t i = 0; i < n; ++i) {
        memcpy(X2 + i * d, X + order[i] * d, d * sizeof(double));
        y2[i] = y[order[i]];
    }
    memcpy(X, X2, n * d * sizeof(double));
    memcpy(y, y2, n * sizeof(double));
    free(order);
    free(first);
    free(X2);
    free(y2);
}

static moe_model_t *model_of(const setup *s)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = s->K;
    spec.n_features = s->d;
    moe_model_t *model = NULL;
    moe_model_create(&model, &spec);
    return model;
}

static moe_fitter_t *em_fitter(void)
{
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "em");
    moe_fitter_set_int(fitter, MOE_OPT_THREADS, 1);
    return fitter;
}

/* Rank 0's one-process fit: its seconds and log-likelihood, and its standard errors
   (model_of(s)'s free parameters, into errors). */
static void one_process(const setup *s, const double *X, const double *y, double *seconds,
                        double *loglik, double *errors)
{
    moe_model_t *model = model_of(s);
    moe_fitter_t *fitter = em_fitter();
    moe_status status = moe_fitter_fit(fitter, model, s->n, X, s->d, y, NULL);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    *seconds = report.seconds;
    *loglik = status == MOE_OK ? report.loglik : NAN;
    size_t P = moe_model_n_free_params(model);
    double *covariance = malloc(P * P * sizeof(double));
    moe_status vcov = moe_model_vcov(model, s->n, X, s->d, y, NULL, covariance, P * P);
    for (size_t a = 0; a < P; ++a)
        errors[a] = vcov == MOE_OK ? sqrt(covariance[a * P + a]) : NAN;
    free(covariance);
    moe_fitter_free(fitter);
    moe_model_free(model);
}

/* The start's seconds on a rank of M (M = 1: the whole search): the fit of every
   (n / sample)-th row with search_shards = M. */
static double start_seconds(const setup *s, const double *X, const double *y, int M)
{
    size_t wanted = s->support > 0 ? s->support : 20000;
    size_t sample = s->n < wanted ? s->n : wanted, stride = s->n / sample;
    double *sample_y = malloc(sample * sizeof(double));
    for (size_t i = 0; i < sample; ++i)
        sample_y[i] = y[i * stride];
    moe_model_t *small = model_of(s);
    moe_fitter_t *fitter = em_fitter();
    if (M > 1)
        moe_fitter_set_int(fitter, MOE_OPT_SEARCH_SHARDS, M);
    double t = now();
    moe_fitter_fit(fitter, small, sample, X, s->d * stride, sample_y, NULL);
    t = now() - t;
    free(sample_y);
    moe_fitter_free(fitter);
    moe_model_free(small);
    return t;
}

static void modelled_table(const setup *s, const moe_mpi_report *report, double pass,
                           size_t rows_here, const double *X, const double *y,
                           double bytes_per_pass)
{
    double whole = start_seconds(s, X, y, 1);
    printf("modelled, %.0f us latency, %.2g GB/s: ranks, seconds, speed-up over one process "
           "(passes %zu, one pass over %zu rows %.4f s, the whole start %.3f s)\n",
           s->latency * 1e6, s->bandwidth / 1e9, report->passes, rows_here, pass, whole);
    double one = whole + (double)report->passes * pass * (double)s->n / (double)rows_here;
    for (int M = 2; M <= 64; M *= 2) {
        double hops = log2((double)M), start = start_seconds(s, X, y, M);
        double exchange = hops * s->latency * 2.0 + 2.0 * hops * bytes_per_pass / s->bandwidth;
        double T = start + (double)report->passes *
                               (pass * (double)s->n / ((double)M * (double)rows_here) + exchange);
        printf("  %2d ranks: start %.3f s, %.3f s, %.2fx\n", M, start, T, one / T);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    setup s = {1000000, 5, 3, 0, 5e-6, 1e9, 0};
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--rows") == 0 && a + 1 < argc)
            s.n = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--features") == 0 && a + 1 < argc)
            s.d = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--experts") == 0 && a + 1 < argc)
            s.K = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--sorted") == 0)
            s.sorted = 1;
        else if (strcmp(argv[a], "--latency") == 0 && a + 1 < argc)
            s.latency = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--bandwidth") == 0 && a + 1 < argc)
            s.bandwidth = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--support") == 0 && a + 1 < argc)
            s.support = (size_t)strtod(argv[++a], NULL);
    }
    double *X = malloc(s.n * s.d * sizeof(double)), *y = malloc(s.n * sizeof(double));
    make_gaussian_data(s.n, s.d, s.K, X, y);
    if (s.sorted)
        sort_rows(s.n, s.d, X, y);
    double alone = 0.0, alone_loglik = NAN;
    size_t P = s.K * (s.d + 1) * 2 + s.K;
    double *alone_errors = calloc(P, sizeof(double)), *errors = calloc(P, sizeof(double));
    double *covariance = malloc(P * P * sizeof(double));
    if (rank == 0)
        one_process(&s, X, y, &alone, &alone_loglik, alone_errors);
    size_t first = (size_t)rank * s.n / (size_t)size;
    size_t count = (size_t)(rank + 1) * s.n / (size_t)size - first;
    moe_model_t *model = model_of(&s);
    moe_fitter_t *fitter = em_fitter();
    MPI_Barrier(MPI_COMM_WORLD);
    double started = now();
    moe_status status = moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, count, X + first * s.d,
                                    s.d, y + first, NULL, s.support);
    double wall = now() - started;
    moe_mpi_report report = MOE_MPI_REPORT_INIT;
    moe_mpi_get_report(&report);
    /* The standard errors over every rank's rows, against the one process's. */
    size_t free_parameters = moe_model_n_free_params(model);
    double worst_error = 0.0;
    if (moe_mpi_vcov(MPI_COMM_WORLD, model, count, X + first * s.d, s.d, y + first, NULL, 0.0,
                     0.0, covariance, P * P) == MOE_OK)
        for (size_t a = 0; a < free_parameters; ++a) {
            errors[a] = sqrt(covariance[a * free_parameters + a]);
            worst_error = fmax(worst_error, fabs(errors[a] - alone_errors[a]) / alone_errors[a]);
        }
    else
        worst_error = NAN;
    /* One pass over this rank's rows, timed as the best of three log-likelihoods. */
    double pass = INFINITY, ignored = 0.0;
    for (int r = 0; r < 3; ++r) {
        double t = now();
        moe_model_loglik(model, count, X + first * s.d, s.d, y + first, NULL, &ignored);
        pass = fmin(pass, now() - t);
    }
    if (rank == 0) {
        printf("n = %zu, d = %zu, K = %zu, %s rows, %d ranks, one thread each\n", s.n, s.d,
               s.K, s.sorted ? "sorted" : "shuffled", size);
        printf("one process: fit %.3f s, log-likelihood %.4f\n", alone, alone_loglik);
        printf("moe_mpi_fit em: %s, fit %.3f s (%.2f of one process), wall %.3f s, "
               "log-likelihood %.4f (relative difference %.2g), %zu iterations, %zu passes, "
               "%.0f bytes a pass at the busiest rank\n",
               status == MOE_OK ? "ok" : moe_mpi_last_error(), report.seconds,
               report.seconds / alone, wall, report.loglik,
               fabs(report.loglik - alone_loglik) / fabs(alone_loglik), report.iterations,
               report.passes, report.bytes / (double)report.passes);
        printf("standard errors over all ranks: within %.2g relative of one process's\n",
               worst_error);
        modelled_table(&s, &report, pass, count, X, y,
                       16.0 * (double)(s.K * (s.d + 1)) * (double)(s.K * (s.d + 1)));
    }
    moe_fitter_free(fitter);
    moe_model_free(model);
    free(alone_errors);
    free(errors);
    free(covariance);
    free(X);
    free(y);
    MPI_Finalize();
    return status == MOE_OK ? 0 : 1;
}
