/* White-box tests of the shared kernels: log-sum-exp, weighted Gram, SPD solve, gate Newton. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/columns.h"
#include "common/data.h"
#include "common/exp_lanes.h"
#include "common/linalg.h"
#include "common/rng.h"
#include "pass/gate.h"
#include "model/model_impl.h"
#include "support/synthetic.h"
#include "support/runner.h"

START_TEST(log_sum_exp_is_stable)
{
    double big[3] = {1000.0, 1000.0, -INFINITY};
    ck_assert_double_eq_tol(moe_log_sum_exp(big, 3), 1000.0 + log(2.0), 1e-12);
    double tiny[2] = {-1000.0, -1001.0};
    ck_assert_double_eq_tol(moe_log_sum_exp(tiny, 2), -1000.0 + log1p(exp(-1.0)), 1e-12);
    double none[2] = {-INFINITY, -INFINITY};
    ck_assert(isinf(moe_log_sum_exp(none, 2)) && moe_log_sum_exp(none, 2) < 0);
    double values[3] = {1.0, 2.0, 3.0};
    double total = moe_log_softmax(values, 3);
    ck_assert_double_eq_tol(exp(values[0]) + exp(values[1]) + exp(values[2]), 1.0, 1e-15);
    ck_assert_double_eq_tol(total, log(exp(1.0) + exp(2.0) + exp(3.0)), 1e-14);
}
END_TEST

/* The array exp against glibc's: within 2 ulp over the whole range, and the edges of moe_exp. */
START_TEST(exp_array_matches_libm)
{
    enum { COUNT = 200003 };
    double *in = malloc(COUNT * sizeof(double)), *out = malloc(COUNT * sizeof(double));
    test_rng rng = {7};
    for (size_t i = 0; i < COUNT; ++i) /* uniform over [-708, 709.7], plus small values */
        in[i] = i % 3 == 0 ? -708.0 + 1417.7 * test_uniform(&rng)
                           : (test_uniform(&rng) - 0.5) * (i % 3 == 1 ? 2.0 : 1e-6);
    moe_exp_array(COUNT, in, out);
    double worst = 0.0;
    for (size_t i = 0; i < COUNT; ++i) {
        double expected = exp(in[i]);
        double error = fabs(out[i] - expected) / expected;
        if (error > worst)
            worst = error;
    }
    ck_assert_msg(worst <= 2.0 * 2.220446049250313e-16, "worst relative error %g", worst);
    double edges[] = {-INFINITY, -1e300, -745.2, -708.5, 0.0, -0.0, 709.78, 709.79, 1e300,
                      INFINITY, NAN};
    double results[11];
    moe_exp_array(11, edges, results); /* in place would work too */
    ck_assert(results[0] == 0.0 && results[1] == 0.0 && results[2] == 0.0 && results[3] == 0.0);
    ck_assert(results[4] == 1.0 && results[5] == 1.0);
    ck_assert(isfinite(results[6]) && fabs(results[6] / exp(709.78) - 1.0) < 1e-15);
    ck_assert(isinf(results[7]) && isinf(results[8]) && isinf(results[9]));
    ck_assert(isnan(results[10]));
    free(in);
    free(out);
}
END_TEST

/* The softmax's exp, for arguments up to 709 (pass/posterior_block.c): within 2 ulp of
   glibc's, exactly 1 at 0, 0 below -708 and at -inf, NaN for NaN. */
START_TEST(bounded_exp_matches_libm)
{
    test_rng rng = {8};
    double worst = 0.0;
    for (size_t i = 0; i < 300000; ++i) {
        double x = i % 3 == 0 ? -708.0 + 1417.0 * test_uniform(&rng)
                   : i % 3 == 1 ? -40.0 * test_uniform(&rng)
                                : -1e-6 * test_uniform(&rng);
        double expected = exp(x), error = fabs(moe_exp_bounded_lane(x) - expected) / expected;
        worst = error > worst ? error : worst;
    }
    ck_assert_msg(worst <= 2.0 * 2.220446049250313e-16, "worst relative error %g", worst);
    ck_assert(moe_exp_bounded_lane(0.0) == 1.0 && moe_exp_bounded_lane(-0.0) == 1.0);
    ck_assert(moe_exp_bounded_lane(-708.5) == 0.0 && moe_exp_bounded_lane(-1e300) == 0.0);
    ck_assert(moe_exp_bounded_lane(-INFINITY) == 0.0);
    ck_assert(isnan(moe_exp_bounded_lane(NAN)));
    ck_assert(fabs(moe_exp_bounded_lane(709.0) / exp(709.0) - 1.0) < 1e-15);
}
END_TEST

