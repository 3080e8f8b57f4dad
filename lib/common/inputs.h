/*
 * Which inputs of the design x~ = [1, x] a part of the model (the gate, the experts) sees.
 * A model keeps every coefficient array K x p over the whole design and holds the
 * coefficients of unseen inputs at zero (and an expert offset's at one), so that every
 * pass over the data (the fused E-step, posteriors, predictions) runs unchanged on one
 * design block per row. Only the solvers need to know: a Newton or least-squares system
 * is restricted to the free inputs by making the others' rows and columns those of the
 * identity with a zero right-hand side, so their step is exactly zero and the other
 * unknowns solve the restricted system; gradients are zeroed in the same places.
 *
 * An inputs array is NULL (every input free) or p bytes of enum moe_input_role.
 */
#ifndef MOE_LIB_INPUTS_H
#define MOE_LIB_INPUTS_H

#include <stddef.h>

#include "moe/model.h"

/* The roles are moe_input_role's (moe/model.h). */

static inline int moe_input_free(const unsigned char *inputs, size_t a)
{
    return inputs == NULL || inputs[a] == MOE_INPUT_FREE;
}

/* Free inputs among p. */
size_t moe_inputs_free_count(size_t p, const unsigned char *inputs);

/* The value a held coefficient has (0 or 1); only for inputs that are not free. */
static inline double moe_input_held_value(const unsigned char *inputs, size_t a)
{
    return inputs[a] == MOE_INPUT_OFFSET ? 1.0 : 0.0;
}

/* Zero the entries of held inputs in `blocks` consecutive vectors of p (a gradient over
   the gate's free rows, or over experts). */
void moe_inputs_zero(size_t blocks, size_t p, const unsigned char *inputs, double *vector);

/* Restrict a step system over `blocks` x p unknowns (matrix m x m row-major, m = blocks *
   p; rhs m, may be NULL): the held unknowns' rows and columns become the identity's and
   their right-hand side zero, so their step is zero. */
void moe_inputs_restrict_step(size_t blocks, size_t p, const unsigned char *inputs,
                              double *matrix, double *rhs);

/* Restrict normal equations G b = r for coefficients (p unknowns) whose held values are
   known: r loses the held columns' contributions, then the held rows and columns become
   the identity's with the held value on the right, so the solution holds it exactly. */
void moe_inputs_restrict_values(size_t p, const unsigned char *inputs, double *matrix,
                                double *rhs);

/* Set the held coefficients of `blocks` vectors of p to their values; returns how many
   changed. */
size_t moe_inputs_hold(size_t blocks, size_t p, const unsigned char *inputs, double *vector);

/* The first held coefficient whose value differs from its held value, or blocks * p. */
size_t moe_inputs_first_violation(size_t blocks, size_t p, const unsigned char *inputs,
                                  const double *vector);

/* The inputs (intercept first, p = n_features + intercept bytes) one part of a spec sees:
   the gate (gate nonzero) or the experts. A version-1 spec's parts see every input. */
void moe_spec_part_inputs(const moe_model_spec *spec, int gate, unsigned char *inputs);

/* inputs (p roles), or NULL when every one is free: the form the functions above take. */
static inline const unsigned char *moe_inputs_or_every(size_t p, const unsigned char *inputs)
{
    return moe_inputs_free_count(p, inputs) == p ? NULL : inputs;
}

#endif
