/*
 * What ismm.c and its saved state (ismm_state_file.c) share: the estimator's settings, its
 * options and the session it keeps between partial fits.
 */
#ifndef MOE_LIB_ISMM_SESSION_H
#define MOE_LIB_ISMM_SESSION_H

#include "estimators/ismm/ismm.h"
#include "common/option_fields.h"

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

/*
 * The estimator's own options (moe_estimator_ops.option_table), one row each
 * (common/option_fields.h): field of ismm_settings, name, type, flags, lower, upper,
 * default, keywords, description. A saved state's header holds them in this order
 * (ismm_state_file.c), and a loaded one is held to these bounds.
 */
#define ISMM_OPTIONS(X, S)                                                                   \
    X(S, step_scale, "step_scale", MOE_OPTION_REAL, MOE_OPTION_LOWER_OPEN, 0, 1, 1.0, NULL,   \
      "the step schedule's scale: gamma_r = step_scale (r + step_offset)^-step_decay")        \
    X(S, step_offset, "step_offset", MOE_OPTION_REAL, 0, -1, 1e300, -1.0, NULL,               \
      "the step schedule's offset in rows; negative: the warm start's size")                  \
    X(S, step_decay, "step_decay", MOE_OPTION_REAL, MOE_OPTION_LOWER_OPEN, 0.5, 1, 0.6, NULL, \
      "the step schedule's decay, in (0.5, 1] so that the steps sum to infinity and "         \
      "their squares do not")                                                                 \
    X(S, warm_start, "warm_start", MOE_OPTION_INTEGER, 0, 0, 100000000, 0, NULL,              \
      "rows of a session's warm start; 0: max(85, 10 per free parameter)")                    \
    X(S, bound, "bound", MOE_OPTION_KEYWORD, 0, 0, 0, ISMM_BOUND_LOCAL, ismm_bound_keywords,  \
      "the gate's quadratic bound: the paper's or Bohning's fixed curvature, or local: "      \
      "Jaakkola and Jordan's at each row's logit (two experts; else Bohning's)")             \
    X(S, gate_solve, "gate_solve", MOE_OPTION_KEYWORD, 0, 0, 0, ISMM_GATE_KRONECKER,          \
      ismm_gate_solve_keywords,                                                               \
      "the gate M-step's linear solve: kronecker (structured) or dense")                      \
    X(S, eps, "bound_eps", MOE_OPTION_REAL, MOE_OPTION_LOWER_OPEN, 0, 1, 1e-6, NULL,          \
      "the paper's bound: the smallest gate probability it allows for")                       \
    X(S, polyak, "polyak", MOE_OPTION_INTEGER, 0, 0, 9007199254740992.0, 0, NULL,             \
      "average the iterates from this step on; 0: no averaging")
enum { ISMM_OPTION_COUNT = MOE_OPTION_COUNT(ismm_settings, ISMM_OPTIONS) };
extern const moe_option_info ismm_option_table[ISMM_OPTION_COUNT];
extern const moe_option_list ismm_option_list;
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
