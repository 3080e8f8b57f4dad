/* A pinned option's description from whichever built-in estimator reads it, through the
   public listing (moe_fitter_option_info): what moe_option_bounds told before 1.0. */
#ifndef MOE_TEST_OPTION_LOOKUP_H
#define MOE_TEST_OPTION_LOOKUP_H

#include "moe/moe.h"

/* MOE_ERR_NOT_FOUND when no built-in estimator reads the option. is_integer is 1 for
   integer and keyword options. Any out-pointer may be NULL. */
moe_status pinned_bounds(moe_option option, double *lower, double *upper, int *is_integer);

#endif
