#include "labels.h"
#include "synthetic.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

void label_truth_make(label_truth *truth, moe_family family, size_t K, size_t d, size_t C,
                      double gate_scale, double expert_scale, uint64_t seed)
{
    test_rng rng = {seed};
    size_t p = d + 1;
    truth->family = family;
    truth->n_experts = K;
    truth->n_features = d;
    truth->n_classes = family == MOE_FAMILY_MULTINOMIAL ? C : 0;
    truth->expert_rows = family == MOE_FAMILY_MULTINOMIAL ? C : 1;
    truth->gate = calloc(K * p, sizeof(double));
    truth->experts = calloc(K * truth->expert_rows * p, sizeof(double));
    for (size_t k = 0; k + 1 < K; ++k)
        for (size_t j = 1; j < p; ++j)
            truth->gate[k * p + j] = gate_scale * test_normal(&rng);
    for (size_t k = 0; k < K; ++k)
        for (size_t r = 0; r < truth->expert_rows; ++r) {
            if (family == MOE_FAMILY_MULTINOMIAL && r + 1 == C)
                continue; /* reference class */
            for (size_t j = 0; j < p; ++j)
                truth->experts[(k * truth->expert_rows + r) * p + j] =
                    expert_scale * test_normal(&rng);
        }
}

void label_truth_free(label_truth *truth)
{
    free(truth->gate);
    free(truth->experts);
}

/* Index drawn from unnormalised log-weights. */
static size_t draw(test_rng *rng, const double *logits, size_t count)
{
    double top = logits[0];
    for (size_t c = 1; c < count; ++c)
        top = fmax(top, logits[c]);
    double total = 0.0;
    for (size_t c = 0; c < count; ++c)
        total += exp(logits[c] - top);
    double u = test_uniform(rng) * total;
    for (size_t c = 0; c + 1 < count; ++c) {
        u -= exp(logits[c] - top);
        if (u < 0.0)
            return c;
    }
    return count - 1;
}

void label_data_make(const label_truth *truth, size_t n, uint64_t seed, double *X, double *y)
{
    test_rng rng = {seed};
    size_t d = truth->n_features, p = d + 1, K = truth->n_experts;
    double logits[64];
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = test_normal(&rng);
        for (size_t k = 0; k < K; ++k) {
            logits[k] = truth->gate[k * p];
            for (size_t j = 0; j < d; ++j)
                logits[k] += truth->gate[k * p + 1 + j] * x[j];
        }
        size_t z = draw(&rng, logits, K);
        size_t rows = truth->expert_rows;
        const double *block = truth->experts + z * rows * p;
        if (truth->family == MOE_FAMILY_LOGISTIC) {
            double eta = block[0];
            for (size_t j = 0; j < d; ++j)
                eta += block[1 + j] * x[j];
            y[i] = test_uniform(&rng) < 1.0 / (1.0 + exp(-eta)) ? 1.0 : 0.0;
        } else {
            for (size_t c = 0; c < rows; ++c) {
                logits[c] = block[c * p];
                for (size_t j = 0; j < d; ++j)
                    logits[c] += block[c * p + 1 + j] * x[j];
            }
            y[i] = (double)draw(&rng, logits, rows);
        }
    }
}

moe_model_t *label_model_like(const label_truth *truth)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = truth->family;
    spec.n_experts = truth->n_experts;
    spec.n_features = truth->n_features;
    spec.n_classes = truth->n_classes;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

moe_model_t *label_truth_model(const label_truth *truth)
{
    moe_model_t *model = label_model_like(truth);
    size_t p = truth->n_features + 1;
    ck_assert_int_eq(moe_model_set_gate(model, truth->gate, truth->n_experts * p), MOE_OK);
    ck_assert_int_eq(moe_model_set_experts(model, truth->experts,
                                           truth->n_experts * truth->expert_rows * p),
                     MOE_OK);
    return model;
}
