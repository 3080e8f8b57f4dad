/*
 * The small products' kernels (common/small_products.h) against the BLAS path they replace
 * (common/linalg.h's _blas forms): every copy this CPU runs, every p up to 17 and some up to
 * the largest threshold, row counts around the vectors' eight lanes, weights with zeros; and
 * the threshold the products are sent here by, which follows the BLAS's kernels (CTest runs
 * this program under OpenBLAS's own choice and under its forced Haswell kernels). The bound is relative to
 * the same sums of absolute values, so cancellation in a sum does not loosen or break it.
 */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#include "common/linalg.h"
#include "common/small_products.h"
#include "support/runner.h"
#include "support/synthetic.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const moe_small_copy copies[] = {MOE_SMALL_GENERIC, MOE_SMALL_AVX2, MOE_SMALL_AVX512};
static const char *const copy_names[] = {"generic", "avx2", "avx512"};
#define COPIES (sizeof copies / sizeof copies[0])
/* Every p up to 17, then a few up to the largest threshold of the products (the
   predictors' and gradients' inputs). */
static const size_t product_inputs[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                        14, 15, 16, 17, 21, 33, 51, MOE_SMALL_PRODUCT_INPUTS_MOST};
#define PRODUCT_INPUTS (sizeof product_inputs / sizeof product_inputs[0])
static const size_t lengths[] = {1, 3, 7, 8, 9, 15, 17, 61, 456};
#define LENGTHS (sizeof lengths / sizeof lengths[0])

/* |got - expected| within 1e-12 of the sums' scale (the same sums of absolute values). */
static void assert_close(const double *got, const double *expected, const double *scale,
                         size_t count, const char *what, const char *copy, size_t p, size_t length)
{
    /* Check records every assertion it passes: only a failure reaches it. */
    for (size_t index = 0; index < count; ++index)
        if (!(fabs(got[index] - expected[index]) <= 1e-12 * scale[index]))
            ck_abort_msg(
                "%s, %s copy, p = %zu, %zu rows, entry %zu: %.17g against BLAS's %.17g", what,
                copy, p, length, index, got[index], expected[index]);
}

static double *filled(size_t count, test_rng *rng, int absolute)
{
    double *values = malloc((count ? count : 1) * sizeof(double));
    for (size_t index = 0; index < count; ++index) {
        values[index] = test_normal(rng);
        if (absolute)
            values[index] = fabs(values[index]);
    }
    return values;
}

static void absolute_copy(size_t count, const double *from, double *to)
{
    for (size_t index = 0; index < count; ++index)
        to[index] = fabs(from[index]);
}

/* Which path a check runs: copy >= 0 is that entry of `copies`; CHOSEN is linalg.h's
   moe_product_ab / moe_product_abt_add, which pick the kernels or BLAS by shape. */
enum { CHOSEN = -1 };

/* c (rows x length) = a (rows x p) b (p x length): the gate's logits and experts' means. */
static void check_ab(int copy, size_t rows, size_t p, size_t length, test_rng *rng)
{
    double *a = filled(rows * p, rng, 0), *b = filled(p * length, rng, 0);
    double *absolute_a = malloc(rows * p * sizeof(double));
    double *absolute_b = malloc(p * length * sizeof(double));
    double *got = malloc(rows * length * sizeof(double));
    double *expected = malloc(rows * length * sizeof(double));
    double *scale = malloc(rows * length * sizeof(double));
    absolute_copy(rows * p, a, absolute_a);
    absolute_copy(p * length, b, absolute_b);
    if (copy == CHOSEN)
        moe_product_ab(rows, length, p, a, b, got);
    else
        moe_small_product_ab(copies[copy], rows, length, p, a, b, got);
    moe_product_ab_blas(rows, length, p, a, b, expected);
    moe_product_ab_blas(rows, length, p, absolute_a, absolute_b, scale);
    assert_close(got, expected, scale, rows * length, "ab",
                 copy == CHOSEN ? "chosen" : copy_names[copy], p, length);
    free(a);
    free(b);
    free(absolute_a);
    free(absolute_b);
    free(got);
    free(expected);
    free(scale);
}

/* c (rows x p) += a (rows x length) b' (b: p x length): the gradients and right-hand sides,
   added to what c holds. */
