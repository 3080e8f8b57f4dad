#include "common/data.h"

#include <string.h>

void moe_data_load_block(const moe_data *data, size_t start, size_t rows, double *block)
{
    size_t d = data->n_features;
    size_t p = moe_data_inputs(data);
    for (size_t i = 0; i < rows; ++i) {
        double *row = block + i * p;
        const double *source = data->X + (start + i) * data->ldx;
        if (data->intercept) {
            row[0] = 1.0;
            memcpy(row + 1, source, d * sizeof(double));
        } else {
            memcpy(row, source, d * sizeof(double));
        }
    }
}
