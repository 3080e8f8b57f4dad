#include "support/tensor_truth.h"
#include "support/runner.h"
#include "support/synthetic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void normalise(double *v, size_t d)
{
    double sum = 0.0;
    for (size_t i = 0; i < d; ++i)
        sum += v[i] * v[i];
    sum = sqrt(sum);
    for (size_t i = 0; i < d; ++i)
        v[i] /= sum;
}

void tensor_truth_make(tensor_truth *truth, size_t k, size_t d, double sigma, moe_link link,
                       int orthogonal, uint64_t seed)
{
    test_rng rng = {seed * 0x9E3779B97F4A7C15ULL + 12345};
    truth->k = k;
    truth->d = d;
    truth->sigma = sigma;
    truth->link = link;
    truth->experts = malloc(k * d * sizeof(double));
    truth->gate = calloc(k * d, sizeof(double));
    double *basis = malloc(k * d * sizeof(double));
    for (size_t i = 0; i < k; ++i) {
        for (size_t j = 0; j < d; ++j)
            truth->experts[i * d + j] = test_normal(&rng);
        normalise(truth->experts + i * d, d);
        memcpy(basis + i * d, truth->experts + i * d, d * sizeof(double));
        for (size_t q = 0; q < i; ++q) {
            double projection = 0.0;
            for (size_t j = 0; j < d; ++j)
                projection += basis[i * d + j] * basis[q * d + j];
            for (size_t j = 0; j < d; ++j)
                basis[i * d + j] -= projection * basis[q * d + j];
        }
        normalise(basis + i * d, d);
    }
    for (size_t i = 0; i + 1 < k; ++i) {
        double *w = truth->gate + i * d;
        for (size_t j = 0; j < d; ++j)
            w[j] = test_normal(&rng);
        if (orthogonal)
            for (size_t q = 0; q < k; ++q) {
                double projection = 0.0;
                for (size_t j = 0; j < d; ++j)
                    projection += w[j] * basis[q * d + j];
                for (size_t j = 0; j < d; ++j)
                    w[j] -= projection * basis[q * d + j];
            }
        normalise(w, d);
    }
    free(basis);
}

void tensor_truth_free(tensor_truth *truth)
{
    free(truth->experts);
    free(truth->gate);
}

static double link_value(moe_link link, double t)
{
    if (link == MOE_LINK_SIGMOID)
        return t >= 0.0 ? 1.0 / (1.0 + exp(-t)) : exp(t) / (1.0 + exp(t));
    if (link == MOE_LINK_RELU)
        return t > 0.0 ? t : 0.0;
    return t;
}

void tensor_truth_sample(const tensor_truth *truth, size_t n, uint64_t seed, double **X,
                         double **y)
{
    size_t k = truth->k, d = truth->d;
    test_rng rng = {seed * 0xD1B54A32D192ED03ULL + 777};
    *X = malloc(n * d * sizeof(double));
    *y = malloc(n * sizeof(double));
    double logits[16];
    for (size_t t = 0; t < n; ++t) {
        double *x = *X + t * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = test_normal(&rng);
        double largest = -INFINITY, total = 0.0;
        for (size_t i = 0; i < k; ++i) {
            logits[i] = 0.0;
            for (size_t j = 0; j < d; ++j)
                logits[i] += truth->gate[i * d + j] * x[j];
            if (logits[i] > largest)
                largest = logits[i];
        }
        for (size_t i = 0; i < k; ++i) {
            logits[i] = exp(logits[i] - largest);
            total += logits[i];
        }
        double u = test_uniform(&rng) * total;
        size_t z = 0;
        for (; z + 1 < k; ++z) {
            u -= logits[z];
            if (u < 0.0)
                break;
        }
        double mean = 0.0;
        for (size_t j = 0; j < d; ++j)
            mean += truth->experts[z * d + j] * x[j];
        (*y)[t] = link_value(truth->link, mean) + truth->sigma * test_normal(&rng);
    }
}