/* The array log against glibc's: within 2 ulp from subnormals to DBL_MAX, and the edges. */
START_TEST(log_array_matches_libm)
{
    enum { COUNT = 200003 };
    double *in = malloc(COUNT * sizeof(double)), *out = malloc(COUNT * sizeof(double));
    test_rng rng = {9};
    for (size_t i = 0; i < COUNT; ++i) { /* log-uniform over the whole range, and near 1 */
        double u = test_uniform(&rng);
        in[i] = i % 4 == 0 ? 1.0 + (u - 0.5) * 1e-3 : exp((u - 0.5) * 2.0 * 709.0);
    }
    in[0] = 4.9406564584124654e-324; /* the smallest subnormal */
    in[1] = 2.2250738585072009e-308; /* the largest subnormal */
    in[2] = 1.7976931348623157e308;
    moe_log_array(COUNT, in, out);
    double worst = 0.0;
    for (size_t i = 0; i < COUNT; ++i) {
        double expected = log(in[i]);
        double error = fabs(out[i] - expected) / fmax(fabs(expected), 1e-300);
        /* Near x = 1 the result is tiny: compare in absolute terms there. */
        if (fabs(expected) < 1e-3)
            error = fabs(out[i] - expected) / 1e-3;
        if (error > worst)
            worst = error;
    }
    ck_assert_msg(worst <= 2.0 * 2.220446049250313e-16, "worst relative error %g", worst);
    double edges[] = {0.0, -0.0, -1.0, INFINITY, -INFINITY, NAN, 1.0};
    double results[7];
    moe_log_array(7, edges, results);
    ck_assert(isinf(results[0]) && results[0] < 0 && isinf(results[1]) && results[1] < 0);
    ck_assert(isnan(results[2]) && isnan(results[4]) && isnan(results[5]));
    ck_assert(isinf(results[3]) && results[3] > 0);
    ck_assert(results[6] == 0.0);
    free(in);
    free(out);
}
END_TEST

/* Rows of softmax with the log: the same as the one-row kernel, including rows of -inf. */
START_TEST(softmax_rows_match_single_rows)
{
    enum { ROWS = 9, COUNT = 4 };
    double values[ROWS * COUNT], copy[ROWS * COUNT], proba[ROWS * COUNT], lse[ROWS];
    test_rng rng = {11};
    for (size_t i = 0; i < ROWS * COUNT; ++i)
        values[i] = 30.0 * test_normal(&rng);
    values[1 * COUNT + 2] = -INFINITY;                  /* one impossible class */
    for (size_t k = 0; k < COUNT; ++k)
        values[4 * COUNT + k] = -INFINITY;              /* an impossible row */
    values[6 * COUNT + 0] = -800.0;                     /* an underflowing class */
    memcpy(copy, values, sizeof values);
    moe_softmax_rows(ROWS, COUNT, values, proba, lse);
    for (size_t i = 0; i < ROWS; ++i) {
        double single[COUNT];
        double total = moe_softmax_with_log(copy + i * COUNT, COUNT, single);
        ck_assert(total == lse[i] || (isnan(total) && isnan(lse[i])) ||
                  fabs(total - lse[i]) <= 1e-15 * fabs(total));
        for (size_t k = 0; k < COUNT; ++k) {
            double a = proba[i * COUNT + k], b = single[k];
            ck_assert_msg(a == b || fabs(a - b) <= 4e-16 || (isnan(a) && isnan(b)),
                          "row %zu class %zu: %g vs %g", i, k, a, b);
            double la = values[i * COUNT + k], lb = copy[i * COUNT + k];
            ck_assert(la == lb || fabs(la - lb) <= 1e-14 * (1.0 + fabs(lb)) ||
                      (isnan(la) && isnan(lb)));
        }
    }
}
END_TEST

START_TEST(weighted_gram_matches_naive_sum)
{
    const size_t rows = 37, p = 5;
    double block[37 * 5], weights[37], scratch[37 * 5], gram[25] = {0}, naive[25] = {0};
    test_rng rng = {3};
    for (size_t i = 0; i < rows; ++i) {
        weights[i] = test_uniform(&rng) * (i % 7 ? 1.0 : 0.0);
        for (size_t j = 0; j < p; ++j)
            block[i * p + j] = test_normal(&rng);
        for (size_t a = 0; a < p; ++a)
            for (size_t b = 0; b < p; ++b)
                naive[a * p + b] += weights[i] * block[i * p + a] * block[i * p + b];
    }
    moe_weighted_gram_add(rows, p, block, weights, scratch, gram);
    moe_symmetrize_upper(p, gram);
    for (size_t a = 0; a < p * p; ++a)
        ck_assert_double_eq_tol(gram[a], naive[a], 1e-12);
}
END_TEST

