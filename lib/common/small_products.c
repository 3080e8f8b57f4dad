/*
 * The small products' kernels (common/small_products.h). Every kernel works on vectors of
 * eight doubles (GCC's vector extension): one register under AVX-512, two under AVX2, four
 * in the baseline copy. A kernel keeps a tile of such sums in registers across a block's
 * rows; the tile's size is what each copy's registers hold (16 of them below AVX-512, 32
 * with it). The lane of a row is its index modulo 8 in every copy, and the lanes are added
 * in a fixed order, so the copies differ only by the fused multiply-adds of AVX2 and
 * AVX-512 (this file is built with -ffp-contract=fast, CMakeLists.txt).
 *
 * A tile at the edge of a product reads the last row or column again in place of the
 * missing ones and drops those sums: one body per copy instead of one per edge size.
 */
#include "common/small_products.h"
#include "common/blas_kernels.h"
#include "common/simd.h"

#include <string.h>

enum { LANES = 8, MOST_TILE = 8 };

typedef double lanes __attribute__((vector_size(LANES * sizeof(double))));

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 8")

ALWAYS_INLINE lanes load(const double *at)
{
    lanes value;
    memcpy(&value, at, sizeof value);
    return value;
}

/* The first `valid` values at `at`, zeros after: a block's last rows. */
ALWAYS_INLINE lanes load_part(const double *at, size_t valid)
{
    lanes value = {0.0};
    UNROLL
    for (size_t l = 0; l < LANES; ++l)
        value[l] = l < valid ? at[l] : 0.0;
    return value;
}

ALWAYS_INLINE double lanes_total(lanes value)
{
    return ((value[0] + value[1]) + (value[2] + value[3])) +
           ((value[4] + value[5]) + (value[6] + value[7]));
}

/*
 * Sums over a block's rows: out[at(m) + n stride] += sum_i left_m[i] right_n[i], where
 * left_m is row m of `left` (rows `length` apart) or, for Gram matrices, the product of
 * two of its rows (first[m], second[m]): each row's x_a x_b, formed in registers.
 */
typedef struct dots_job {
    size_t length, left_count, right_count;
    const double *left, *right;
    const unsigned char *first, *second; /* pairs of rows of left, or NULL */
    double *out;
    const unsigned short *at;            /* where left m's sums go, or NULL: m right_count */
    size_t stride;
} dots_job;

ALWAYS_INLINE lanes left_lanes(const double *x, const double *z, size_t i, size_t valid,
                               int pairs)
{
    if (valid == LANES)
        return pairs ? load(x + i) * load(z + i) : load(x + i);
    return pairs ? load_part(x + i, valid) * load_part(z + i, valid) : load_part(x + i, valid);
}

/* Rows i to i + valid of a tile's sums (valid is LANES but in a block's last rows). */
ALWAYS_INLINE void dots_step(lanes sums[MOST_TILE][MOST_TILE], const double *const *x,
                             const double *const *z, const double *const *y, size_t i,
                             size_t valid, size_t tile_left, size_t tile_right, int pairs)
{
    lanes left[MOST_TILE];
    UNROLL
    for (size_t m = 0; m < tile_left; ++m)
        left[m] = left_lanes(x[m], z[m], i, valid, pairs);
    UNROLL
    for (size_t n = 0; n < tile_right; ++n) {
        lanes right = valid == LANES ? load(y[n] + i) : load_part(y[n] + i, valid);
        UNROLL
        for (size_t m = 0; m < tile_left; ++m)
            sums[m][n] += left[m] * right;
    }
}

/* One tile of tile_left x tile_right sums from left m0 and right n0 on. */
ALWAYS_INLINE void dots_tile(const dots_job *job, size_t m0, size_t n0, size_t tile_left,
                             size_t tile_right, int pairs)
{
    size_t length = job->length;
    const double *x[MOST_TILE], *z[MOST_TILE], *y[MOST_TILE];
    UNROLL
    for (size_t m = 0; m < tile_left; ++m) {
        size_t index = m0 + m < job->left_count ? m0 + m : job->left_count - 1;
        x[m] = job->left + (pairs ? job->first[index] : index) * length;
        z[m] = pairs ? job->left + job->second[index] * length : x[m];
    }
    UNROLL
    for (size_t n = 0; n < tile_right; ++n)
        y[n] = job->right +
               (n0 + n < job->right_count ? n0 + n : job->right_count - 1) * length;
    lanes sums[MOST_TILE][MOST_TILE];
    UNROLL
    for (size_t m = 0; m < tile_left; ++m)
        UNROLL
        for (size_t n = 0; n < tile_right; ++n)
            sums[m][n] = (lanes){0.0};
    size_t i = 0;
    for (; i + LANES <= length; i += LANES)
        dots_step(sums, x, z, y, i, LANES, tile_left, tile_right, pairs);
    if (i < length)
        dots_step(sums, x, z, y, i, length - i, tile_left, tile_right, pairs);
    UNROLL
    for (size_t m = 0; m < tile_left; ++m)
        UNROLL
        for (size_t n = 0; n < tile_right; ++n)
            if (m0 + m < job->left_count && n0 + n < job->right_count) {
                size_t row = m0 + m;
                size_t at = job->at != NULL ? job->at[row] : row * job->right_count;
                job->out[at + (n0 + n) * job->stride] += lanes_total(sums[m][n]);
            }
}