static void check_abt_add(int copy, size_t rows, size_t p, size_t length, test_rng *rng)
{
    double *a = filled(rows * length, rng, 0), *b = filled(p * length, rng, 0);
    double *got = filled(rows * p, rng, 0);
    double *expected = malloc(rows * p * sizeof(double));
    double *scale = malloc(rows * p * sizeof(double));
    double *absolute_a = malloc(rows * length * sizeof(double));
    double *absolute_b = malloc(p * length * sizeof(double));
    memcpy(expected, got, rows * p * sizeof(double));
    absolute_copy(rows * p, got, scale);
    absolute_copy(rows * length, a, absolute_a);
    absolute_copy(p * length, b, absolute_b);
    if (copy == CHOSEN)
        moe_product_abt_add(rows, p, length, a, b, got);
    else
        moe_small_product_abt_add(copies[copy], rows, p, length, a, b, got);
    moe_product_abt_add_blas(rows, p, length, a, b, expected);
    moe_product_abt_add_blas(rows, p, length, absolute_a, absolute_b, scale);
    assert_close(got, expected, scale, rows * p, "abt_add",
                 copy == CHOSEN ? "chosen" : copy_names[copy], p, length);
    free(a);
    free(b);
    free(got);
    free(expected);
    free(scale);
    free(absolute_a);
    free(absolute_b);
}

START_TEST(product_ab_matches_blas)
{
    const size_t row_counts[] = {1, 2, 5, 6, 7, 13, 16, 64};
    test_rng rng = {71};
    for (size_t copy = 0; copy < COPIES; ++copy) {
        if (!moe_small_copy_available(copies[copy]))
            continue;
        for (size_t r = 0; r < sizeof row_counts / sizeof row_counts[0]; ++r)
            for (size_t q = 0; q < PRODUCT_INPUTS; ++q)
                for (size_t s = 0; s < LENGTHS; ++s)
                    check_ab((int)copy, row_counts[r], product_inputs[q], lengths[s], &rng);
    }
}
END_TEST

START_TEST(product_abt_add_matches_blas)
{
    const size_t row_counts[] = {1, 2, 3, 4, 6, 7, 16};
    test_rng rng = {73};
    for (size_t copy = 0; copy < COPIES; ++copy) {
        if (!moe_small_copy_available(copies[copy]))
            continue;
        for (size_t r = 0; r < sizeof row_counts / sizeof row_counts[0]; ++r)
            for (size_t q = 0; q < PRODUCT_INPUTS; ++q)
                for (size_t s = 0; s < LENGTHS; ++s)
                    check_abt_add((int)copy, row_counts[r], product_inputs[q], lengths[s], &rng);
    }
}
END_TEST

/* The upper triangles of count weighted Grams of p columns, weights with zeros, added to
   what the Grams hold; with and without a leading column of ones (an intercept). Every p
   up to 17, then a few up to the threshold. */
static const size_t gram_inputs[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                     13, 14, 15, 16, 17, 21, 33, 51, MOE_SMALL_GRAM_INPUTS};
#define GRAM_INPUTS (sizeof gram_inputs / sizeof gram_inputs[0])

START_TEST(grams_match_blas)
{
    const size_t counts[] = {1, 3, 6, 10, 13};
    test_rng rng = {79};
    for (size_t copy = 0; copy < COPIES; ++copy) {
        if (!moe_small_copy_available(copies[copy]))
            continue;
        for (size_t g = 0; g < sizeof counts / sizeof counts[0]; ++g)
            for (size_t q = 0; q < GRAM_INPUTS; ++q)
                for (size_t s = 0; s < LENGTHS; ++s) {
                    size_t p = gram_inputs[q], count = counts[g], length = lengths[s];
                    size_t size = count * p * p;
                    if (p > 17 && (length > 61 || count > 6))
                        continue; /* the large p on short blocks only: a fast test */
                    double *columns = filled(p * length, &rng, 0);
                    double *weights = filled(count * length, &rng, 1);
                    for (size_t index = 0; index < count * length; index += 3)
                        weights[index] = 0.0;
                    if ((p + s) % 2 == 0)
                        for (size_t i = 0; i < length; ++i)
                            columns[i] = 1.0;
                    double *scratch =
                        malloc(moe_weighted_grams_scratch(length, p, count) * sizeof(double));
                    double *absolute = malloc(p * length * sizeof(double));
                    double *got = filled(size, &rng, 0);
                    double *expected = malloc(size * sizeof(double));
                    double *scale = malloc(size * sizeof(double));
                    memcpy(expected, got, size * sizeof(double));
                    absolute_copy(size, got, scale);
                    absolute_copy(p * length, columns, absolute);
                    moe_small_grams_add(copies[copy], length, p, count, columns, weights, got);
                    moe_weighted_grams_add_columns_blas(length, p, count, columns, weights,
                                                        scratch, expected);
                    moe_weighted_grams_add_columns_blas(length, p, count, absolute, weights,
                                                        scratch, scale);
                    for (size_t c = 0; c < count; ++c)
                        for (size_t a = 0; a < p; ++a)
                            for (size_t b = a; b < p; ++b) {
                                size_t at = c * p * p + a * p + b;
                                assert_close(got + at, expected + at, scale + at, 1, "grams",
                                             copy_names[copy], p, length);
                            }
                    free(columns);
                    free(weights);
                    free(scratch);
                    free(absolute);
                    free(got);
                    free(expected);
                    free(scale);
                }
    }
}
END_TEST