/* The block by columns is the block by rows transposed, for every d the loader has a copy
   for and one above, with a leading dimension above d and row counts not a multiple of 8. */
START_TEST(columns_are_the_block_transposed)
{
    enum { ROWS = 45, LDX = 13 };
    double X[ROWS * LDX], block[ROWS * 12], columns[ROWS * 12];
    test_rng rng = {21};
    for (size_t a = 0; a < ROWS * LDX; ++a)
        X[a] = test_normal(&rng);
    for (size_t d = 0; d <= 11; ++d)
        for (int intercept = 0; intercept <= 1; ++intercept) {
            if (d == 0 && !intercept)
                continue;
            moe_data data = {ROWS, d, LDX, intercept, X, NULL, NULL};
            size_t p = moe_data_inputs(&data);
            for (size_t start = 0; start <= 7; start += 7) {
                size_t rows = ROWS - start - (d % 3);
                moe_data_load_block(&data, start, rows, block);
                moe_data_load_columns(&data, start, rows, columns);
                for (size_t i = 0; i < rows; ++i)
                    for (size_t a = 0; a < p; ++a)
                        ck_assert_msg(columns[a * rows + i] == block[i * p + a],
                                      "d = %zu, row %zu, input %zu", d, i, a);
            }
        }
}
END_TEST

/* naive += the `count` weighted Grams of `columns` (rows x p by columns), entry by entry. */
static void add_naive_grams(size_t rows, size_t p, size_t count, const double *columns,
                            const double *weights, double *naive)
{
    for (size_t c = 0; c < count; ++c)
        for (size_t i = 0; i < rows; ++i)
            for (size_t a = 0; a < p; ++a)
                for (size_t b = 0; b < p; ++b)
                    naive[c * p * p + a * p + b] +=
                        weights[c * rows + i] * columns[a * rows + i] * columns[b * rows + i];
}

/* A random block by columns (`rows` x p) and `count` columns of weights (of either sign,
   or not negative with zeros): the weighted Grams' upper triangles through
   moe_weighted_grams_add_columns (blas 0) or its BLAS path (blas 1) against naive sums. */
static void expect_naive_grams(size_t rows, size_t p, size_t count, int signed_weights,
                               int blas, uint64_t seed, double tolerance)
{
    double *columns = malloc(rows * p * sizeof(double));
    double *weights = malloc(count * rows * sizeof(double));
    double *scratch = malloc(moe_weighted_grams_scratch(rows, p, count) * sizeof(double));
    double *grams = calloc(count * p * p, sizeof(double));
    double *naive = calloc(count * p * p, sizeof(double));
    test_rng rng = {seed};
    for (size_t a = 0; a < rows * p; ++a)
        columns[a] = test_normal(&rng);
    for (size_t a = 0; a < count * rows; ++a)
        weights[a] = signed_weights ? test_normal(&rng) : a % 9 == 0 ? 0.0 : test_uniform(&rng);
    add_naive_grams(rows, p, count, columns, weights, naive);
    if (blas)
        moe_weighted_grams_add_columns_blas(rows, p, count, columns, weights, scratch, grams);
    else
        moe_weighted_grams_add_columns(rows, p, count, columns, weights, scratch, grams);
    for (size_t c = 0; c < count; ++c)
        for (size_t a = 0; a < p; ++a)
            for (size_t b = a; b < p; ++b) {
                size_t at = c * p * p + a * p + b;
                if (!(fabs(grams[at] - naive[at]) <= tolerance))
                    ck_abort_msg("p = %zu, blas %d, gram %zu (%zu, %zu): %g, naive %g", p, blas,
                                 c, a, b, grams[at], naive[at]);
            }
    free(columns);
    free(weights);
    free(scratch);
    free(grams);
    free(naive);
}

/* Weights of either sign (the observed information's): on the small products' kernels,
   on the BLAS path (shared products up to 16 inputs, a product with the weighted columns
   above, where a rank-k update would take square roots) and through the dispatch above
   MOE_SMALL_GRAM_INPUTS. */
