/* The constant table of built-in estimators. No mutable global registry. */
#include "fitter/fitter_impl.h"

#include <string.h>

static const struct builtin {
    const moe_estimator_ops *ops;
    const char *description;
} builtins[] = {
    { &moe_estimator_em, "expectation-maximisation: exact expert M-steps, a Newton gate step; "
                         "monotone, the default" },
    { &moe_estimator_gem, "gradient EM: one gradient step per block (gate, experts) on the EM "
                          "surrogate per iteration" },
    { &moe_estimator_gd, "gradient descent on the log-likelihood: full batch or mini-batches, "
                         "sgd, momentum, adam, adamw or rmsprop" },
    { &moe_estimator_cqt, "tensor method: experts from cross moments, then the gate; Gaussian "
                          "experts without intercept, K <= d" },
    { &moe_estimator_ismm, "incremental stochastic MM: streaming fits through "
                           "moe_fitter_partial_fit, one pass over the rows" },
    { &moe_estimator_ot, "distributed: local em fits on shards reduced by optimal transport "
                         "(moe_fitter_aggregate, or fit on one machine)" },
};

#define BUILTIN_COUNT (sizeof builtins / sizeof builtins[0])

const moe_estimator_ops *moe_builtin_find(const char *name)
{
    for (size_t i = 0; i < BUILTIN_COUNT; ++i)
        if (strcmp(builtins[i].ops->name, name) == 0)
            return builtins[i].ops;
    return NULL;
}

size_t moe_estimator_count(void)
{
    return BUILTIN_COUNT;
}

const char *moe_estimator_name(size_t index)
{
    return index < BUILTIN_COUNT ? builtins[index].ops->name : NULL;
}

const char *moe_estimator_description(size_t index)
{
    return index < BUILTIN_COUNT ? builtins[index].description : NULL;
}
