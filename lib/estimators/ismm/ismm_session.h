/*
 * What ismm.c and its saved state (ismm_state_file.c) share: the estimator's settings and
 * the session it keeps between partial fits.
 */
#ifndef MOE_LIB_ISMM_SESSION_H
#define MOE_LIB_ISMM_SESSION_H

#include "estimators/ismm/ismm.h"

#include <stdint.h>

typedef struct ismm_settings {
    double step_scale, step_offset, step_decay; /* gamma_t = scale (t + offset)^-decay;
                                                   offset < 0: the warm-start size */
    size_t warm_start;                          /* rows; 0: automatic */
    int bound;                                  /* ismm_bound */
    int gate_solve;                             /* ismm_gate_solve */
    double eps;
    size_t polyak; /* average the iterates from this step on; 0: off */
} ismm_settings;

typedef struct ismm_state {
    ismm_settings settings;
    int ready, started;
    ismm_shape shape;
    uint64_t steps, averaged;
    double variance_floor; /* absolute, fixed at the warm start */
    size_t warm_rows;      /* the warm start's size, fixed at the first call */
    size_t batch_size;     /* the session's batch rows (0: a call is a batch), fixed likewise */
    double *statistics;    /* s */
    double *parameters;    /* theta_t */
    double *average;       /* Polyak average */
    /* Rows waiting: the warm start's, then an unfinished batch's; room for `capacity` rows,
       grown on demand up to the session's most (session_rows). */
    size_t waiting, capacity;
    double *waiting_X, *waiting_y, *waiting_w;
    unsigned char *inputs; /* 2 p bytes: shape's gate_inputs and expert_inputs live here */
} ismm_state;

/* The estimator's own options (moe_estimator_ops.option_table) and their set and get. */
enum { ISMM_OPTION_COUNT = 8 };
extern const moe_option_info ismm_option_table[ISMM_OPTION_COUNT];
moe_status ismm_set_option(void *opaque, size_t index, double value);
moe_status ismm_get_option(const void *opaque, size_t index, double *value);

/* The estimator's create, destroy and reset (moe/estimator.h). */
moe_status ismm_create(void **out);
void ismm_destroy(void *opaque);
moe_status ismm_reset(void *opaque);

/* A model's shape as a session keeps it, and whether two shapes are one. */
ismm_shape ismm_shape_of(const moe_model_t *model);
int ismm_same_shape(const ismm_shape *a, const ismm_shape *b);

/* The session's arrays: freed (the state then holds none), allocated for a shape, and the
   waiting rows' room grown to `rows`. */
void ismm_release(ismm_state *state);
moe_status ismm_allocate(ismm_state *state, const ismm_shape *shape, size_t warm_rows,
                         size_t batch_size);
moe_status ismm_reserve(ismm_state *state, size_t rows);
/* The model's expert rows (multinomial: the classes, the reference included). */
size_t ismm_model_expert_rows(const ismm_shape *shape);
/* The warm start's rows the settings ask for on this shape. */
size_t ismm_configured_warm_rows(const ismm_settings *settings, const ismm_shape *shape);

/* The estimator's save_state and load_state (moe/estimator.h). */
moe_status ismm_save_state(const void *opaque, void *buffer, size_t capacity, size_t *written);
moe_status ismm_load_state(void *opaque, const void *buffer, size_t size);

#endif