START_TEST(weighted_grams_with_signed_weights)
{
    const size_t sizes[] = {6, 16, 23, 70};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int blas = 0; blas < 2; ++blas)
            expect_naive_grams(97, sizes[s], 3, 1, blas, 71 + s, 1e-10);
}
END_TEST

/* Weights not negative, some zero, on the dispatch's both paths (one shared product at
   small p, rank-k updates above). */
START_TEST(weighted_grams_by_columns_match_naive_sums)
{
    const size_t sizes[] = {1, 6, 16, 17, 23, 6};
    const size_t count = sizeof sizes / sizeof sizes[0];
    for (size_t s = 0; s < count; ++s)
        expect_naive_grams(s + 1 < count ? 61 : 411, sizes[s], 4, 0, 0, 31 + s, 1e-11);
}
END_TEST

/* Products large enough to be cut into pieces (above 65536 x 4 multiply-adds, lengths that
   are not multiples of the pieces) equal the naive sums, and the adding ones add. */
static double entry(size_t index, size_t salt)
{
    return (double)((index * 7919 + salt * 104729) % 1009) / 1009.0 - 0.5;
}

START_TEST(block_products_in_pieces_match_naive)
{
    /* 67 x 37 x 509 and the like: 1.26e6 multiply-adds, five pieces or more. */
    const size_t rows = 509, columns = 67, inner = 37;
    size_t largest = rows * columns > rows * inner ? rows * columns : rows * inner;
    double *a = malloc(largest * sizeof(double)), *b = malloc(largest * sizeof(double));
    double *c = malloc(largest * sizeof(double)), *naive = malloc(largest * sizeof(double));
    for (int product = 0; product < 4; ++product) {
        /* abt: c (rows x columns) = a (rows x inner) b' (b: columns x inner)
           atb_add: c (columns x inner) += a' (a: rows x columns) b (rows x inner)
           ab: c (columns x rows) = a (columns x inner) b (inner x rows)
           abt_add: c (columns x inner) += a (columns x rows) b' (b: inner x rows) */
        size_t a_size = product == 0 ? rows * inner : product == 2 ? columns * inner : rows * columns;
        size_t b_size = product == 0 ? columns * inner : product == 1 ? rows * inner : inner * rows;
        size_t c_size = product == 0 ? rows * columns : product == 2 ? columns * rows : columns * inner;
        for (size_t index = 0; index < a_size; ++index)
            a[index] = entry(index, 1);
        for (size_t index = 0; index < b_size; ++index)
            b[index] = entry(index, 2);
        for (size_t index = 0; index < c_size; ++index)
            c[index] = naive[index] = product % 2 ? entry(index, 3) : 0.0;
        if (product == 0) {
            moe_product_abt(rows, columns, inner, a, b, c);
            for (size_t i = 0; i < rows; ++i)
                for (size_t j = 0; j < columns; ++j)
                    for (size_t k = 0; k < inner; ++k)
                        naive[i * columns + j] += a[i * inner + k] * b[j * inner + k];
        } else if (product == 1) {
            moe_product_atb_add(rows, columns, inner, a, b, c);
            for (size_t i = 0; i < rows; ++i)
                for (size_t j = 0; j < columns; ++j)
                    for (size_t k = 0; k < inner; ++k)
                        naive[j * inner + k] += a[i * columns + j] * b[i * inner + k];
        } else if (product == 2) {
            moe_product_ab(columns, rows, inner, a, b, c);
            for (size_t j = 0; j < columns; ++j)
                for (size_t i = 0; i < rows; ++i)
                    for (size_t k = 0; k < inner; ++k)
                        naive[j * rows + i] += a[j * inner + k] * b[k * rows + i];
        } else {
            moe_product_abt_add(columns, inner, rows, a, b, c);
            for (size_t j = 0; j < columns; ++j)
                for (size_t k = 0; k < inner; ++k)
                    for (size_t i = 0; i < rows; ++i)
                        naive[j * inner + k] += a[j * rows + i] * b[k * rows + i];
        }
        for (size_t index = 0; index < c_size; ++index)
            ck_assert_double_eq_tol(c[index], naive[index], 1e-11);
    }
    free(a);
    free(b);
    free(c);
    free(naive);

    /* The shared Gram product at p = 16 with 36 weight columns: 136 x 36 x 509. */
    size_t p = 16, count = 36, length = 509;
    double *block = malloc(p * length * sizeof(double));
    double *weights = malloc(count * length * sizeof(double));
    double *scratch = malloc(moe_weighted_grams_scratch(length, p, count) * sizeof(double));
    double *grams = calloc(count * p * p, sizeof(double));
    for (size_t index = 0; index < p * length; ++index)
        block[index] = entry(index, 4);
    for (size_t index = 0; index < count * length; ++index)
        weights[index] = entry(index, 5) + 0.5;
    moe_weighted_grams_add_columns(length, p, count, block, weights, scratch, grams);
    for (size_t g = 0; g < count; ++g)
        for (size_t x = 0; x < p; ++x)
            for (size_t y = x; y < p; ++y) {
                double sum = 0.0;
                for (size_t i = 0; i < length; ++i)
                    sum += weights[g * length + i] * block[x * length + i] * block[y * length + i];
                ck_assert_double_eq_tol(grams[g * p * p + x * p + y], sum, 1e-11);
            }
    free(block);
    free(weights);
    free(scratch);
    free(grams);
}
END_TEST

