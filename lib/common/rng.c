#include "common/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotate_left(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void moe_rng_seed(moe_rng *rng, uint64_t seed, uint64_t stream)
{
    uint64_t mix = seed;
    uint64_t stream_key = splitmix64(&mix) ^ (stream * 0xd1b54a32d192ed03ULL);
    for (int i = 0; i < 4; ++i)
        rng->state[i] = splitmix64(&stream_key);
}

uint64_t moe_rng_next(moe_rng *rng)
{
    uint64_t *s = rng->state;
    uint64_t result = rotate_left(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotate_left(s[3], 45);
    return result;
}

double moe_rng_uniform(moe_rng *rng)
{
    return (double)(moe_rng_next(rng) >> 11) * 0x1.0p-53;
}

size_t moe_rng_below(moe_rng *rng, size_t bound)
{
    if (bound == 0)
        return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % (uint64_t)bound;
    uint64_t value;
    do
        value = moe_rng_next(rng);
    while (value >= limit);
    return (size_t)(value % (uint64_t)bound);
}

double moe_rng_normal(moe_rng *rng)
{
    double u, v, s;
    do {
        u = 2.0 * moe_rng_uniform(rng) - 1.0;
        v = 2.0 * moe_rng_uniform(rng) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * sqrt(-2.0 * log(s) / s);
}
