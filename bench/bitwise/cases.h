/* The bit-identity driver's cases: an estimator, a data set, a model's shape and options. */
#ifndef MOE_BITWISE_CASES_H
#define MOE_BITWISE_CASES_H

#include <moe/moe.h>

#include "data.h"

typedef enum bitwise_mode {
    MODE_FIT,          /* moe_fitter_fit on every row */
    MODE_WEIGHTED,     /* the same with the set's row weights */
    MODE_STREAM,       /* moe_fitter_partial_fit on batches of STREAM_BATCH rows */
    MODE_AGGREGATE,    /* three em fits of a third of the rows each, then moe_fitter_aggregate */
    MODE_AGGREGATE_NOY /* the same, its support rows given without responses */
} bitwise_mode;

#define STREAM_BATCH 200

typedef struct bitwise_shape {
    moe_family family;
    moe_link link;
    size_t experts;
    int intercept;
    size_t classes;          /* multinomial only */
    const char *gate_mask;   /* one '0' or '1' per feature; NULL: every feature */
    const char *expert_mask;
    long offset;             /* the offset feature, -1: none */
    int start;               /* set a start of fixed parameters (for init = model) */
} bitwise_shape;

typedef struct bitwise_case {
    const char *name;
    const char *estimator;
    bitwise_set set;
    bitwise_shape shape;
    bitwise_mode mode;
    const char *options; /* "name=value" separated by spaces */
} bitwise_case;

extern const bitwise_case bitwise_cases[];
extern const size_t bitwise_case_count;

#endif
