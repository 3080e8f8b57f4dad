/*
 * Array allocation with overflow-checked sizes. Workspace sizes are products
 * of user-controlled dimensions (rows x experts, a gate Hessian's m x m); a
 * wrapped product would allocate a small buffer and then overrun it.
 */
#ifndef MOE_LIB_ALLOC_H
#define MOE_LIB_ALLOC_H

#include <stddef.h>

/* malloc(rows * columns * size), or NULL when the product does not fit in size_t. */
void *moe_alloc_array(size_t rows, size_t columns, size_t size);

/* As moe_alloc_array, zero-filled. */
void *moe_calloc_array(size_t rows, size_t columns, size_t size);

#endif
