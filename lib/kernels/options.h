/*
 * The table of pinned fitter options: names, types, bounds and defaults (moe_option_info),
 * and the values of one set of them. The fitter stores and parses them; a fit context
 * (kernels/context.h) carries the fit's values to the kernels and the estimator.
 */
#ifndef MOE_LIB_OPTIONS_H
#define MOE_LIB_OPTIONS_H

#include "moe/fitter.h"

#define MOE_OPTION_SLOTS 30 /* highest pinned option number + 1 */

/* NULL for an unknown option number. */
const moe_option_info *moe_option_info_get(moe_option option);
/* NULL for an unknown name. */
const moe_option_info *moe_option_info_find(const char *name);
/* The pinned options in number order: count, and entry i (NULL past the end). */
size_t moe_pinned_option_count(void);
const moe_option_info *moe_pinned_option_at(size_t index);

/* Option values of one fitter. Real options live in `real`, the others in `integer`. */
typedef struct moe_option_values {
    long long integer[MOE_OPTION_SLOTS];
    double real[MOE_OPTION_SLOTS];
} moe_option_values;

void moe_option_values_default(moe_option_values *values);

/* An option's value as an integer or as a real, whatever its type (info: its entry). */
long long moe_option_values_int(const moe_option_values *values, const moe_option_info *info);
double moe_option_values_double(const moe_option_values *values, const moe_option_info *info);

#endif
