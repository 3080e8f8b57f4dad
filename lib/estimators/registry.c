/* The constant table of built-in estimators. No mutable global registry. */
#include "estimators/fitter_impl.h"

#include <string.h>

static const moe_estimator_ops *const builtins[] = {
    &moe_estimator_em,
    &moe_estimator_gem,
    &moe_estimator_gd,
    &moe_estimator_cqt,
    &moe_estimator_ismm,
    &moe_estimator_ot,
};

const moe_estimator_ops *moe_builtin_find(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; ++i)
        if (strcmp(builtins[i]->name, name) == 0)
            return builtins[i];
    return NULL;
}
