/*
 * moe_exp_array (declared in common/linalg.h): exp over an array without calls or
 * branches, so the loop runs on SIMD lanes. Built with -fno-trapping-math (this file
 * only, see CMakeLists.txt): without it GCC keeps the clamping comparisons as branches
 * and does not vectorise. Nothing here raises an exception a caller could observe
 * besides inexact: inputs are clamped before the arithmetic.
 */
#include "common/linalg.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln 2 / 2, exp(r) by its Taylor
   polynomial of degree 13 (truncation below 1e-17 relative). Inlined into one generic and
   one AVX2/FMA copy below. */
static inline __attribute__((always_inline)) void exp_lanes(size_t count, const double *in,
                                                            double *out)
{
    const double log2e = 1.4426950408889634074, shifter = 0x1.8p52;
    /* ln 2 in two parts, the first with 32 significant bits so that n * ln2_high is exact
       for |n| <= 1100 (Cody and Waite). */
    const double ln2_high = 0x1.62e42feep-1, ln2_low = 0x1.a39ef35793c76p-33;
#ifdef _OPENMP
#pragma omp simd
#endif
    for (size_t i = 0; i < count; ++i) {
        double x = in[i];
        double clamped = x < -708.0 ? -708.0 : x;
        clamped = clamped > 710.0 ? 710.0 : clamped;
        double n = (clamped * log2e + shifter) - shifter; /* round to nearest integer */
        double r = (clamped - n * ln2_high) - n * ln2_low;
        double p = 1.0 / 6227020800.0;
        p = p * r + 1.0 / 479001600.0;
        p = p * r + 1.0 / 39916800.0;
        p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
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
        out[i] = x > 710.0 ? HUGE_VAL : value;
    }
}

static void exp_generic(size_t count, const double *in, double *out)
{
    exp_lanes(count, in, out);
}

#if defined(__GNUC__) && defined(__x86_64__)
#define MOE_HAVE_HASWELL_COPY 1
__attribute__((target("avx2,fma"))) static void exp_haswell(size_t count, const double *in,
                                                                 double *out)
{
    exp_lanes(count, in, out);
}
#endif

void moe_exp_array(size_t count, const double *in, double *out)
{
#ifdef MOE_HAVE_HASWELL_COPY
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        exp_haswell(count, in, out);
        return;
    }
#endif
    exp_generic(count, in, out);
}

