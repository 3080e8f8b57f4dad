/*
 * What the benchmark programs share besides the roofline (roofline.h): a monotonic clock;
 * the seconds of each EM iteration taken from the fitter's progress callbacks (the
 * fitter's own report has only the whole fit's time, which includes the start-up); the
 * comma-separated lists of sizes and thread counts on their command lines; the draw of a
 * row's expert in their synthetic data. Each program uses a different part of it, hence
 * static inline: no warning for the parts it leaves.
 *
 * strdup and strtok_r are POSIX: a program defines _POSIX_C_SOURCE 200809L or
 * _DEFAULT_SOURCE before its first include.
 */
#ifndef MOE_BENCH_HARNESS_H
#define MOE_BENCH_HARNESS_H

#include <moe/moe.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The progress callbacks one fit records: the programs' limit on --iterations. */
#define MAX_ITERATIONS 64

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* When each progress callback of a fit came, up to one per iteration. */
typedef struct timing {
    double stamps[MAX_ITERATIONS + 1];
    size_t count;
} timing;

/* The progress callback that fills a `timing` (its data); it never stops the fit. */
static inline int record(const moe_progress *progress, void *data)
{
    timing *t = data;
    (void)progress;
    if (t->count <= MAX_ITERATIONS)
        t->stamps[t->count++] = now();
    return 0;
}

/* The seconds between successive callbacks, leaving out the first `skip` intervals
   (iterations whose time is not yet the steady one); returns how many. */
static inline size_t timing_intervals(const timing *t, size_t skip, double *seconds)
{
    size_t count = 0;
    for (size_t s = skip + 1; s < t->count; ++s)
        seconds[count++] = t->stamps[s] - t->stamps[s - 1];
    return count;
}

static inline int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* In increasing order, so that the minimum is first and the median at count / 2. */
static inline void sort_seconds(double *seconds, size_t count)
{
    qsort(seconds, count, sizeof(double), compare_doubles);
}

/* Seconds per iteration: the median interval between callbacks, robust to the odd slow
   iteration of a shared machine; NAN when the fit called back fewer than twice. */
static inline double median_interval(const timing *t)
{
    double seconds[MAX_ITERATIONS];
    size_t count = timing_intervals(t, 0, seconds);
    sort_seconds(seconds, count);
    return count > 0 ? seconds[count / 2] : NAN;
}

/* "1e4,1e5" into at most `capacity` values (as strtod reads them, so 1e4 is a size). */
static inline size_t parse_list(const char *text, size_t *values, size_t capacity)
{
    size_t count = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *token = strtok_r(copy, ",", &save); token && count < capacity;
         token = strtok_r(NULL, ",", &save))
        values[count++] = (size_t)strtod(token, NULL);
    free(copy);
    return count;
}

/*
 * The expert that a softmax gate draws for the row x (gate K x (d + 1), intercept first;
 * `logits` K values of scratch). The uniform `draw` in (0, 1) comes from the caller, so
 * that each program keeps its own generator and its order of draws, hence its data.
 */
static inline size_t gated_expert(const double *gate, size_t K, size_t d, const double *x,
                                  double draw, double *logits)
{
    size_t p = d + 1;
    double top = -INFINITY, total = 0.0;
    for (size_t k = 0; k < K; ++k) {
        logits[k] = gate[k * p];
        for (size_t j = 0; j < d; ++j)
            logits[k] += gate[k * p + 1 + j] * x[j];
        top = logits[k] > top ? logits[k] : top;
    }
    for (size_t k = 0; k < K; ++k)
        total += logits[k] = exp(logits[k] - top);
    double u = draw * total;
    size_t z = 0;
    while (z + 1 < K && (u -= logits[z]) > 0.0)
        ++z;
    return z;
}

/* Expert z's linear predictor at x (experts K x (d + 1), intercept first). */
static inline double expert_mean(const double *experts, size_t z, size_t d, const double *x)
{
    size_t p = d + 1;
    double mean = experts[z * p];
    for (size_t j = 0; j < d; ++j)
        mean += experts[z * p + 1 + j] * x[j];
    return mean;
}

/* The linear predictor of the expert that the gate draws for x (gated_expert). */
static inline double gated_mean(const double *gate, const double *experts, size_t K,
                                size_t d, const double *x, double draw, double *logits)
{
    return expert_mean(experts, gated_expert(gate, K, d, x, draw, logits), d, x);
}

#endif
