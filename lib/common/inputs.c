/* Restricting solvers and gradients to the inputs a part of the model sees (inputs.h). */
#include "common/inputs.h"

#include <string.h>

size_t moe_inputs_free_count(size_t p, const unsigned char *inputs)
{
    size_t count = 0;
    for (size_t a = 0; a < p; ++a)
        count += (size_t)moe_input_free(inputs, a);
    return count;
}

void moe_inputs_zero(size_t blocks, size_t p, const unsigned char *inputs, double *vector)
{
    if (inputs == NULL)
        return;
    for (size_t block = 0; block < blocks; ++block)
        for (size_t a = 0; a < p; ++a)
            if (inputs[a] != MOE_INPUT_FREE)
                vector[block * p + a] = 0.0;
}

static void identity_row_column(size_t m, size_t index, double *matrix)
{
    for (size_t b = 0; b < m; ++b) {
        matrix[index * m + b] = 0.0;
        matrix[b * m + index] = 0.0;
    }
    matrix[index * m + index] = 1.0;
}

void moe_inputs_restrict_step(size_t blocks, size_t p, const unsigned char *inputs,
                              double *matrix, double *rhs)
{
    if (inputs == NULL)
        return;
    size_t m = blocks * p;
    for (size_t block = 0; block < blocks; ++block)
        for (size_t a = 0; a < p; ++a) {
            if (inputs[a] == MOE_INPUT_FREE)
                continue;
            size_t index = block * p + a;
            identity_row_column(m, index, matrix);
            if (rhs != NULL)
                rhs[index] = 0.0;
        }
}

void moe_inputs_restrict_values(size_t p, const unsigned char *inputs, double *matrix,
                                double *rhs)
{
    if (inputs == NULL)
        return;
    for (size_t a = 0; a < p; ++a) {
        if (inputs[a] == MOE_INPUT_FREE)
            continue;
        double value = moe_input_held_value(inputs, a);
        for (size_t b = 0; b < p; ++b)
            if (inputs[b] == MOE_INPUT_FREE)
                rhs[b] -= matrix[b * p + a] * value;
    }
    for (size_t a = 0; a < p; ++a)
        if (inputs[a] != MOE_INPUT_FREE) {
            identity_row_column(p, a, matrix);
            rhs[a] = moe_input_held_value(inputs, a);
        }
}

size_t moe_inputs_hold(size_t blocks, size_t p, const unsigned char *inputs, double *vector)
{
    size_t changed = 0;
    if (inputs == NULL)
        return 0;
    for (size_t block = 0; block < blocks; ++block)
        for (size_t a = 0; a < p; ++a) {
            if (inputs[a] == MOE_INPUT_FREE)
                continue;
            double value = moe_input_held_value(inputs, a);
            changed += vector[block * p + a] != value;
            vector[block * p + a] = value;
        }
    return changed;
}

size_t moe_inputs_first_violation(size_t blocks, size_t p, const unsigned char *inputs,
                                  const double *vector)
{
    if (inputs != NULL)
        for (size_t index = 0; index < blocks * p; ++index) {
            size_t a = index % p;
            if (inputs[a] != MOE_INPUT_FREE && vector[index] != moe_input_held_value(inputs, a))
                return index;
        }
    return blocks * p;
}

void moe_spec_part_inputs(const moe_model_spec *spec, int gate, unsigned char *inputs)
{
    int later = spec->version >= 2;
    const unsigned char *features =
        !later ? NULL : gate ? spec->gate_features : spec->expert_features;
    int intercept = !later ? 1 : gate ? spec->gate_intercept : spec->expert_intercept;
    size_t first = (size_t)spec->intercept;
    if (spec->intercept)
        inputs[0] = intercept ? MOE_INPUT_FREE : MOE_INPUT_UNSEEN;
    for (size_t j = 0; j < spec->n_features; ++j)
        inputs[first + j] = features == NULL || features[j] ? MOE_INPUT_FREE : MOE_INPUT_UNSEEN;
    if (later && !gate && spec->offset_feature >= 0)
        inputs[first + (size_t)spec->offset_feature] = MOE_INPUT_OFFSET;
    if (spec->version >= 3 && spec->trials_feature >= 0)
        inputs[first + (size_t)spec->trials_feature] = gate ? MOE_INPUT_UNSEEN : MOE_INPUT_TRIALS;
}
