/* Data with known truth for classification experts: softmax gate, logistic or multinomial experts. */
#ifndef MOE_TESTS_LABELS_H
#define MOE_TESTS_LABELS_H

#include <moe/moe.h>
#include <stddef.h>
#include <stdint.h>

typedef struct label_truth {
    moe_family family; /* MOE_FAMILY_LOGISTIC or MOE_FAMILY_MULTINOMIAL */
    size_t n_experts, n_features, n_classes, expert_rows;
    double *gate;    /* K x (d + 1), intercept first, last row zero */
    double *experts; /* K x expert_rows x (d + 1); multinomial: last class row zero */
} label_truth;

/*
 * Gate slopes N(0, gate_scale^2) with zero intercepts; expert coefficients
 * N(0, expert_scale^2) including intercepts. n_classes is 0 for logistic.
 */
void label_truth_make(label_truth *truth, moe_family family, size_t K, size_t d, size_t C,
                      double gate_scale, double expert_scale, uint64_t seed);
void label_truth_free(label_truth *truth);

/* x ~ N(0, I_d), z ~ gate, y ~ expert z: X is n x d, y n labels (0/1 or 0..C-1). */
void label_data_make(const label_truth *truth, size_t n, uint64_t seed, double *X, double *y);

/* A model of the truth's structure (intercept on) with neutral parameters. */
moe_model_t *label_model_like(const label_truth *truth);
/* A model holding the truth. */
moe_model_t *label_truth_model(const label_truth *truth);

#endif