moe_model_t *tensor_truth_model(const tensor_truth *truth)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = truth->k;
    spec.n_features = truth->d;
    spec.intercept = 0;
    spec.link = truth->link;
    moe_model_t *model = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK)
        return NULL;
    return model;
}

/* Every permutation of k <= 8 in turn: perm is advanced in lexicographic order. */
static int next_permutation(size_t *perm, size_t k)
{
    if (k < 2)
        return 0;
    size_t i = k - 1;
    while (i > 0 && perm[i - 1] >= perm[i])
        --i;
    if (i == 0)
        return 0;
    size_t j = k - 1;
    while (perm[j] <= perm[i - 1])
        --j;
    size_t t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
    for (size_t a = i, b = k - 1; a < b; ++a, --b) {
        t = perm[a];
        perm[a] = perm[b];
        perm[b] = t;
    }
    return 1;
}

double tensor_regressor_fit(const tensor_truth *truth, const moe_model_t *model, size_t *perm)
{
    size_t k = truth->k, d = truth->d;
    double *fitted = malloc(k * d * sizeof(double));
    EXPECT_STATUS(moe_model_get_experts(model, fitted, k * d), MOE_OK);
    size_t order[16];
    for (size_t i = 0; i < k; ++i)
        order[i] = i;
    double best = -1.0;
    do {
        double worst = INFINITY;
        for (size_t i = 0; i < k; ++i) {
            const double *a = fitted + order[i] * d;
            double dot = 0.0, length = 0.0;
            for (size_t j = 0; j < d; ++j) {
                dot += a[j] * truth->experts[i * d + j];
                length += a[j] * a[j];
            }
            double cosine = fabs(dot) / sqrt(length);
            if (cosine < worst)
                worst = cosine;
        }
        if (worst > best) {
            best = worst;
            if (perm != NULL)
                memcpy(perm, order, k * sizeof(size_t));
        }
    } while (next_permutation(order, k));
    free(fitted);
    return best;
}

double tensor_gating_fit(const tensor_truth *truth, const moe_model_t *model)
{
    size_t d = truth->d;
    double *gate = malloc(2 * d * sizeof(double));
    EXPECT_STATUS(moe_model_get_gate(model, gate, 2 * d), MOE_OK);
    double dot = 0.0, length = 0.0;
    for (size_t j = 0; j < d; ++j) {
        double w = gate[j] - gate[d + j];
        dot += w * truth->gate[j];
        length += w * w;
    }
    free(gate);
    return fabs(dot) / sqrt(length);
}

double tensor_parameter_error(const tensor_truth *truth, const moe_model_t *model)
{
    size_t k = truth->k, d = truth->d;
    double *experts = malloc(k * d * sizeof(double)), *gate = malloc(k * d * sizeof(double));
    EXPECT_STATUS(moe_model_get_experts(model, experts, k * d), MOE_OK);
    EXPECT_STATUS(moe_model_get_gate(model, gate, k * d), MOE_OK);
    size_t order[16];
    for (size_t i = 0; i < k; ++i)
        order[i] = i;
    double best = INFINITY;
    do {
        /* order[i]: the fitted expert matched to true expert i; the fitted reference is
           expert k - 1, matched to the true expert r with order[r] = k - 1. */
        size_t reference = 0;
        for (size_t i = 0; i < k; ++i)
            if (order[i] == k - 1)
                reference = i;
        double expert_error = 0.0, gate_error = 0.0;
        for (size_t i = 0; i < k; ++i)
            for (size_t j = 0; j < d; ++j) {
                double e = experts[order[i] * d + j] - truth->experts[i * d + j];
                double w = gate[order[i] * d + j] -
                           (truth->gate[i * d + j] - truth->gate[reference * d + j]);
                expert_error += e * e;
                gate_error += w * w;
            }
        double error = sqrt(expert_error) + sqrt(gate_error);
        if (error < best)
            best = error;
    } while (next_permutation(order, k));
    free(experts);
    free(gate);
    return best;
}
