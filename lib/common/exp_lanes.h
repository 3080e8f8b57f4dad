/*
 * exp and log of one value without calls or branches, so that a loop of them runs on SIMD
 * lanes: the bodies of moe_exp_array and moe_log_array (common/exp_array.c), and inlined
 * where a vector loop needs its exponentials in the same pass (pass/posterior_block.c).
 * Comparisons become selections only without trapping math: a file that inlines these is
 * built with -fno-trapping-math (CMakeLists.txt).
 */
#ifndef MOE_LIB_EXP_LANES_H
#define MOE_LIB_EXP_LANES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(r) for |r| <= ln 2 / 2 as 1 + r + r^2 q(r), q of degree 9 fitted to
   (exp(r) - 1 - r) / r^2 on Chebyshev nodes (near minimax): 1.2 ulp at most over the
   interval before the scaling, where a Taylor polynomial needs degree 13 for 1.4 ulp. At
   r = 0 it is exactly 1, so that a softmax's largest term is exactly 1. */
static inline __attribute__((always_inline)) double moe_exp_reduced(double r)
{
    double q = 0x1.af389ecfc4b9cp-26;
    q = q * r + 0x1.28917c89a43a7p-22;
    q = q * r + 0x1.71de0db2f6b19p-19;
    q = q * r + 0x1.a019b9149a41cp-16;
    q = q * r + 0x1.a01a01a7c2efep-13;
    q = q * r + 0x1.6c16c17889ef1p-10;
    q = q * r + 0x1.11111111109b5p-7;
    q = q * r + 0x1.5555555553d68p-5;
    q = q * r + 0x1.5555555555556p-3;
    q = q * r + 0x1.0000000000001p-1;
    return 1.0 + (r + r * r * q);
}

/* exp(x) as moe_exp (0 below -708, +inf above the overflow threshold, NaN for NaN), within
   about one ulp: exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln 2 / 2. */
static inline __attribute__((always_inline)) double moe_exp_lane(double x)
{
    const double log2e = 1.4426950408889634074, shifter = 0x1.8p52;
    /* ln 2 in two parts, the first with 32 significant bits so that n * ln2_high is exact
       for |n| <= 1100 (Cody and Waite). */
    const double ln2_high = 0x1.62e42feep-1, ln2_low = 0x1.a39ef35793c76p-33;
    double clamped = x < -708.0 ? -708.0 : x;
    clamped = clamped > 710.0 ? 710.0 : clamped;
    double n = (clamped * log2e + shifter) - shifter; /* round to nearest integer */
    double r = (clamped - n * ln2_high) - n * ln2_low;
    double p = moe_exp_reduced(r);
    /* 2^n in two factors, so that n = 1024 (exp just below DBL_MAX) needs no special
       case: each factor's exponent stays in range. Their integers are read from the low
       mantissa bits of a shifted double (two's complement), which needs only 64-bit
       adds and shifts, all of them SIMD operations. */
    double half = (n * 0.5 + shifter) - shifter;
    double first_shifted = half + shifter, second_shifted = (n - half) + shifter;
    uint64_t first_bits, second_bits;
    memcpy(&first_bits, &first_shifted, sizeof first_bits);
    memcpy(&second_bits, &second_shifted, sizeof second_bits);
    first_bits = (first_bits + 1023u) << 52;
    second_bits = (second_bits + 1023u) << 52;
    double first, second;
    memcpy(&first, &first_bits, sizeof first);
    memcpy(&second, &second_bits, sizeof second);
    double value = p * first * second;
    value = x < -708.0 ? 0.0 : value;
    return x > 710.0 ? HUGE_VAL : value;
}

/* exp(x) for x <= 709 (a softmax's x - max, always <= 0), as moe_exp_lane there: 0 below
   -708 and NaN for NaN; above 709.78 the result is wrong (no overflow handling). Without
   the overflow case 2^n is one factor, n + 1023 in 1..2046, read off the rounding's own
   shifted double, and nothing is clamped: below -708 (and at -inf) the arithmetic gives
   some value or NaN, and the last selection replaces it by 0. About a third fewer
   operations than moe_exp_lane. */
static inline __attribute__((always_inline)) double moe_exp_bounded_lane(double x)
{
    const double log2e = 1.4426950408889634074, shifter = 0x1.8p52;
    const double ln2_high = 0x1.62e42feep-1, ln2_low = 0x1.a39ef35793c76p-33;
    double shifted = x * log2e + shifter;
    double n = shifted - shifter;
    double r = (x - n * ln2_high) - n * ln2_low;
    uint64_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    bits = (bits + 1023u) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    double value = moe_exp_reduced(r) * scale;
    return x < -708.0 ? 0.0 : value;
}

/* log(x) within about one ulp of glibc's log: -inf for 0, NaN below 0 or for NaN, +inf for
   +inf, subnormals included. log(x) = k ln 2 + log(m), m in [sqrt(1/2), sqrt(2)),
   log(m) = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.1716, by its series to s^23
   (truncation below 1e-18). */
static inline __attribute__((always_inline)) double moe_log_lane(double x)
{
    const double ln2_high = 0x1.62e42feep-1, ln2_low = 0x1.a39ef35793c76p-33;
    const double two52 = 0x1p52, scale54 = 0x1p54;
    /* Subnormals are scaled into the normal range first (0 and below: at the end). The
       flag is a double: one comparison used twice as a boolean keeps GCC from
       vectorising. */
    double tiny = x < 0x1p-1022 ? 1.0 : 0.0;
    double scaled = x * (1.0 + tiny * (scale54 - 1.0));
    uint64_t bits;
    memcpy(&bits, &scaled, sizeof bits);
    uint64_t exponent = (bits >> 52) & 0x7ffu;
    uint64_t mantissa_bits = (bits & 0x000fffffffffffffu) | 0x3ff0000000000000u;
    double m;
    memcpy(&m, &mantissa_bits, sizeof m);
    /* exponent as a double: 2^52 + e read back from its bits, minus 2^52 */
    uint64_t exponent_bits = 0x4330000000000000u | exponent;
    double e;
    memcpy(&e, &exponent_bits, sizeof e);
    double k = (e - two52) - 1023.0;
    k -= 54.0 * tiny;
    k = m > 1.4142135623730951 ? k + 1.0 : k;
    m = m > 1.4142135623730951 ? 0.5 * m : m;
    double s = (m - 1.0) / (m + 1.0), z = s * s;
    double p = 1.0 / 23.0;
    p = p * z + 1.0 / 21.0;
    p = p * z + 1.0 / 19.0;
    p = p * z + 1.0 / 17.0;
    p = p * z + 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z + 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z + 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z + 1.0 / 3.0;
    double value = (k * ln2_high + (2.0 * s + (2.0 * s * z * p + k * ln2_low)));
    value = x == 0.0 ? -HUGE_VAL : value;
    value = x > 0x1.fffffffffffffp1023 ? x : value; /* +inf */
    return x >= 0.0 ? value : NAN; /* negative or NaN */
}

#endif
