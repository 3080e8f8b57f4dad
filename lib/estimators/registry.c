/* The constant table of built-in estimators. No mutable global registry. */
#include "estimators/fitter_impl.h"

#include <string.h>

/* Every iterative estimator restarts, initialises by M-steps (hence the Newton options)
   and works on the same penalised objective. */
#define ITERATIVE_OPTIONS                                                                   \
    (MOE_OPTION_BIT(MOE_OPT_MAX_ITER) | MOE_OPTION_BIT(MOE_OPT_TOLERANCE) |                 \
     MOE_OPTION_BIT(MOE_OPT_N_INIT) | MOE_OPTION_BIT(MOE_OPT_SEED) |                        \
     MOE_OPTION_BIT(MOE_OPT_INIT) | MOE_OPTION_BIT(MOE_OPT_GATE_L2) |                       \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_RIDGE) | MOE_OPTION_BIT(MOE_OPT_VARIANCE_FLOOR) |        \
     MOE_OPTION_BIT(MOE_OPT_GATE_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_GATE_TOLERANCE) |     \
     MOE_OPTION_BIT(MOE_OPT_MIN_EXPERT_WEIGHT) | MOE_OPTION_BIT(MOE_OPT_UPDATE_VARIANCE) |  \
     MOE_OPTION_BIT(MOE_OPT_EXPERT_MAX_NEWTON) | MOE_OPTION_BIT(MOE_OPT_EXPERT_TOLERANCE) |   \
     MOE_OPTION_BIT(MOE_OPT_THREADS))

#define EM_OPTIONS                                                                          \
    (ITERATIVE_OPTIONS | MOE_OPTION_BIT(MOE_OPT_INNER_STEPS) |                              \
     MOE_OPTION_BIT(MOE_OPT_STEP) | MOE_OPTION_BIT(MOE_OPT_GATE_STEP) |                       \
     MOE_OPTION_BIT(MOE_OPT_GATE_SOLVER))
#define GEM_OPTIONS                                                                         \
    (ITERATIVE_OPTIONS | MOE_OPTION_BIT(MOE_OPT_STEP) | MOE_OPTION_BIT(MOE_OPT_GATE_STEP))
#define GD_OPTIONS                                                                          \
    (ITERATIVE_OPTIONS | MOE_OPTION_BIT(MOE_OPT_STEP) | MOE_OPTION_BIT(MOE_OPT_BATCH_SIZE) | \
     MOE_OPTION_BIT(MOE_OPT_LINE_SEARCH))

static const moe_builtin_estimator builtins[] = {
    {&moe_estimator_em, EM_OPTIONS},
    {&moe_estimator_gem, GEM_OPTIONS},
    {&moe_estimator_gd, GD_OPTIONS},
};

const moe_builtin_estimator *moe_builtin_find(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; ++i)
        if (strcmp(builtins[i].ops->name, name) == 0)
            return &builtins[i];
    return NULL;
}
