/*
 * The models and rows the fitter-state harness continues sessions with, shared with the
 * program that writes its seed corpus so that the seeds are sessions of these shapes: two
 * features with an intercept, two experts, and three classes for the multinomial family;
 * every input seen, or the parts restricted to some of them, or an offset.
 */
#ifndef MOE_FUZZ_STATE_ROWS_H
#define MOE_FUZZ_STATE_ROWS_H

#include <stddef.h>

#include "moe/moe.h"

enum { STATE_FEATURES = 2, STATE_EXPERTS = 2, STATE_CLASSES = 3, STATE_ROWS = 24 };


/* How a model's parts see the two features (moe_model_spec, version 2): every input; the
   gate the second feature alone and the experts the first (restricted, with their
   intercepts); or, for the families that take one, the second feature as the experts'
   offset. A session saved on one shape may be continued on another. */
typedef enum state_inputs { STATE_ALL, STATE_RESTRICTED, STATE_OFFSET } state_inputs;

typedef struct state_shape {
    moe_family family;
    state_inputs inputs;
    const char *name; /* for the corpus' file names */
} state_shape;

static const state_shape state_shapes[] = {
    {MOE_FAMILY_GAUSSIAN, STATE_ALL, "gaussian"},
    {MOE_FAMILY_LOGISTIC, STATE_ALL, "logistic"},
    {MOE_FAMILY_MULTINOMIAL, STATE_ALL, "multinomial"},
    {MOE_FAMILY_GAUSSIAN, STATE_RESTRICTED, "gaussian_restricted"},
    {MOE_FAMILY_LOGISTIC, STATE_RESTRICTED, "logistic_restricted"},
    {MOE_FAMILY_MULTINOMIAL, STATE_RESTRICTED, "multinomial_restricted"},
    {MOE_FAMILY_GAUSSIAN, STATE_OFFSET, "gaussian_offset"},
    {MOE_FAMILY_LOGISTIC, STATE_OFFSET, "logistic_offset"},
};
enum { STATE_SHAPES = sizeof state_shapes / sizeof state_shapes[0] };

static inline moe_model_t *state_model_of(const state_shape *shape)
{
    static const unsigned char second[STATE_FEATURES] = {0, 1}, first[STATE_FEATURES] = {1, 0};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = shape->family;
    spec.n_experts = STATE_EXPERTS;
    spec.n_features = STATE_FEATURES;
    spec.n_classes = shape->family == MOE_FAMILY_MULTINOMIAL ? STATE_CLASSES : 0;
    if (shape->inputs == STATE_RESTRICTED) {
        spec.gate_features = second;
        spec.expert_features = first;
    } else if (shape->inputs == STATE_OFFSET) {
        spec.offset_feature = 1;
    }
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
