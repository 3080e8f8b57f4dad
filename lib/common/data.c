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

void moe_data_load_block(const moe_data *data, size_t start, size_t rows, double *block)
{
    size_t d = data->n_features;
    size_t p = moe_data_inputs(data);
    for (size_t i = 0; i < rows; ++i) {
        double *row = block + i * p;
        if (data->intercept)
            row[0] = 1.0;
        if (d > 0) /* X may be NULL for an intercept-only model */
            memcpy(row + data->intercept, data->X + (start + i) * data->ldx, d * sizeof(double));
    }
}
