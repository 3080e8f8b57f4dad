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

/* Eight lanes where the CPU has AVX-512: twice the AVX2 copy's throughput (measured on a
   Xeon with two 512-bit FMA units; the E-step's exponentials were a tenth of a pass at
   d = 5). The same operations as the AVX2 copy, so the same results. */
__attribute__((target("avx512f,avx512dq,avx2,fma"))) static void
exp_avx512(size_t count, const double *in, double *out)
{
    exp_lanes(count, in, out);
}

static int have_avx512(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

void moe_exp_array(size_t count, const double *in, double *out)
{
#ifdef MOE_HAVE_HASWELL_COPY
    if (have_avx512()) {
        exp_avx512(count, in, out);
        return;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        exp_haswell(count, in, out);
        return;
    }
#endif
    exp_generic(count, in, out);
}


/* log(x) = k ln 2 + log(m), m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s) with
   s = (m - 1) / (m + 1), |s| <= 0.1716, by its series to s^23 (truncation below 1e-18). */
static inline __attribute__((always_inline)) void log_lanes(size_t count, const double *in,
                                                            double *out)
{
    const double ln2_high = 0x1.62e42feep-1, ln2_low = 0x1.a39ef35793c76p-33;
    const double two52 = 0x1p52, scale54 = 0x1p54;
#ifdef _OPENMP
#pragma omp simd
#endif
    for (size_t i = 0; i < count; ++i) {
        double x = in[i];
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
        out[i] = x >= 0.0 ? value : NAN; /* negative or NaN */
    }
}

static void log_generic(size_t count, const double *in, double *out)
{
    log_lanes(count, in, out);
}

#ifdef MOE_HAVE_HASWELL_COPY
__attribute__((target("avx2,fma"))) static void log_haswell(size_t count, const double *in,
                                                             double *out)
{
    log_lanes(count, in, out);
}

__attribute__((target("avx512f,avx512dq,avx2,fma"))) static void
log_avx512(size_t count, const double *in, double *out)
{
    log_lanes(count, in, out);
}
#endif

void moe_log_array(size_t count, const double *in, double *out)
{
#ifdef MOE_HAVE_HASWELL_COPY
    if (have_avx512()) {
        log_avx512(count, in, out);
        return;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        log_haswell(count, in, out);
        return;
    }
#endif
    log_generic(count, in, out);
}