/* With the first column all ones and the columns kept in the slot the function offers, the
   Grams are the same naive sums, the columns come back intact, and the slot exists only
   where it applies (an intercept and the shared product). */
START_TEST(weighted_grams_from_the_columns_slot)
{
    const size_t sizes[] = {1, 2, 6, 16};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        size_t rows = 203, p = sizes[s], count = 5;
        double *weights = malloc(count * rows * sizeof(double));
        double *scratch = malloc(moe_weighted_grams_scratch(rows, p, count) * sizeof(double));
        double *copy = malloc(rows * p * sizeof(double));
        double *grams = calloc(count * p * p, sizeof(double));
        double *naive = calloc(count * p * p, sizeof(double));
        ck_assert_ptr_null(moe_weighted_grams_columns_slot(rows, p, 0, scratch));
        double *columns = moe_weighted_grams_columns_slot(rows, p, 1, scratch);
        ck_assert_ptr_eq(columns, scratch);
        test_rng rng = {57 + s};
        for (size_t i = 0; i < rows; ++i)
            columns[i] = 1.0;
        for (size_t a = rows; a < rows * p; ++a)
            columns[a] = test_normal(&rng);
        for (size_t a = 0; a < count * rows; ++a)
            weights[a] = a % 7 == 0 ? 0.0 : test_uniform(&rng);
        memcpy(copy, columns, rows * p * sizeof(double));
        add_naive_grams(rows, p, count, copy, weights, naive);
        moe_weighted_grams_add_columns(rows, p, count, columns, weights, scratch, grams);
        ck_assert_mem_eq(columns, copy, rows * p * sizeof(double));
        for (size_t c = 0; c < count; ++c)
            for (size_t a = 0; a < p; ++a)
                for (size_t b = a; b < p; ++b)
                    ck_assert_double_eq_tol(grams[c * p * p + a * p + b],
                                            naive[c * p * p + a * p + b], 1e-11);
        free(weights);
        free(scratch);
        free(copy);
        free(grams);
        free(naive);
    }
    double spare[1];
    ck_assert_ptr_null(moe_weighted_grams_columns_slot(10, 17, 1, spare));
}
END_TEST

/* Several arrays summed in one pass give each array's own lane sum, bit for bit, for
   counts across the pass's group of 16 and lengths with and without a tail. */
START_TEST(columns_sums_match_single_sums)
{
    const size_t counts[] = {1, 3, 16, 17, 35}, lengths[] = {1, 8, 61, 456};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l) {
            size_t count = counts[c], rows = lengths[l];
            double *a = malloc(count * rows * sizeof(double));
            double *sums = malloc(count * sizeof(double));
            test_rng rng = {91 + 7 * c + l};
            for (size_t i = 0; i < count * rows; ++i)
                a[i] = test_normal(&rng) * 1e3;
            for (size_t q = 0; q < count; ++q)
                sums[q] = (double)q;
            moe_columns_sums(rows, count, a, sums);
            for (size_t q = 0; q < count; ++q)
                ck_assert_double_eq(sums[q], (double)q + moe_columns_sum(rows, a + q * rows));
            free(a);
            free(sums);
        }
}
END_TEST

