/*
 * libmoe: the portable seeded random number generator the library uses (xoshiro256**,
 * seeded by splitmix64), for estimators that need the same streams: the same seed and
 * stream give the same numbers on every platform. No global state.
 */
#ifndef MOE_RNG_H
#define MOE_RNG_H

#include <stddef.h>
#include <stdint.h>
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The generator's whole state; copy it to fork a stream. */
typedef struct moe_rng {
    uint64_t state[4];
} moe_rng;

/* Seed from a 64-bit value and a stream index (the restart number, say): distinct streams of
   one seed are independent for all practical purposes. */
MOE_API void moe_rng_seed(moe_rng *rng, uint64_t seed, uint64_t stream);
/* 64 random bits. */
MOE_API uint64_t moe_rng_next(moe_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
MOE_API double moe_rng_uniform(moe_rng *rng);
/* Uniform integer in [0, bound) without modulo bias; 0 when bound is 0. */
MOE_API size_t moe_rng_below(moe_rng *rng, size_t bound);
/* Standard normal (Marsaglia's polar method). */
MOE_API double moe_rng_normal(moe_rng *rng);

#ifdef __cplusplus
}
#endif

#endif /* MOE_RNG_H */
