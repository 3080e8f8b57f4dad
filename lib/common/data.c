#include "common/data.h"

#include <string.h>

double moe_weight_sum(size_t n, const double *weights)
{
    if (weights == NULL)
        return (double)n;
    double total = 0.0;
    for (size_t i = 0; i < n; ++i)
        total += weights[i];
    return total;
}

/* Rows of d features after an optional intercept column. Inlined with d a constant for
   small d, where memcpy becomes a few moves: a memcpy call per row cost 4% of a pass at
   d = 5, and a copy by columns as much. */
static inline __attribute__((always_inline)) void copy_rows(size_t rows, size_t d, size_t ldx,
                                                            const double *X, size_t p,
                                                            int intercept, double *block)
{
    for (size_t i = 0; i < rows; ++i) {
        double *row = block + i * p;
        if (intercept)
            row[0] = 1.0;
        memcpy(row + intercept, X + i * ldx, d * sizeof(double));
    }
}

void moe_data_load_block(const moe_data *data, size_t start, size_t rows, double *block)
{
    size_t d = data->n_features, p = moe_data_inputs(data), ldx = data->ldx;
    int intercept = data->intercept;
    if (d == 0) { /* X may be NULL for an intercept-only model */
        for (size_t i = 0; intercept && i < rows; ++i)
            block[i * p] = 1.0;
        return;
    }
    const double *X = data->X + start * ldx;
    switch (d) {
    case 1: copy_rows(rows, 1, ldx, X, p, intercept, block); break;
    case 2: copy_rows(rows, 2, ldx, X, p, intercept, block); break;
    case 3: copy_rows(rows, 3, ldx, X, p, intercept, block); break;
    case 4: copy_rows(rows, 4, ldx, X, p, intercept, block); break;
    case 5: copy_rows(rows, 5, ldx, X, p, intercept, block); break;
    case 6: copy_rows(rows, 6, ldx, X, p, intercept, block); break;
    case 7: copy_rows(rows, 7, ldx, X, p, intercept, block); break;
    case 8: copy_rows(rows, 8, ldx, X, p, intercept, block); break;
    default: copy_rows(rows, d, ldx, X, p, intercept, block); break;
    }
}

const double *moe_data_block(const moe_data *data, size_t start, size_t rows, double *block)
{
    if (!data->intercept && data->n_features > 0 && data->ldx == data->n_features)
        return data->X + start * data->ldx;
    moe_data_load_block(data, start, rows, block);
    return block;
}

/* The same rows by columns. Eight rows at a time: each column receives one cache line per
   group while the rows are read in order. */
static inline __attribute__((always_inline)) void copy_columns(size_t rows, size_t d, size_t ldx,
                                                               const double *X, int intercept,
                                                               double *columns)
{
    double *first = columns + (size_t)intercept * rows;
    size_t i = 0;
    for (; i + 8 <= rows; i += 8)
        for (size_t a = 0; a < d; ++a)
            for (size_t r = 0; r < 8; ++r)
                first[a * rows + i + r] = X[(i + r) * ldx + a];
    for (; i < rows; ++i)
        for (size_t a = 0; a < d; ++a)
            first[a * rows + i] = X[i * ldx + a];
}

/* Lines of 64 bytes: a hint only, so a different line size costs speed, never results. */
static void prefetch_range(const double *from, size_t count)
{
    const char *first = (const char *)from, *end = (const char *)(from + count);
    for (const char *line = first; line < end; line += 64)
        __builtin_prefetch(line, 0, 2);
}

void moe_data_prefetch(const moe_data *data, size_t start, size_t rows)
{
    if (rows == 0)
        return;
    prefetch_range(data->X + start * data->ldx, (rows - 1) * data->ldx + data->n_features);
    prefetch_range(data->y + start, rows);
    if (data->weights != NULL)
        prefetch_range(data->weights + start, rows);
}

void moe_data_load_columns(const moe_data *data, size_t start, size_t rows, double *columns)
{
    size_t d = data->n_features, ldx = data->ldx;
    int intercept = data->intercept;
    for (size_t i = 0; intercept && i < rows; ++i)
        columns[i] = 1.0;
    if (d == 0)
        return;
    const double *X = data->X + start * ldx;
    switch (d) {
    case 1: copy_columns(rows, 1, ldx, X, intercept, columns); break;
    case 2: copy_columns(rows, 2, ldx, X, intercept, columns); break;
    case 3: copy_columns(rows, 3, ldx, X, intercept, columns); break;
    case 4: copy_columns(rows, 4, ldx, X, intercept, columns); break;
    case 5: copy_columns(rows, 5, ldx, X, intercept, columns); break;
    case 6: copy_columns(rows, 6, ldx, X, intercept, columns); break;
    case 7: copy_columns(rows, 7, ldx, X, intercept, columns); break;
    case 8: copy_columns(rows, 8, ldx, X, intercept, columns); break;
    default: copy_columns(rows, d, ldx, X, intercept, columns); break;
    }
}
