#include "common/check.h"
#include "common/error.h"

#include <math.h>
#include <stdint.h>

moe_status moe_check_design(char *message, size_t n, const double *X, size_t ldx,
                            size_t n_features)
{
    if (n == 0)
        return moe_fail(message, MOE_ERR_EMPTY_INPUT, "n (number of rows) is zero");
    /* y, weights and every per-row output hold n doubles: a larger n cannot describe memory
       the caller has, and the row offsets below would wrap. */
    const size_t addressable = SIZE_MAX / sizeof(double);
    if (n > addressable)
        return moe_fail(message, MOE_ERR_DIMENSION,
                        "n (%zu) rows of doubles exceed the address space", n);
    if (n_features == 0)
        return MOE_OK;
    if (X == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "X is NULL");
    if (ldx < n_features)
        return moe_fail(message, MOE_ERR_DIMENSION, "ldx (%zu) is smaller than n_features (%zu)",
                        ldx, n_features);
    /* The last value read is X[(n - 1) * ldx + n_features - 1]. */
    if (n_features > addressable || n - 1 > (addressable - n_features) / ldx)
        return moe_fail(message, MOE_ERR_DIMENSION,
                        "X of %zu rows with leading dimension %zu exceeds the address space", n,
                        ldx);
    for (size_t i = 0; i < n; ++i) {
        const double *row = X + i * ldx;
        for (size_t j = 0; j < n_features; ++j)
            if (!isfinite(row[j]))
                return moe_fail(message, MOE_ERR_NON_FINITE, "row %zu, column %zu: the value is %s",
                                i, j, isnan(row[j]) ? "NaN" : "infinite");
    }
    return MOE_OK;
}

moe_status moe_check_response_values(char *message, size_t n, const double *y)
{
    if (y == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "y is NULL");
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(y[i]))
            return moe_fail(message, MOE_ERR_NON_FINITE, "row %zu, response: the value is %s",
                            i, isnan(y[i]) ? "NaN" : "infinite");
    return MOE_OK;
}

moe_status moe_check_weights(char *message, size_t n, const double *weights)
{
    if (weights == NULL)
        return MOE_OK;
    double total = 0.0;
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(weights[i]))
            return moe_fail(message, MOE_ERR_NON_FINITE, "row %zu, weight: the value is %s",
                            i, isnan(weights[i]) ? "NaN" : "infinite");
        if (weights[i] < 0.0)
            return moe_fail(message, MOE_ERR_NEGATIVE_WEIGHT,
                            "row %zu, weight: the value is negative (%g)", i, weights[i]);
        total += weights[i];
    }
    if (!(total > 0.0))
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT, "all weights are zero");
    if (!isfinite(total))
        return moe_fail(message, MOE_ERR_NON_FINITE, "the sum of the weights overflows");
    return MOE_OK;
}

moe_status moe_check_output(char *message, const double *out, size_t length, size_t rows,
                            size_t width)
{
    if (rows > SIZE_MAX / sizeof(double) / width)
        return moe_fail(message, MOE_ERR_DIMENSION,
                        "the output of %zu rows of %zu values exceeds the address space", rows,
                        width);
    if (out == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "output buffer is NULL");
    if (length < rows * width)
        return moe_fail(message, MOE_ERR_DIMENSION, "output buffer holds %zu values, %zu needed",
                        length, rows * width);
    return MOE_OK;
}

moe_status moe_check_struct_version(char *message, const char *struct_name,
                                    unsigned int version, unsigned int newest)
{
    if (version < 1 || version > newest)
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "%s version %u is not supported (this libmoe knows 1..%u)", struct_name,
                        version, newest);
    return MOE_OK;
}

moe_status moe_check_class_labels(char *message, size_t n, const double *y, size_t n_classes,
                                  const char *family)
{
    for (size_t i = 0; i < n; ++i)
        if (!(y[i] >= 0.0 && y[i] <= (double)(n_classes - 1) && y[i] == floor(y[i])))
            return moe_fail(message, MOE_ERR_INVALID_LABEL,
                            "row %zu, response: %g is not a class label: %s experts need "
                            "labels in {0, ..., %zu}",
                            i, y[i], family, n_classes - 1);
    return MOE_OK;
}
