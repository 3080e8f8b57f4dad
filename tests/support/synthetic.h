/* Data with known truth for the tests: softmax-gated Gaussian experts. */
#ifndef MOE_TESTS_SYNTHETIC_H
#define MOE_TESTS_SYNTHETIC_H

#include <stddef.h>
#include <stdint.h>

typedef struct synthetic_truth {
    size_t n_experts;
    size_t n_features;
    double *gate;      /* K x (d + 1), intercept first, last row zero */
    double *experts;   /* K x (d + 1) */
    double *variances; /* K */
} synthetic_truth;

typedef struct synthetic_data {
    size_t n;
    size_t n_features;
    double *X; /* n x d */
    double *y; /* n */
    size_t *labels;
} synthetic_data;

/* Independent test PRNG (splitmix64), so tests do not lean on the library's. */
typedef struct test_rng {
    uint64_t state;
} test_rng;
double test_uniform(test_rng *rng);
double test_normal(test_rng *rng);
/* A Poisson count of mean mu by Knuth's product of uniforms (mu below a few hundred). */
double test_poisson(test_rng *rng, double mu);
/* `count` uniform draws scaled to sum to one, in that order: a row of soft targets or of
   responsibilities, none of them zero. */
void test_probabilities(test_rng *rng, size_t count, double *out);

/*
 * Well-separated truth: expert intercepts spread by `separation`, slopes
 * N(0,1), gate slopes N(0, gate_scale^2), variances in [0.25, 1].
 */
void synthetic_truth_make(synthetic_truth *truth, size_t K, size_t d, double separation,
                          double gate_scale, uint64_t seed);
void synthetic_truth_free(synthetic_truth *truth);

/* x ~ N(0, I_d); z ~ softmax gate; y ~ N(x~'beta_z, sigma_z^2). */
void synthetic_data_make(synthetic_data *data, const synthetic_truth *truth, size_t n,
                         uint64_t seed);
void synthetic_data_free(synthetic_data *data);

/*
 * Best permutation aligning fitted experts to the truth (by expert
 * coefficients; K <= 8 by brute force). perm[k] = fitted index for true k.
 */
void synthetic_align(size_t K, size_t p, const double *true_experts, const double *fitted,
                     size_t *perm);

#endif
