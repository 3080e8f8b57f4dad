/*
 * moe_exp_array (declared in common/linalg.h): exp over an array without calls or
 * branches, so the loop runs on SIMD lanes. Built with -fno-trapping-math (this file
 * only, see CMakeLists.txt): without it GCC keeps the clamping comparisons as branches
 * and does not vectorise. Nothing here raises an exception a caller could observe
 * besides inexact: inputs are clamped before the arithmetic.
 */
#include "common/linalg.h"
#include "common/exp_lanes.h"
#include "common/simd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The array loops over moe_exp_lane and moe_log_lane (common/exp_lanes.h), inlined into
   one generic copy and copies for AVX2/FMA and AVX-512 below. */
static inline __attribute__((always_inline)) void exp_lanes(size_t count, const double *in,
                                                            double *out)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (size_t i = 0; i < count; ++i)
        out[i] = moe_exp_lane(in[i]);
}

/* Eight lanes where the CPU has AVX-512: twice the AVX2 copy's throughput (measured on a
   Xeon with two 512-bit FMA units; the E-step's exponentials were a tenth of a pass at
   d = 5). The AVX2 and AVX-512 copies do the same operations, so give the same results. */
MOE_SIMD_PROCEDURE(exp_copies, exp_lanes, (size_t count, const double *in, double *out),
                   (count, in, out))

void moe_exp_array(size_t count, const double *in, double *out)
{
    exp_copies(count, in, out);
}

static inline __attribute__((always_inline)) void exp_bounded_lanes(size_t count,
                                                                    const double *in,
                                                                    double *out)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (size_t i = 0; i < count; ++i)
        out[i] = moe_exp_bounded_lane(in[i]);
}

MOE_SIMD_PROCEDURE(exp_bounded_copies, exp_bounded_lanes,
                   (size_t count, const double *in, double *out), (count, in, out))

void moe_exp_bounded_array(size_t count, const double *in, double *out)
{
    exp_bounded_copies(count, in, out);
}

static inline __attribute__((always_inline)) void log_lanes(size_t count, const double *in,
                                                            double *out)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (size_t i = 0; i < count; ++i)
        out[i] = moe_log_lane(in[i]);
}

MOE_SIMD_PROCEDURE(log_copies, log_lanes, (size_t count, const double *in, double *out),
                   (count, in, out))

void moe_log_array(size_t count, const double *in, double *out)
{
    log_copies(count, in, out);
}