START_TEST(spd_solve_and_ridge_fallback)
{
    double A[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2}, b[3] = {1, 2, 3}, work[12];
    double x[3];
    memcpy(x, b, sizeof x);
    int ridge = 0;
    ck_assert_int_eq(moe_solve_spd(3, A, x, work, &ridge), 0);
    ck_assert_int_eq(ridge, 0);
    for (int i = 0; i < 3; ++i)
        ck_assert_double_eq_tol(A[i * 3] * x[0] + A[i * 3 + 1] * x[1] + A[i * 3 + 2] * x[2], b[i], 1e-13);
    /* Rank one: singular; the fallback adds a ridge and returns a finite solution. */
    double S[9] = {1, 2, 3, 2, 4, 6, 3, 6, 9}, y[3] = {1, 2, 3};
    ridge = 0;
    ck_assert_int_eq(moe_solve_spd(3, S, y, work, &ridge), 0);
    ck_assert_int_eq(ridge, 1);
    for (int i = 0; i < 3; ++i)
        ck_assert(isfinite(y[i]));
    /* It solves the consistent system S y = (1,2,3) up to the ridge. */
    for (int i = 0; i < 3; ++i)
        ck_assert_double_eq_tol(S[i * 3] * y[0] + S[i * 3 + 1] * y[1] + S[i * 3 + 2] * y[2], (double)(i + 1), 1e-4);
}
END_TEST

/* Features in wildly different units: A = D A0 D must give x = D^-1 x0 to full accuracy,
   with no ridge, for scales from 1e-8 to 1e7. */
START_TEST(spd_solve_is_scale_invariant)
{
    const double A0[16] = {5, 1, 0.5, 0.2, 1, 4, 1, 0.3, 0.5, 1, 3, 0.1, 0.2, 0.3, 0.1, 2};
    const double b0[4] = {1, -2, 0.5, 3};
    double x0[4], work[20];
    memcpy(x0, b0, sizeof x0);
    int ridge = 0;
    ck_assert_int_eq(moe_solve_spd(4, A0, x0, work, &ridge), 0);
    ck_assert_int_eq(ridge, 0);
    const double D[4] = {1e-8, 1.0, 1e7, 3e-4};
    double A[16], x[4];
    for (size_t i = 0; i < 4; ++i) {
        x[i] = D[i] * b0[i]; /* (D A0 D) x = D b0  <=>  x = D^-1 x0 */
        for (size_t j = 0; j < 4; ++j)
            A[i * 4 + j] = D[i] * A0[i * 4 + j] * D[j];
    }
    ck_assert_int_eq(moe_solve_spd(4, A, x, work, &ridge), 0);
    ck_assert_int_eq(ridge, 0);
    for (size_t i = 0; i < 4; ++i)
        ck_assert_double_eq_tol(x[i] * D[i] / x0[i], 1.0, 1e-12);
}
END_TEST

/* The Jacobi eigensolver: from the upper triangle alone, ascending values, orthonormal
   vectors with A v = lambda v, repeated values, and a NaN refused. */
START_TEST(symmetric_eigen_gives_the_eigenpairs)
{
    static const size_t orders[] = {1, 3, 8, 37};
    moe_rng rng;
    moe_rng_seed(&rng, 5, 0);
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; ++o) {
        size_t n = orders[o];
        double *A = malloc(n * n * sizeof(double)), *V = malloc(n * n * sizeof(double));
        double *values = malloc(n * sizeof(double)), *work = malloc(n * n * sizeof(double));
        double largest = 0.0;
        for (size_t i = 0; i < n; ++i)
            for (size_t j = i; j < n; ++j) {
                A[i * n + j] = A[j * n + i] = moe_rng_normal(&rng);
                largest = fmax(largest, fabs(A[i * n + j]));
            }
        memcpy(V, A, n * n * sizeof(double));
        for (size_t i = 1; i < n; ++i)
            V[i * n] = 1e300; /* below the diagonal: never read */
        ck_assert_int_eq(moe_symmetric_eigen(n, V, values, work), 0);
        double tolerance = 1e-13 * (double)n * largest;
        for (size_t k = 0; k < n; ++k) {
            if (k > 0)
                ck_assert(values[k - 1] <= values[k]);
            for (size_t i = 0; i < n; ++i) {
                double product = 0.0;
                for (size_t j = 0; j < n; ++j)
                    product += A[i * n + j] * V[j * n + k];
                ck_assert_double_eq_tol(product, values[k] * V[i * n + k], tolerance);
            }
            for (size_t l = 0; l < n; ++l) {
                double dot = 0.0;
                for (size_t i = 0; i < n; ++i)
                    dot += V[i * n + k] * V[i * n + l];
                ck_assert_double_eq_tol(dot, k == l ? 1.0 : 0.0, 1e-13 * (double)n);
            }
        }
        free(A);
        free(V);
        free(values);
        free(work);
    }
    double twice[9] = {2, 0, 0, 0, 1, 0, 0, 0, 2}, values[3], work[9];
    ck_assert_int_eq(moe_symmetric_eigen(3, twice, values, work), 0);
    ck_assert(values[0] == 1.0 && values[1] == 2.0 && values[2] == 2.0);
    double broken[4] = {1, NAN, NAN, 1};
    ck_assert_int_eq(moe_symmetric_eigen(2, broken, values, work), -1);
}
END_TEST

