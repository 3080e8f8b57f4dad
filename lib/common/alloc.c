#include "common/alloc.h"

#include <stdint.h>
#include <stdlib.h>

static int product_fits(size_t rows, size_t columns, size_t size, size_t *bytes)
{
    if (columns != 0 && rows > SIZE_MAX / columns)
        return 0;
    size_t count = rows * columns;
    if (size != 0 && count > SIZE_MAX / size)
        return 0;
    *bytes = count * size;
    return 1;
}

void *moe_alloc_array(size_t rows, size_t columns, size_t size)
{
    size_t bytes;
    if (!product_fits(rows, columns, size, &bytes))
        return NULL;
    return malloc(bytes == 0 ? 1 : bytes);
}

void *moe_calloc_array(size_t rows, size_t columns, size_t size)
{
    size_t bytes;
    if (!product_fits(rows, columns, size, &bytes))
        return NULL;
    return calloc(bytes == 0 ? 1 : bytes, 1);
}
