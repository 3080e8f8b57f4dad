/*
 * ismm's options (the table and fields its list in ismm_session.h expands to, and their set
 * and get) and the session it keeps between partial fits: its life, its shape and its arrays.
 */
#include "estimators/ismm/ismm_session.h"
#include "common/alloc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- Options --------------------------------------------------------------------------------- */

static const char *const ismm_bound_keywords[] = {"paper", "bohning", "local", NULL};
static const char *const ismm_gate_solve_keywords[] = {"kronecker", "dense", NULL};

MOE_OPTION_LIST(, ismm, ismm_settings, ISMM_OPTIONS);

moe_status ismm_set_option(void *opaque, size_t index, double value)
{
    ismm_state *state = opaque;
    ismm_settings next = state->settings;
    moe_status status = moe_option_list_set(&ismm_option_list, &next, index, value);
    if (status != MOE_OK)
        return status;
    /* The schedule, the warm start and the surrogate cannot change in the middle of a session
       (from its first call on: the warm start's size is fixed then). */
    if (state->ready && memcmp(&next, &state->settings, sizeof next) != 0)
        return MOE_ERR_INVALID_ARGUMENT;
    state->settings = next;
    return MOE_OK;
}

moe_status ismm_get_option(const void *opaque, size_t index, double *value)
{
    const ismm_state *state = opaque;
    return moe_option_list_get(&ismm_option_list, &state->settings, index, value);
}

/* ---- State ----------------------------------------------------------------------------------- */

void ismm_release(ismm_state *state)
{
    free(state->statistics);
    free(state->parameters);
    free(state->average);
    free(state->waiting_X);
    free(state->waiting_y);
    free(state->waiting_w);
    free(state->inputs);
    ismm_settings settings = state->settings;
    memset(state, 0, sizeof *state);
    state->settings = settings;
}

moe_status ismm_create(void **out)
{
    ismm_state *state = calloc(1, sizeof *state);
    if (state == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    *out = state; /* the fitter sets every default from ismm_option_table */
    return MOE_OK;
}

void ismm_destroy(void *opaque)
{
    if (opaque == NULL)
        return;
    ismm_release(opaque);
    free(opaque);
}

moe_status ismm_reset(void *opaque)
{
    ismm_release(opaque);
    return MOE_OK;
}

ismm_shape ismm_shape_of(const moe_model_t *model)
{
    ismm_shape shape;
    shape.K = moe_model_n_experts(model);
    shape.d = moe_model_n_features(model);
    shape.p = moe_model_n_inputs(model);
    shape.gaussian = moe_model_family(model) == MOE_FAMILY_GAUSSIAN;
    shape.multinomial = moe_model_family(model) == MOE_FAMILY_MULTINOMIAL;
    /* The reference class's row is not a parameter: the surrogate's classes are the free
       rows and the reference, as the model's are. */
    shape.rows = moe_model_expert_rows(model) - (shape.multinomial ? 1 : 0);
    shape.intercept = moe_model_has_intercept(model);
    return shape;
}

int ismm_same_shape(const ismm_shape *a, const ismm_shape *b)
{
    return a->K == b->K && a->d == b->d && a->p == b->p && a->rows == b->rows &&
           a->multinomial == b->multinomial &&
           a->gaussian == b->gaussian && a->intercept == b->intercept;
}

/* Ten rows per free parameter, from the shape alone (a loaded state checks its own): with
   the default offset the first steps average over about warm^0.6 rows, and at twice the
   free parameters (85 rows at d = 10, K = 2) an expert's least squares saw fewer rows than
   its 11 coefficients: single-row streams collapsed an expert's variance on some streams of
   setting 6.2 (on 1 of 50 with six per parameter). */
static size_t automatic_warm_rows(const ismm_shape *shape)
{
    size_t expert = shape->gaussian ? shape->p + 1 : shape->rows * shape->p;
    size_t rows = 10 * ((shape->K - 1) * shape->p + shape->K * expert);
    return rows > 85 ? rows : 85;
}

size_t ismm_configured_warm_rows(const ismm_settings *settings, const ismm_shape *shape)
{
    return settings->warm_start > 0 ? settings->warm_start : automatic_warm_rows(shape);
}

/* The most rows that ever wait: the warm start's, or an unfinished batch's. */
static size_t session_rows(const ismm_state *state)
{
    return state->warm_rows > state->batch_size ? state->warm_rows : state->batch_size;
}

/* The statistics, the iterate and the average; the waiting rows' buffers start empty. */
moe_status ismm_allocate(ismm_state *state, const ismm_shape *shape, size_t warm_rows,
                           size_t batch_size)
{
    state->shape = *shape;
    state->shape.gate_inputs = state->shape.expert_inputs = NULL;
    state->warm_rows = warm_rows;
    state->batch_size = batch_size;
    state->statistics = calloc(ismm_statistics_size(shape), sizeof(double));
    state->parameters = calloc(ismm_parameters_size(shape), sizeof(double));
    state->average = calloc(ismm_parameters_size(shape), sizeof(double));
    state->inputs = malloc(2 * shape->p + 1);
    if (state->statistics == NULL || state->parameters == NULL || state->average == NULL ||
        state->inputs == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    state->ready = 1;
    return MOE_OK;
}

static int grow_array(double **array, size_t count)
{
    if (count > SIZE_MAX / sizeof(double))
        return 1;
    double *grown = realloc(*array, count * sizeof(double));
    if (grown == NULL)
        return 1;
    *array = grown;
    return 0;
}

/* Room for `rows` waiting rows, keeping those there: doubling, at most the session's most, so
   a long warm start or batch is not reserved before its rows come. */
moe_status ismm_reserve(ismm_state *state, size_t rows)
{
    if (rows <= state->capacity)
        return MOE_OK;
    size_t most = session_rows(state), d = state->shape.d > 0 ? state->shape.d : 1;
    if (rows > most)
        return MOE_ERR_INTERNAL; /* the session's rules never let more rows wait */
    size_t grown = state->capacity > most / 2 ? most : 2 * state->capacity;
    if (grown < rows)
        grown = rows;
    if (grown > SIZE_MAX / d || grow_array(&state->waiting_X, grown * d) ||
        grow_array(&state->waiting_y, grown) || grow_array(&state->waiting_w, grown))
        return MOE_ERR_OUT_OF_MEMORY;
    state->capacity = grown;
    return MOE_OK;
}

