/* The model handle's layout, shared by the model, family and estimator code. */
#ifndef MOE_LIB_MODEL_IMPL_H
#define MOE_LIB_MODEL_IMPL_H

#include "moe/model.h"
#include "common/error.h"
#include "common/inputs.h"

struct moe_family_ops;

struct moe_model {
    moe_family family;
    moe_link link;
    size_t n_experts;   /* K */
    size_t n_features;  /* d */
    size_t n_classes;   /* multinomial C, else 0 */
    int intercept;      /* 0 or 1 */
    size_t n_inputs;    /* p = d + intercept */
    size_t expert_rows; /* 1, or C for multinomial */
    double *gate;       /* K x p, row K-1 is zero */
    double *experts;    /* K x expert_rows x p */
    double *variances;  /* K, Gaussian and Student-t (squared scales), else NULL */
    double *degrees;    /* K, Student-t degrees of freedom, else NULL */
    /* The inputs each part sees (common/inputs.h): NULL when it sees every input, else p
       bytes; the experts' MOE_INPUT_OFFSET marks the offset. */
    unsigned char *gate_inputs;
    unsigned char *expert_inputs;
    size_t trials_input; /* binomial: the design column of the trials, else n_inputs */
    const struct moe_family_ops *family_ops;
    /* moe_model_set_name: NULL until a name is set, then moe_name_slots() entries
       (features, the response, the class labels), each NULL or an owned string. */
    char **names;
    char message[MOE_MESSAGE_SIZE];
};

/* Name slots: d features, the response, and the class labels (C multinomial, 2 logistic). */
size_t moe_name_slots(const struct moe_model *model);
/* The slot of (kind, index), or moe_name_slots() when out of range. */
size_t moe_name_slot(const struct moe_model *model, int kind, size_t index);
/* Copy every name of source into target (same structure); 0 when out of memory. */
int moe_model_copy_names(struct moe_model *target, const struct moe_model *source);
/* Whether two models' gates see the same inputs and their experts too (offset included). */
int moe_model_same_inputs(const struct moe_model *a, const struct moe_model *b);

/* A new Student-t expert's degrees of freedom. */
#define MOE_DEGREES_DEFAULT 4.0

/* nu within [MOE_DEGREES_MIN, MOE_DEGREES_MAX] (false for NaN). */
static inline int moe_degrees_valid(double nu)
{
    return nu >= MOE_DEGREES_MIN && nu <= MOE_DEGREES_MAX;
}

/* Inputs whose coefficients are estimated, in the gate and in each expert row. */
static inline size_t moe_gate_free_inputs(const struct moe_model *model)
{
    return moe_inputs_free_count(model->n_inputs, model->gate_inputs);
}

static inline size_t moe_expert_free_inputs(const struct moe_model *model)
{
    return moe_inputs_free_count(model->n_inputs, model->expert_inputs);
}

/* Nonzero when the gate and the experts see every input (no restriction to apply). */
static inline int moe_model_sees_all(const struct moe_model *model)
{
    return model->gate_inputs == NULL && model->expert_inputs == NULL;
}

/* Sizes of the parameter arrays. */
static inline size_t moe_gate_size(const struct moe_model *model)
{
    return model->n_experts * model->n_inputs;
}

static inline size_t moe_experts_size(const struct moe_model *model)
{
    return model->n_experts * model->expert_rows * model->n_inputs;
}

/* Validate a spec and allocate a model with neutral parameters; failures set `message`
   (may be NULL) and the thread's message. */
moe_status moe_model_allocate(struct moe_model **out, const moe_model_spec *spec, char *message);


/* Subtract the last of `count` rows of p values from every row so that it becomes zero (the
   gate's reference expert, a multinomial expert's reference class). Returns -1, with rows
   unchanged, when a difference overflows. */
int moe_rows_rereference(double *rows, size_t count, size_t p);

#endif
