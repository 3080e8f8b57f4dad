#include "synthetic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(test_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double test_uniform(test_rng *rng)
{
    return ((double)(next(rng) >> 11) + 0.5) * 0x1.0p-53;
}

double test_normal(test_rng *rng)
{
    double u = test_uniform(rng), v = test_uniform(rng);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void test_probabilities(test_rng *rng, size_t count, double *out)
{
    double sum = 0.0;
    for (size_t c = 0; c < count; ++c)
        sum += out[c] = test_uniform(rng);
    for (size_t c = 0; c < count; ++c)
        out[c] /= sum;
}

void synthetic_truth_make(synthetic_truth *truth, size_t K, size_t d, double separation,
                          double gate_scale, uint64_t seed)
{
    size_t p = d + 1;
    test_rng rng = {seed};
    truth->n_experts = K;
    truth->n_features = d;
    truth->gate = calloc(K * p, sizeof(double));
    truth->experts = calloc(K * p, sizeof(double));
    truth->variances = calloc(K, sizeof(double));
    for (size_t k = 0; k < K; ++k) {
        truth->experts[k * p] = separation * ((double)k - 0.5 * (double)(K - 1));
        for (size_t j = 1; j < p; ++j)
            truth->experts[k * p + j] = test_normal(&rng);
        truth->variances[k] = 0.25 + 0.75 * test_uniform(&rng);
        if (k + 1 < K)
            for (size_t j = 0; j < p; ++j)
                truth->gate[k * p + j] = gate_scale * test_normal(&rng) * (j == 0 ? 0.3 : 1.0);
    }
}

void synthetic_truth_free(synthetic_truth *truth)
{
    free(truth->gate);
    free(truth->experts);
    free(truth->variances);
}

void synthetic_data_make(synthetic_data *data, const synthetic_truth *truth, size_t n,
                         uint64_t seed)
{
    size_t K = truth->n_experts, d = truth->n_features, p = d + 1;
    test_rng rng = {seed ^ 0x5bd1e995ULL};
    data->n = n;
    data->n_features = d;
    data->X = malloc((n * d + 1) * sizeof(double));
    data->y = malloc(n * sizeof(double));
    data->labels = malloc(n * sizeof(size_t));
    double *logits = malloc(K * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        double *x = data->X + i * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = test_normal(&rng);
        double largest = -INFINITY;
        for (size_t k = 0; k < K; ++k) {
            logits[k] = truth->gate[k * p];
            for (size_t j = 0; j < d; ++j)
                logits[k] += truth->gate[k * p + 1 + j] * x[j];
            if (logits[k] > largest)
                largest = logits[k];
        }
        double total = 0.0;
        for (size_t k = 0; k < K; ++k)
            total += (logits[k] = exp(logits[k] - largest));
        double u = test_uniform(&rng) * total, cumulative = 0.0;
        size_t z = K - 1;
        for (size_t k = 0; k < K; ++k) {
            cumulative += logits[k];
            if (u < cumulative) {
                z = k;
                break;
            }
        }
        double mean = truth->experts[z * p];
        for (size_t j = 0; j < d; ++j)
            mean += truth->experts[z * p + 1 + j] * x[j];
        data->y[i] = mean + sqrt(truth->variances[z]) * test_normal(&rng);
        data->labels[i] = z;
    }
    free(logits);
}

void synthetic_data_free(synthetic_data *data)
{
    free(data->X);
    free(data->y);
    free(data->labels);
}

static void permute(size_t K, size_t p, const double *truth, const double *fitted, size_t *current,
                    size_t depth, unsigned used, double *best_cost, size_t *best, double cost)
{
    if (cost >= *best_cost)
        return;
    if (depth == K) {
        *best_cost = cost;
        memcpy(best, current, K * sizeof(size_t));
        return;
    }
    for (size_t j = 0; j < K; ++j) {
        if (used & (1u << j))
            continue;
        double c = 0.0;
        for (size_t a = 0; a < p; ++a)
            c += (truth[depth * p + a] - fitted[j * p + a]) * (truth[depth * p + a] - fitted[j * p + a]);
        current[depth] = j;
        permute(K, p, truth, fitted, current, depth + 1, used | (1u << j), best_cost, best,
                cost + c);
    }
}

void synthetic_align(size_t K, size_t p, const double *true_experts, const double *fitted,
                     size_t *perm)
{
    size_t current[16];
    double best_cost = INFINITY;
    permute(K, p, true_experts, fitted, current, 0, 0u, &best_cost, perm, 0.0);
}

double test_poisson(test_rng *rng, double mu)
{
    double limit = exp(-mu), product = test_uniform(rng), count = 0.0;
    while (product > limit) {
        product *= test_uniform(rng);
        count += 1.0;
    }
    return count;
}