START_TEST(rng_is_reproducible_and_uniform)
{
    moe_rng a, b, c;
    moe_rng_seed(&a, 42, 0);
    moe_rng_seed(&b, 42, 0);
    moe_rng_seed(&c, 42, 1);
    int differs = 0;
    double sum = 0.0, sum_squares = 0.0, normal_sum = 0.0, normal_squares = 0.0;
    const int draws = 200000;
    for (int i = 0; i < draws; ++i) {
        uint64_t x = moe_rng_next(&a);
        ck_assert(x == moe_rng_next(&b));
        differs |= x != moe_rng_next(&c);
        double u = moe_rng_uniform(&a);
        ck_assert(u >= 0.0 && u < 1.0);
        sum += u;
        sum_squares += u * u;
        double z = moe_rng_normal(&a);
        normal_sum += z;
        normal_squares += z * z;
        moe_rng_uniform(&b);
        moe_rng_normal(&b);
    }
    ck_assert(differs);
    ck_assert_double_eq_tol(sum / draws, 0.5, 0.005);
    ck_assert_double_eq_tol(sum_squares / draws, 1.0 / 3.0, 0.005);
    ck_assert_double_eq_tol(normal_sum / draws, 0.0, 0.01);
    ck_assert_double_eq_tol(normal_squares / draws, 1.0, 0.01);
    for (int i = 0; i < 1000; ++i)
        ck_assert_uint_lt(moe_rng_below(&a, 7), 7);
}
END_TEST

/* Soft targets loosely tied to x so the gate optimum is interior and non-trivial. */
static void gate_problem(size_t n, size_t d, size_t K, double *X, double *resp, double *weights)
{
    test_rng rng = {17};
    for (size_t i = 0; i < n; ++i) {
        double total = 0.0;
        for (size_t j = 0; j < d; ++j)
            X[i * d + j] = test_normal(&rng);
        for (size_t k = 0; k < K; ++k) {
            resp[i * K + k] = exp(0.8 * (double)k * X[i * d + k % d] + test_normal(&rng));
            total += resp[i * K + k];
        }
        for (size_t k = 0; k < K; ++k)
            resp[i * K + k] /= total;
        weights[i] = 0.5 + test_uniform(&rng);
    }
}

/* Gate probabilities of the model at row x (K values). */
static void gate_at(const struct moe_model *model, const double *x, double *pi)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double largest = -INFINITY, total = 0.0;
    for (size_t k = 0; k < K; ++k) {
        pi[k] = model->gate[k * p];
        for (size_t j = 1; j < p; ++j)
            pi[k] += model->gate[k * p + j] * x[j - 1];
        largest = fmax(largest, pi[k]);
    }
    for (size_t k = 0; k < K; ++k)
        total += (pi[k] = exp(pi[k] - largest));
    for (size_t k = 0; k < K; ++k)
        pi[k] /= total;
}

/*
 * After the gate M-step the first-order condition of the penalised problem holds for every
 * row of the gate, written out here independently of the library's Hessian code:
 *   (1/N) sum_i w_i (pi_ik - r_ik) x_i + l2 (w_k - mean_w) = 0  (penalty off the intercept).
 */
static void check_gate_stationary(double l2)
{
    const size_t n = 2000, d = 3, K = 4, p = d + 1;
    double *X = malloc(n * d * sizeof(double)), *resp = malloc(n * K * sizeof(double));
    double *weights = malloc(n * sizeof(double));
    gate_problem(n, d, K, X, resp, weights);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    struct moe_model *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    moe_data data = {n, d, d, 1, X, NULL, weights};
    moe_gate_options options = {l2, 50, 1e-14, 1, NULL};
    moe_gate_report report = MOE_GATE_REPORT_INIT;
    ck_assert_int_eq(moe_gate_newton(model, &data, resp, &options, &report, NULL), MOE_OK);
    ck_assert_uint_gt(report.newton_steps, 1);
    ck_assert_uint_le(report.newton_steps, 20);
    ck_assert_uint_eq(report.line_search_failures, 0);
    double gradient[16] = {0}, pi[4], total_weight = 0.0;
    for (size_t i = 0; i < n; ++i)
        total_weight += weights[i];
    for (size_t i = 0; i < n; ++i) {
        gate_at(model, X + i * d, pi);
        for (size_t k = 0; k < K; ++k)
            for (size_t j = 0; j < p; ++j) {
                double x = j == 0 ? 1.0 : X[i * d + j - 1];
                gradient[k * p + j] += weights[i] * (pi[k] - resp[i * K + k]) * x / total_weight;
            }
    }
    for (size_t j = 1; j < p; ++j) {
        double mean = 0.0;
        for (size_t k = 0; k < K; ++k)
            mean += model->gate[k * p + j] / (double)K;
        for (size_t k = 0; k < K; ++k)
            gradient[k * p + j] += l2 * (model->gate[k * p + j] - mean);
    }
    for (size_t a = 0; a < K * p; ++a)
        ck_assert_double_lt(fabs(gradient[a]), 1e-9);
    moe_model_free(model);
    free(X);
    free(resp);
    free(weights);
}

