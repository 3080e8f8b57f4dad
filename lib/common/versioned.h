/*
 * The public structs that carry a version (moe_fit_report, moe_model_spec, ...): a caller
 * built against an older header has an older, smaller struct, whose version field says
 * which. Fields are only ever appended, so version v is a prefix of the newest struct:
 * its size is all the library may read or write. Every init function and every copy-out
 * goes through these two functions with the struct's layout, so that no call writes past
 * the caller's struct when one grows (docs/ARCHITECTURE.md, "Versioned structs").
 */
#ifndef MOE_LIB_VERSIONED_H
#define MOE_LIB_VERSIONED_H

#include "moe/common.h"

#include <stddef.h>

#define MOE_STRUCT_VERSIONS_MAX 8

typedef struct moe_struct_layout {
    const char *name;                      /* for messages: "fit report" */
    unsigned int newest;                   /* this library's version of it */
    size_t sizes[MOE_STRUCT_VERSIONS_MAX]; /* sizes[v - 1]: the bytes of version v */
} moe_struct_layout;

/*
 * Fill `out`, a caller's struct of `version`, with the first bytes of `value` (the newest
 * struct: defaults, or the library's copy) that the version has, then set its version
 * field (the struct's first member, an unsigned int). MOE_ERR_UNSUPPORTED for a version
 * this library does not know, with a message in `message` (NULL: the thread's only).
 */
moe_status moe_struct_fill(void *out, unsigned int version, const void *value,
                           const moe_struct_layout *layout, char *message);

/* moe_struct_fill with the version `out` already holds (a copy-out into the caller's). */
moe_status moe_struct_copy_out(void *out, const void *value, const moe_struct_layout *layout,
                               char *message);

#endif
