/*
 * Truths of the tensor method's experiments (docs/REPRODUCTIONS.md, "cqt"): experts a_i
 * uniform on the unit sphere of R^d, gate rows w_i (the last zero) uniform on the sphere,
 * or on the sphere of the orthogonal complement of span{a_i}; x ~ N(0, I), y = g(a_z' x) +
 * sigma e, no intercepts. And the paper's metrics.
 */
#ifndef MOE_TESTS_TENSOR_TRUTH_H
#define MOE_TESTS_TENSOR_TRUTH_H

#include <moe/moe.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tensor_truth {
    size_t k, d;
    moe_link link;
    double sigma;
    double *experts; /* k x d, unit rows */
    double *gate;    /* k x d, last row zero */
} tensor_truth;

void tensor_truth_make(tensor_truth *truth, size_t k, size_t d, double sigma, moe_link link,
                       int orthogonal, uint64_t seed);
void tensor_truth_free(tensor_truth *truth);

/* n rows: X (n x d) and y, allocated. */
void tensor_truth_sample(const tensor_truth *truth, size_t n, uint64_t seed, double **X,
                         double **y);

/* A model of the truth's shape (Gaussian, link, no intercept). */
moe_model_t *tensor_truth_model(const tensor_truth *truth);

/* min over experts of |cos(fitted, true)| under the best permutation; perm receives it
   (perm[true] = fitted). */
double tensor_regressor_fit(const tensor_truth *truth, const moe_model_t *model, size_t *perm);
/* k = 2: |cos(w_fitted, w_true)| with the fitted gate's difference of rows. */
double tensor_gating_fit(const tensor_truth *truth, const moe_model_t *model);
/* min over permutations of ||A - A*_pi||_F + ||W - (W*_pi - w*_pi(k) 1')||_F: the truth's
   gate re-referenced to the expert the fitted model has as its reference. */
double tensor_parameter_error(const tensor_truth *truth, const moe_model_t *model);

#endif
