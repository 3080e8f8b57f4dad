/* The table of pinned fitter options: names, types, bounds and defaults. */
#ifndef MOE_LIB_OPTIONS_H
#define MOE_LIB_OPTIONS_H

#include "moe/fitter.h"

#define MOE_OPTION_SLOTS 28 /* highest pinned option number + 1 */

typedef struct moe_option_info {
    moe_option id;
    const char *name;
    int is_integer;
    double lower;
    double upper;
    double default_value;
    const char *const *keywords; /* for enumerated options: names of values 0, 1, ... */
    const char *summary;
} moe_option_info;

/* NULL for an unknown option number. */
const moe_option_info *moe_option_info_get(moe_option option);
/* NULL for an unknown name. */
const moe_option_info *moe_option_info_find(const char *name);

/* Option values of one fitter. Integer options live in `integer`, others in `real`. */
typedef struct moe_option_values {
    long long integer[MOE_OPTION_SLOTS];
    double real[MOE_OPTION_SLOTS];
} moe_option_values;

void moe_option_values_default(moe_option_values *values);


#endif
