/*
 * Per-row arithmetic on blocks stored by columns: a block of `rows` rows with `count`
 * values per row is count arrays of `rows` values (row-major count x rows), so that every
 * operation is one loop over contiguous rows and runs on SIMD lanes whatever the count.
 * The E-step's pass keeps its blocks this way (pass/posterior.c): with K = 3 experts a
 * loop over k inside every row ran at one value per instruction.
 *
 * The bodies are inline so that a caller compiled for AVX2 or AVX-512 (the pass's copies,
 * pass/posterior_block.c) gets them for its target. No body reassociates a sum, so every
 * copy computes the same values.
 */
#ifndef MOE_LIB_COLUMNS_H
#define MOE_LIB_COLUMNS_H

#include "common/linalg.h"

#include <math.h>
#include <stddef.h>

/* Lanes of a block reduction: sums of rows i with the same i % MOE_LANES are kept apart
   and added in a fixed order at the end, so the reduction vectorises and its result does
   not depend on the vector width. */
#define MOE_LANES 8

static inline double moe_lanes_total(const double *lanes)
{
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
           ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

/* sum_i a[i] * b[i] over a block, by lanes. */
static inline __attribute__((always_inline)) double moe_columns_dot(size_t rows, const double *a,
                                                                    const double *b)
{
    double lanes[MOE_LANES] = {0.0};
    size_t i = 0;
    for (; i + MOE_LANES <= rows; i += MOE_LANES)
        for (size_t j = 0; j < MOE_LANES; ++j)
            lanes[j] += a[i + j] * b[i + j];
    for (size_t j = 0; i + j < rows; ++j)
        lanes[j] += a[i + j] * b[i + j];
    return moe_lanes_total(lanes);
}

/* sum_i a[i] over a block, by lanes. */
static inline __attribute__((always_inline)) double moe_columns_sum(size_t rows, const double *a)
{
    double lanes[MOE_LANES] = {0.0};
    size_t i = 0;
    for (; i + MOE_LANES <= rows; i += MOE_LANES)
        for (size_t j = 0; j < MOE_LANES; ++j)
            lanes[j] += a[i + j];
    for (size_t j = 0; i + j < rows; ++j)
        lanes[j] += a[i + j];
    return moe_lanes_total(lanes);
}

/* sums[c] += sum_i a[c rows + i] for the count arrays of a block by columns (count x rows),
   in one pass, each by lanes as moe_columns_sum. */
static inline __attribute__((always_inline)) void
moe_columns_sums(size_t rows, size_t count, const double *a, double *sums)
{
    enum { MOST = 16 };
    double lanes[MOST][MOE_LANES] = {{0.0}};
    for (size_t first = 0; first < count; first += MOST) {
        size_t arrays = count - first < MOST ? count - first : MOST;
        const double *base = a + first * rows;
        size_t i = 0;
        for (; i + MOE_LANES <= rows; i += MOE_LANES)
            for (size_t c = 0; c < arrays; ++c)
                for (size_t j = 0; j < MOE_LANES; ++j)
                    lanes[c][j] += base[c * rows + i + j];
        for (size_t c = 0; c < arrays; ++c)
            for (size_t j = 0; i + j < rows; ++j)
                lanes[c][j] += base[c * rows + i + j];
        for (size_t c = 0; c < arrays; ++c) {
            sums[first + c] += moe_lanes_total(lanes[c]);
            for (size_t j = 0; j < MOE_LANES; ++j)
                lanes[c][j] = 0.0;
        }
    }
}

/* The softmax of one row whose largest value is not finite (every value -inf, or +inf or
   NaN among them), read across the columns at stride `rows`: moe_softmax_with_log's
   answer for that row. Rare: the vector path's shift would give NaN there. values may be
   log_proba. */
static inline double moe_softmax_column_row(size_t rows, size_t count, size_t i,
                                            const double *values, double *log_proba,
                                            double *proba)
{
    double largest = -INFINITY;
    for (size_t k = 0; k < count; ++k)
        if (values[k * rows + i] > largest)
            largest = values[k * rows + i];
    if (!isfinite(largest)) {
        for (size_t k = 0; k < count; ++k) {
            double shifted = values[k * rows + i] - largest;
            log_proba[k * rows + i] = shifted;
            proba[k * rows + i] = moe_exp(shifted);
        }
        return largest;
    }
    double sum = 0.0;
    for (size_t k = 0; k < count; ++k)
        sum += proba[k * rows + i] = moe_exp(values[k * rows + i] - largest);
    double log_sum = log(sum), inverse = 1.0 / sum;
    for (size_t k = 0; k < count; ++k) {
        log_proba[k * rows + i] = (values[k * rows + i] - largest) - log_sum;
        proba[k * rows + i] *= inverse;
    }
    return largest + log_sum;
}

/*
 * The softmax of every row of a block by columns (count x rows): log_proba receives the
 * log-softmax (it may be values itself), proba the softmax, lse[i] (if not NULL) the row's
 * log-sum-exp. The same order of operations as moe_softmax_with_log: the largest value is
 * subtracted first and the logarithm of the sum second. scratch holds 3 rows doubles.
 * Returns nonzero when some row's largest value was not finite (handled row by row).
 */
static inline __attribute__((always_inline)) int
moe_softmax_columns(size_t rows, size_t count, const double *values, double *log_proba,
                    double *proba, double *lse, double *scratch)
{
    double *largest = scratch, *sums = scratch + rows, *logs = scratch + 2 * rows;
    for (size_t i = 0; i < rows; ++i)
        largest[i] = values[i];
    for (size_t k = 1; k < count; ++k) {
        const double *v = values + k * rows;
        for (size_t i = 0; i < rows; ++i)
            largest[i] = v[i] > largest[i] ? v[i] : largest[i];
    }
    /* Any row whose largest value is +-inf or NaN: its shift is 0 here and it is redone. */
    double infinite = 0.0;
    for (size_t i = 0; i < rows; ++i)
        infinite += largest[i] - largest[i] == 0.0 ? 0.0 : 1.0;
    for (size_t k = 0; k < count; ++k) {
        const double *v = values + k * rows;
        double *e = proba + k * rows;
        for (size_t i = 0; i < rows; ++i)
            e[i] = v[i] - (largest[i] - largest[i] == 0.0 ? largest[i] : 0.0);
    }
    /* Never above 0, except in the rows redone below. */
    moe_exp_bounded_array(rows * count, proba, proba);
    for (size_t i = 0; i < rows; ++i)
        sums[i] = proba[i];
    for (size_t k = 1; k < count; ++k) {
        const double *e = proba + k * rows;
        for (size_t i = 0; i < rows; ++i)
            sums[i] += e[i];
    }
    moe_log_array(rows, sums, logs);
    for (size_t i = 0; i < rows; ++i)
        sums[i] = 1.0 / sums[i];
    for (size_t k = 0; k < count; ++k) {
        const double *v = values + k * rows;
        double *l = log_proba + k * rows, *e = proba + k * rows;
        for (size_t i = 0; i < rows; ++i) {
            /* A row redone below keeps its values here (log_proba may be values). */
            l[i] = largest[i] - largest[i] == 0.0 ? (v[i] - largest[i]) - logs[i] : v[i];
            e[i] *= sums[i];
        }
    }
    if (lse != NULL)
        for (size_t i = 0; i < rows; ++i)
            lse[i] = largest[i] + logs[i];
    if (infinite == 0.0)
        return 0;
    for (size_t i = 0; i < rows; ++i)
        if (!isfinite(largest[i])) {
            double total = moe_softmax_column_row(rows, count, i, log_proba, log_proba, proba);
            if (lse != NULL)
                lse[i] = total;
        }
    return 1;
}

#endif