START_TEST(gate_newton_reaches_stationary_point)
{
    check_gate_stationary(0.0);
    check_gate_stationary(0.05);
}
END_TEST

/* With a penalty, relabelling the experts (so another one is the reference) must give the
   same gate probabilities, relabelled: the penalty may not favour the reference expert. */
START_TEST(gate_penalty_does_not_depend_on_the_reference)
{
    const size_t n = 1500, d = 3, K = 3;
    double *X = malloc(n * d * sizeof(double)), *resp = malloc(n * K * sizeof(double));
    double *swapped = malloc(n * K * sizeof(double)), *weights = malloc(n * sizeof(double));
    gate_problem(n, d, K, X, resp, weights);
    for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < K; ++k)
            swapped[i * K + k] = resp[i * K + (K - 1 - k)];
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    struct moe_model *model = NULL, *relabelled = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    ck_assert_int_eq(moe_model_create(&relabelled, &spec), MOE_OK);
    moe_data data = {n, d, d, 1, X, NULL, weights};
    moe_gate_options options = {0.2, 50, 1e-15, 1, NULL};
    moe_gate_report report = MOE_GATE_REPORT_INIT;
    ck_assert_int_eq(moe_gate_newton(model, &data, resp, &options, &report, NULL), MOE_OK);
    ck_assert_int_eq(moe_gate_newton(relabelled, &data, swapped, &options, &report, NULL), MOE_OK);
    double pi[3], rho[3], largest = 0.0;
    for (size_t i = 0; i < n; ++i) {
        gate_at(model, X + i * d, pi);
        gate_at(relabelled, X + i * d, rho);
        for (size_t k = 0; k < K; ++k)
            largest = fmax(largest, fabs(pi[k] - rho[K - 1 - k]));
    }
    ck_assert_double_lt(largest, 1e-9);
    moe_model_free(model);
    moe_model_free(relabelled);
    free(X);
    free(resp);
    free(swapped);
    free(weights);
}
END_TEST

static Suite *kernel_suite(void)
{
    Suite *suite = suite_create("kernels");
    TCase *core = tcase_create("core");
    /* Check's default of 4 s per test is too short for the RNG's 200,000 draws on a loaded
       machine (two test processes per core under the sanitizers). */
    tcase_set_timeout(core, 60);
    tcase_add_test(core, log_sum_exp_is_stable);
    tcase_add_test(core, block_products_in_pieces_match_naive);
    tcase_add_test(core, exp_array_matches_libm);
    tcase_add_test(core, bounded_exp_matches_libm);
    tcase_add_test(core, log_array_matches_libm);
    tcase_add_test(core, softmax_rows_match_single_rows);
    tcase_add_test(core, weighted_gram_matches_naive_sum);
    tcase_add_test(core, columns_are_the_block_transposed);
    tcase_add_test(core, weighted_grams_by_columns_match_naive_sums);
    tcase_add_test(core, weighted_grams_with_signed_weights);
    tcase_add_test(core, weighted_grams_from_the_columns_slot);
    tcase_add_test(core, columns_sums_match_single_sums);
    tcase_add_test(core, spd_solve_and_ridge_fallback);
    tcase_add_test(core, rng_is_reproducible_and_uniform);
    tcase_add_test(core, spd_solve_is_scale_invariant);
    tcase_add_test(core, symmetric_eigen_gives_the_eigenpairs);
    tcase_add_test(core, gate_newton_reaches_stationary_point);
    tcase_add_test(core, gate_penalty_does_not_depend_on_the_reference);
    suite_add_tcase(suite, core);
    return suite;
}

int main(void)
{
    return run_suite(kernel_suite());
}
