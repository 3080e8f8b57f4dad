/*
 * The models and rows the fitter-state harness continues sessions with, shared with the
 * program that writes its seed corpus so that the seeds are sessions of these shapes: two
 * features with an intercept, two experts, and three classes for the multinomial family.
 */
#ifndef MOE_FUZZ_STATE_ROWS_H
#define MOE_FUZZ_STATE_ROWS_H

#include <stddef.h>

#include "moe/moe.h"

enum { STATE_FEATURES = 2, STATE_EXPERTS = 2, STATE_CLASSES = 3, STATE_ROWS = 24 };

static const moe_family state_families[3] = {MOE_FAMILY_GAUSSIAN, MOE_FAMILY_LOGISTIC,
                                             MOE_FAMILY_MULTINOMIAL};

static inline moe_model_t *state_model(moe_family family)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = STATE_EXPERTS;
    spec.n_features = STATE_FEATURES;
    spec.n_classes = family == MOE_FAMILY_MULTINOMIAL ? STATE_CLASSES : 0;
    moe_model_t *model = NULL;
    return moe_model_create(&model, &spec) == MOE_OK ? model : NULL;
}

/* Rows `first` to `first + STATE_ROWS` of a fixed stream: two regimes split by the first
   feature, labels valid for the family. */
static inline void state_rows(moe_family family, size_t first, double *X, double *y)
{
    for (size_t i = 0; i < STATE_ROWS; ++i) {
        size_t r = first + i;
        double a = (double)((r * 37 + 11) % 41) / 20.0 - 1.0;
        double b = (double)((r * 53 + 7) % 29) / 14.0 - 1.0;
        X[i * STATE_FEATURES] = a;
        X[i * STATE_FEATURES + 1] = b;
        double noise = (double)((r * 17 + 3) % 13) / 26.0 - 0.25;
        if (family == MOE_FAMILY_GAUSSIAN)
            y[i] = (a < 0.0 ? 1.0 + 2.0 * b : -2.0 - b) + noise;
        else if (family == MOE_FAMILY_LOGISTIC)
            y[i] = (a + noise > 0.0) == (b > 0.0) ? 1.0 : 0.0;
        else
            y[i] = (double)((r + (a > 0.0 ? 1u : 0u)) % STATE_CLASSES);
    }
}

#endif
