/* A validated data set as the library sees it, and row-block loading for BLAS kernels. */
#ifndef MOE_LIB_DATA_H
#define MOE_LIB_DATA_H

#include <stddef.h>

/* Rows per block: a block of p inputs stays in L2 cache for the p <= ~100 we target. */
#define MOE_BLOCK_ROWS 256

typedef struct moe_data {
    size_t n;
    size_t n_features;
    size_t ldx;
    int intercept;            /* design rows are [1, x] when set */
    const double *X;          /* n x ldx, row-major */
    const double *y;          /* n, may be NULL for prediction */
    const double *weights;    /* n, NULL means all ones */
} moe_data;

static inline size_t moe_data_inputs(const moe_data *data)
{
    return data->n_features + (size_t)data->intercept;
}

static inline double moe_data_weight(const moe_data *data, size_t row)
{
    return data->weights == NULL ? 1.0 : data->weights[row];
}

/* Input `input` of the design row `row` (the intercept's 1 first when there is one). */
static inline double moe_data_design_value(const moe_data *data, size_t row, size_t input)
{
    return input < (size_t)data->intercept
               ? 1.0
               : data->X[row * data->ldx + input - (size_t)data->intercept];
}

/* Sum of n frequency weights; n when weights is NULL. */
double moe_weight_sum(size_t n, const double *weights);

/* The total weight of every worker's rows when `data` is the rows of a combined fit
   (common/combine.h), which hold only this worker's part of them; else 0. */
double moe_combined_total_weight(const moe_data *data);

/* N, the total weight of a data set. */
static inline double moe_data_total_weight(const moe_data *data)
{
    double combined = moe_combined_total_weight(data);
    return combined > 0.0 ? combined : moe_weight_sum(data->n, data->weights);
}

/*
 * Copy rows [start, start + rows) into `block` as a contiguous rows x p
 * design matrix (leading 1 column with an intercept).
 */
void moe_data_load_block(const moe_data *data, size_t start, size_t rows, double *block);

/*
 * Rows [start, start + rows) as a contiguous rows x p design matrix: X itself when its rows
 * already are the design's (no intercept, ldx = d), which spares a pass the copy, else
 * `block` (room for rows x p) filled by moe_data_load_block.
 */
const double *moe_data_block(const moe_data *data, size_t start, size_t rows, double *block);

/* Asks the cache for rows [start, start + rows) of X, y and the weights ahead of their use:
   a pass reads its next block while it computes the current one. */
void moe_data_prefetch(const moe_data *data, size_t start, size_t rows);

/*
 * The same rows as a p x rows matrix (row-major: column a of the design, intercept first,
 * is columns[a * rows .. a * rows + rows)). The E-step's per-row arithmetic runs on such
 * columns, where every operation is one vector loop over rows.
 */
void moe_data_load_columns(const moe_data *data, size_t start, size_t rows, double *columns);

#endif