/* The tiles of left m0 on; those of the last, shorter row of tiles take only its rows. */
ALWAYS_INLINE void dots_row(const dots_job *job, size_t m0, size_t tile_left, size_t tile_right)
{
    for (size_t n0 = 0; n0 < job->right_count; n0 += tile_right) {
        if (job->first != NULL)
            dots_tile(job, m0, n0, tile_left, tile_right, 1);
        else
            dots_tile(job, m0, n0, tile_left, tile_right, 0);
    }
}

ALWAYS_INLINE void dots_body(const dots_job *job, size_t tile_left, size_t tile_right)
{
    size_t m0 = 0;
    for (; m0 + tile_left <= job->left_count; m0 += tile_left)
        dots_row(job, m0, tile_left, tile_right);
    switch (job->left_count - m0) {
    case 0: break;
    case 1: dots_row(job, m0, 1, tile_right); break;
    case 2: dots_row(job, m0, 2, tile_right); break;
    case 3: dots_row(job, m0, 3, tile_right); break;
    default: dots_row(job, m0, tile_left, tile_right); break;
    }
}

/*
 * c (rows x columns) = a (rows x inner) b (inner x columns) by tiles of tile_rows rows of c
 * and `width` vectors of its columns: each value of b is loaded once per tile and
 * multiplied by tile_rows entries of a.
 */
typedef struct product_job {
    size_t rows, columns, inner;
    const double *a, *b;
    double *c;
} product_job;

ALWAYS_INLINE void product_tile(const product_job *job, size_t r0, size_t j, size_t valid,
                                size_t tile_rows, size_t width)
{
    const double *a[MOST_TILE];
    UNROLL
    for (size_t r = 0; r < tile_rows; ++r)
        a[r] = job->a + (r0 + r < job->rows ? r0 + r : job->rows - 1) * job->inner;
    lanes sums[MOST_TILE][2];
    UNROLL
    for (size_t r = 0; r < tile_rows; ++r)
        UNROLL
        for (size_t v = 0; v < width; ++v)
            sums[r][v] = (lanes){0.0};
    for (size_t t = 0; t < job->inner; ++t) {
        const double *b = job->b + t * job->columns + j;
        lanes value[2];
        UNROLL
        for (size_t v = 0; v < width; ++v) {
            size_t part = valid > v * LANES ? valid - v * LANES : 0;
            value[v] = part >= LANES ? load(b + v * LANES) : load_part(b + v * LANES, part);
        }
        UNROLL
        for (size_t r = 0; r < tile_rows; ++r)
            UNROLL
            for (size_t v = 0; v < width; ++v)
                sums[r][v] += a[r][t] * value[v];
    }
    UNROLL
    for (size_t r = 0; r < tile_rows; ++r) {
        if (r0 + r >= job->rows)
            break;
        double *c = job->c + (r0 + r) * job->columns + j;
        UNROLL
        for (size_t v = 0; v < width; ++v) {
            if (valid >= (v + 1) * LANES)
                memcpy(c + v * LANES, &sums[r][v], sizeof(lanes));
            else
                for (size_t l = 0; v * LANES + l < valid; ++l)
                    c[v * LANES + l] = sums[r][v][l];
        }
    }
}

/* The columns j on (valid of them) of every row of c: tiles of tile_rows rows, then one of
   the rows left (a constant count in each case, so that its sums stay in registers). */
ALWAYS_INLINE void product_columns(const product_job *job, size_t j, size_t valid,
                                   size_t tile_rows, size_t width)
{
    size_t r0 = 0;
    for (; r0 + tile_rows <= job->rows; r0 += tile_rows)
        product_tile(job, r0, j, valid, tile_rows, width);
    switch (job->rows - r0) {
    case 0: break;
    case 1: product_tile(job, r0, j, valid, 1, width); break;
    case 2: product_tile(job, r0, j, valid, 2, width); break;
    case 3: product_tile(job, r0, j, valid, 3, width); break;
    case 4: product_tile(job, r0, j, valid, 4, width); break;
    case 5: product_tile(job, r0, j, valid, 5, width); break;
    case 6: product_tile(job, r0, j, valid, 6, width); break;
    default: product_tile(job, r0, j, valid, tile_rows, width); break;
    }
}