/* The library runs the widest copy the CPU has, and the generic one always exists. */
START_TEST(best_copy_is_available)
{
    ck_assert(moe_small_copy_available(MOE_SMALL_GENERIC));
    ck_assert(moe_small_copy_available(moe_small_copy_best()));
    for (size_t copy = 0; copy < COPIES; ++copy)
        if (moe_small_copy_available(copies[copy]))
            ck_assert_int_ge(moe_small_copy_best(), copies[copy]);
}
END_TEST

#if defined(__GNUC__) && defined(__ELF__) && defined(__x86_64__)
char *openblas_get_corename(void) __attribute__((weak));
#define TEST_CAN_ASK_OPENBLAS 1
#endif

/* The kernels OpenBLAS runs, or NULL when the BLAS is not OpenBLAS (or not asked). */
static const char *blas_kernels(void)
{
#ifdef TEST_CAN_ASK_OPENBLAS
    if (openblas_get_corename)
        return openblas_get_corename();
#endif
    return NULL;
}

/* Above p = 16 the products come here only where BLAS has no small-matrix kernels and the
   CPU runs a wide copy: under OpenBLAS's Haswell or Zen kernels, never under its AVX-512
   ones (which beat these above p = 16), nor under a BLAS that cannot be asked. */
START_TEST(threshold_follows_blas_kernels)
{
    size_t threshold = moe_small_product_inputs();
    const char *kernels = blas_kernels();
    int wide = moe_small_copy_best() != MOE_SMALL_GENERIC;
    if (!kernels || !*kernels || !strcasecmp(kernels, "Unknown") || !wide ||
        !strcasecmp(kernels, "SkylakeX") || !strcasecmp(kernels, "Cooperlake") ||
        !strcasecmp(kernels, "SapphireRapids"))
        ck_assert_uint_eq(threshold, MOE_SMALL_PRODUCT_INPUTS);
    else
        ck_assert_uint_eq(threshold, MOE_SMALL_PRODUCT_INPUTS_MOST);
    if (kernels && (!strcasecmp(kernels, "Haswell") || !strcasecmp(kernels, "Zen")) && wide)
        ck_assert_uint_eq(threshold, MOE_SMALL_PRODUCT_INPUTS_MOST);
    /* Fixed for the process: the same products at the same shapes every call. */
    for (int call = 0; call < 100; ++call)
        ck_assert_uint_eq(moe_small_product_inputs(), threshold);
}
END_TEST

/* Whatever the threshold, moe_product_ab and moe_product_abt_add give BLAS's products at
   p = 21 and 33 (the first shapes it moves) within the kernels' bound. */
START_TEST(products_above_sixteen_match_blas)
{
    const size_t inputs[] = {21, 33};
    test_rng rng = {83};
    for (size_t q = 0; q < 2; ++q) {
        check_ab(CHOSEN, 8, inputs[q], 456, &rng);
        check_abt_add(CHOSEN, 8, inputs[q], 456, &rng);
    }
}
END_TEST

static Suite *small_products_suite(void)
{
    Suite *suite = suite_create("small_products");
    TCase *core = tcase_create("core");
    tcase_add_test(core, best_copy_is_available);
    tcase_add_test(core, threshold_follows_blas_kernels);
    tcase_add_test(core, products_above_sixteen_match_blas);
    tcase_add_test(core, product_ab_matches_blas);
    tcase_add_test(core, product_abt_add_matches_blas);
    tcase_add_test(core, grams_match_blas);
    suite_add_tcase(suite, core);
    return suite;
}

int main(void)
{
    return run_suite(small_products_suite());
}
