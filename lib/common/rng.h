/*
 * Portable seeded PRNG (xoshiro256**, seeded by splitmix64). The same seed
 * gives the same stream on every platform; no rand(), no global state.
 */
#ifndef MOE_LIB_RNG_H
#define MOE_LIB_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct moe_rng {
    uint64_t state[4];
} moe_rng;

/* Seed from a 64-bit value and a stream index (e.g. the restart number). */
void moe_rng_seed(moe_rng *rng, uint64_t seed, uint64_t stream);
uint64_t moe_rng_next(moe_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
double moe_rng_uniform(moe_rng *rng);
/* Uniform integer in [0, bound), bound >= 1, without modulo bias. */
size_t moe_rng_below(moe_rng *rng, size_t bound);
/* Standard normal (Marsaglia polar method). */
double moe_rng_normal(moe_rng *rng);

#endif