ALWAYS_INLINE void product_body(const product_job *job, size_t tile_rows, size_t width)
{
    size_t step = width * LANES, j = 0;
    for (; j + step <= job->columns; j += step)
        product_columns(job, j, step, tile_rows, width);
    if (j < job->columns)
        product_columns(job, j, job->columns - j, tile_rows, width);
}

/* The copies, each with the tiles its registers hold: sums, the left operands of a tile and
   one right operand at a time. */
static void dots_generic(const dots_job *job) { dots_body(job, 1, 3); }
static void product_generic(const product_job *job) { product_body(job, 2, 1); }
#ifdef MOE_HAVE_SIMD_COPIES
MOE_TARGET_AVX2 static void dots_avx2(const dots_job *job) { dots_body(job, 2, 3); }
MOE_TARGET_AVX2 static void product_avx2(const product_job *job) { product_body(job, 6, 1); }
MOE_TARGET_AVX512 static void dots_avx512(const dots_job *job) { dots_body(job, 4, 6); }
MOE_TARGET_AVX512 static void product_avx512(const product_job *job) { product_body(job, 8, 2); }
#endif

int moe_small_copy_available(moe_small_copy copy)
{
#ifdef MOE_HAVE_SIMD_COPIES
    if (copy == MOE_SMALL_AVX512)
        return moe_cpu_has_avx512();
    if (copy == MOE_SMALL_AVX2)
        return moe_cpu_has_avx2();
#endif
    return copy == MOE_SMALL_GENERIC;
}

moe_small_copy moe_small_copy_best(void)
{
    if (moe_small_copy_available(MOE_SMALL_AVX512))
        return MOE_SMALL_AVX512;
    return moe_small_copy_available(MOE_SMALL_AVX2) ? MOE_SMALL_AVX2 : MOE_SMALL_GENERIC;
}

/* The generic copy against a BLAS without small kernels above p = 16 was not measured, so
   it keeps the threshold that holds against every BLAS measured. */
size_t moe_small_product_inputs(void)
{
    if (moe_small_copy_best() != MOE_SMALL_GENERIC && moe_blas_lacks_small_kernels())
        return MOE_SMALL_PRODUCT_INPUTS_MOST;
    return MOE_SMALL_PRODUCT_INPUTS;
}

static void run_dots(moe_small_copy copy, const dots_job *job)
{
    if (job->length == 0 || job->left_count == 0 || job->right_count == 0)
        return;
#ifdef MOE_HAVE_SIMD_COPIES
    if (copy == MOE_SMALL_AVX512) {
        dots_avx512(job);
        return;
    }
    if (copy == MOE_SMALL_AVX2) {
        dots_avx2(job);
        return;
    }
#endif
    (void)copy;
    dots_generic(job);
}

void moe_small_product_ab(moe_small_copy copy, size_t rows, size_t columns, size_t inner,
                          const double *a, const double *b, double *c)
{
    if (rows == 0 || columns == 0)
        return;
    if (inner == 0) {
        memset(c, 0, rows * columns * sizeof(double));
        return;
    }
    product_job job = {rows, columns, inner, a, b, c};
#ifdef MOE_HAVE_SIMD_COPIES
    if (copy == MOE_SMALL_AVX512) {
        product_avx512(&job);
        return;
    }
    if (copy == MOE_SMALL_AVX2) {
        product_avx2(&job);
        return;
    }
#endif
    (void)copy;
    product_generic(&job);
}

void moe_small_product_abt_add(moe_small_copy copy, size_t rows, size_t columns, size_t inner,
                               const double *a, const double *b, double *c)
{
    dots_job job = {inner, rows, columns, a, b, NULL, NULL, c, NULL, 1};
    run_dots(copy, &job);
}

void moe_small_grams_add(moe_small_copy copy, size_t rows, size_t p, size_t count,
                         const double *columns, const double *weights, double *grams)
{
    enum { MOST_PAIRS = MOE_SMALL_GRAM_INPUTS * (MOE_SMALL_GRAM_INPUTS + 1) / 2 };
    unsigned char first[MOST_PAIRS], second[MOST_PAIRS];
    unsigned short at[MOST_PAIRS];
    size_t pairs = 0;
    for (size_t a = 0; a < p; ++a)
        for (size_t b = a; b < p; ++b, ++pairs) {
            first[pairs] = (unsigned char)a;
            second[pairs] = (unsigned char)b;
            at[pairs] = (unsigned short)(a * p + b);
        }
    dots_job job = {rows, pairs, count, columns, weights, first, second, grams, at, p * p};
    run_dots(copy, &job);
}
