/*
 * What the benchmarks share: harness.h's clock, a fixed-seed generator (the same data on
 * every machine) and the two roofs measured in the run that uses them, the peak GFLOP/s of
 * a large dgemm (at OpenBLAS's own thread count, OPENBLAS_NUM_THREADS) and the streaming
 * read bandwidth. Static inline: a program that needs only the generator (bench_fit_time)
 * is not warned of the roofs it leaves.
 */
#ifndef MOE_BENCH_ROOFLINE_H
#define MOE_BENCH_ROOFLINE_H

#include <cblas.h>

#include "harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* splitmix64 + Box-Muller: the same data on every machine. */
typedef struct rng {
    uint64_t state;
} rng;

static inline double uniform(rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}

static inline double normal(rng *r)
{
    double u = uniform(r), v = uniform(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* GFLOP/s of a 2000 x 2000 x 2000 dgemm, the best of four. */
static inline double peak_dgemm_gflops(void)
{
    const int size = 2000;
    double *a = malloc((size_t)size * size * sizeof(double));
    double *b = malloc((size_t)size * size * sizeof(double));
    double *c = malloc((size_t)size * size * sizeof(double));
    rng r = {1};
    for (size_t i = 0; i < (size_t)size * size; ++i) {
        a[i] = uniform(&r);
        b[i] = uniform(&r);
        c[i] = 0.0;
    }
    double best = 0.0;
    for (int repeat = 0; repeat < 4; ++repeat) {
        double start = now();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0, a, size, b,
                    size, 0.0, c, size);
        double rate = 2.0 * size * (double)size * size / (now() - start) / 1e9;
        best = rate > best ? rate : best;
    }
    free(a);
    free(b);
    free(c);
    return best;
}

static inline double stream_read_gbytes(void)
{
    const size_t count = (size_t)64 << 20; /* 512 MB of doubles */
    double *values = malloc(count * sizeof(double));
    for (size_t i = 0; i < count; ++i)
        values[i] = (double)(i & 1023);
    double best = 0.0, sink = 0.0;
    for (int repeat = 0; repeat < 4; ++repeat) {
        double start = now(), sum0 = 0.0, sum1 = 0.0, sum2 = 0.0, sum3 = 0.0;
        for (size_t i = 0; i < count; i += 4) {
            sum0 += values[i];
            sum1 += values[i + 1];
            sum2 += values[i + 2];
            sum3 += values[i + 3];
        }
        double rate = (double)(count * sizeof(double)) / (now() - start) / 1e9;
        sink += sum0 + sum1 + sum2 + sum3;
        best = rate > best ? rate : best;
    }
    free(values);
    if (sink == -1.0) /* keeps the sums alive */
        puts("");
    return best;
}

#endif
