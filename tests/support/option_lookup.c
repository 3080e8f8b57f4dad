#include "support/option_lookup.h"

moe_status pinned_bounds(moe_option option, double *lower, double *upper, int *is_integer)
{
    for (size_t e = 0; e < moe_estimator_count(); ++e) {
        moe_fitter_t *fitter = NULL;
        if (moe_fitter_create(&fitter, moe_estimator_name(e)) != MOE_OK)
            return MOE_ERR_INTERNAL;
        for (size_t i = 0; i < moe_fitter_option_count(fitter); ++i) {
            moe_option_info info;
            if (moe_option_info_init(&info, MOE_OPTION_INFO_VERSION) != MOE_OK ||
                moe_fitter_option_info(fitter, i, &info) != MOE_OK) {
                moe_fitter_free(fitter);
                return MOE_ERR_INTERNAL;
            }
            if (info.number != (int)option || option == 0)
                continue;
            if (lower != NULL)
                *lower = info.lower;
            if (upper != NULL)
                *upper = info.upper;
            if (is_integer != NULL)
                *is_integer = info.type != MOE_OPTION_REAL;
            moe_fitter_free(fitter);
            return MOE_OK;
        }
        moe_fitter_free(fitter);
    }
    return MOE_ERR_NOT_FOUND;
}
