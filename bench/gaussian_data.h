/*
 * bench_em's data set, which bench_fit_time fits to convergence: softmax-gated Gaussian
 * experts drawn from roofline.h's fixed-seed generator.
 */
#ifndef MOE_BENCH_GAUSSIAN_DATA_H
#define MOE_BENCH_GAUSSIAN_DATA_H

#include "harness.h"
#include "roofline.h"

#include <math.h>
#include <stdlib.h>

/*
 * X ~ N(0, I_d) rows; the expert of each row drawn from a random softmax gate (slopes of
 * scale 1 / sqrt(d), so the logits stay of order one whatever d); y its linear predictor
 * plus N(0, 0.25) noise, the expert intercepts 3 apart so that the experts can be told
 * apart. The seed depends on d and K only: a larger n extends the same rows.
 */
static inline void make_gaussian_data(size_t n, size_t d, size_t K, double *X, double *y)
{
    rng r = {12345 + d * 100 + K};
    size_t p = d + 1;
    double *gate = calloc(K * p, sizeof(double)), *experts = calloc(K * p, sizeof(double));
    for (size_t k = 0; k < K; ++k)
        for (size_t j = 0; j < p; ++j) {
            experts[k * p + j] = (j == 0 ? 3.0 * (double)k : normal(&r));
            if (k + 1 < K && j > 0)
                gate[k * p + j] = normal(&r) / sqrt((double)d);
        }
    double *logits = malloc(K * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = normal(&r);
        double mean = gated_mean(gate, experts, K, d, x, uniform(&r), logits);
        y[i] = mean + 0.5 * normal(&r);
    }
    free(logits);
    free(gate);
    free(experts);
}

#endif
