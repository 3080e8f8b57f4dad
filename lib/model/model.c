/* Model handle: creation, copies, structure getters and parameter access. */
#include "model/model_impl.h"
#include "model/family.h"
#include "common/alloc.h"
#include "common/check.h"
#include "common/versioned.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Limits that keep every size product far from overflow and every allocation sane. */
#define MOE_MAX_EXPERTS 4096
#define MOE_MAX_FEATURES (1u << 24)
#define MOE_MAX_CLASSES 65536
#define MOE_MAX_PARAMETERS ((size_t)1 << 31)

/* moe_model_spec's versions (common/versioned.h): 1.1 appended the inputs of the parts, 1.2
   the trials. */
static const moe_struct_layout spec_layout = {
    "model spec", MOE_MODEL_SPEC_VERSION,
    {offsetof(moe_model_spec, gate_features), offsetof(moe_model_spec, trials_feature),
     sizeof(moe_model_spec)}};
_Static_assert(MOE_MODEL_SPEC_VERSION == 3, "a new version appends its size to spec_layout");

moe_status moe_model_spec_init(moe_model_spec *spec, unsigned int version)
{
    if (spec == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "spec is NULL");
    moe_model_spec defaults = MOE_MODEL_SPEC_INIT;
    return moe_struct_fill(spec, version, &defaults, &spec_layout, NULL);
}

static moe_status check_parts(const moe_model_spec *spec, const struct moe_family_ops *ops,
                              char *message);

static moe_status check_spec(const moe_model_spec *spec, char *message)
{
    moe_status status =
        moe_check_struct_version(message, "model spec", spec->version, MOE_MODEL_SPEC_VERSION);
    if (status != MOE_OK)
        return status;
    const struct moe_family_ops *ops = moe_family_lookup(spec->family);
    if (ops == NULL)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT, "unknown expert family %d",
                        (int)spec->family);
    if (spec->n_experts < 1 || spec->n_experts > MOE_MAX_EXPERTS)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "n_experts must be in 1..%d, got %zu", MOE_MAX_EXPERTS, spec->n_experts);
    if (spec->n_features > MOE_MAX_FEATURES)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "n_features must be at most %u, got %zu", MOE_MAX_FEATURES,
                        spec->n_features);
    if (spec->n_features == 0 && !spec->intercept)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "a model without intercept needs n_features >= 1");
    if (spec->intercept != 0 && spec->intercept != 1)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT, "intercept must be 0 or 1, got %d",
                        spec->intercept);
    if (ops->uses_classes) {
        if (spec->n_classes < 2 || spec->n_classes > MOE_MAX_CLASSES)
            return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                            "n_classes must be in 2..%d for family %s, got %zu", MOE_MAX_CLASSES,
                            ops->name, spec->n_classes);
    } else if (spec->n_classes != 0) {
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "n_classes must be 0 for family %s, got %zu", ops->name,
                        spec->n_classes);
    }
    if (!ops->supports_link(spec->link))
        return moe_fail(message, MOE_ERR_UNSUPPORTED, "link %d is not supported by family %s",
                        (int)spec->link, ops->name);
    size_t rows = ops->uses_classes ? spec->n_classes : 1;
    size_t inputs = spec->n_features + (size_t)spec->intercept;
    if (spec->n_experts * rows > MOE_MAX_PARAMETERS / inputs)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "model too large: %zu experts x %zu rows x %zu inputs", spec->n_experts,
                        rows, inputs);
    return spec->version >= 2 ? check_parts(spec, ops, message) : MOE_OK;
}

/* Which inputs each part sees; NULL for a part that sees every input. */
static moe_status part_inputs_allocate(const moe_model_spec *spec, int gate,
                                       unsigned char **out, char *message)
{
    *out = NULL;
    if (spec->version < 2)
        return MOE_OK;
    size_t p = spec->n_features + (size_t)spec->intercept;
    unsigned char *inputs = malloc(p);
    if (inputs == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the model's inputs");
    moe_spec_part_inputs(spec, gate, inputs);
    if (moe_inputs_free_count(p, inputs) == p)
        free(inputs);
    else
        *out = inputs;
    return MOE_OK;
}

/* A version-3 spec's trials column: a feature other than the offset, binomial experts'. */
static moe_status check_trials(const moe_model_spec *spec, const struct moe_family_ops *ops,
                               char *message)
{
    if (spec->version < 3 || spec->trials_feature == -1)
        return MOE_OK;
    if (!ops->takes_trials)
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "family %s takes no trials (trials_feature must be -1, got %ld)",
                        ops->name, spec->trials_feature);
    if (spec->trials_feature < -1 || spec->trials_feature >= (long)spec->n_features)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "trials_feature must be -1 (none) or a feature in 0..%zu, got %ld",
                        spec->n_features == 0 ? 0 : spec->n_features - 1, spec->trials_feature);
    if (spec->trials_feature == spec->offset_feature)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "feature %ld cannot be both the offset and the trials",
                        spec->trials_feature);
    return MOE_OK;
}

static moe_status check_parts(const moe_model_spec *spec, const struct moe_family_ops *ops,
                              char *message)
{
    if ((spec->gate_intercept != 0 && spec->gate_intercept != 1) ||
        (spec->expert_intercept != 0 && spec->expert_intercept != 1))
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "gate_intercept and expert_intercept must be 0 or 1, got %d and %d",
                        spec->gate_intercept, spec->expert_intercept);
    if (spec->offset_feature < -1 || spec->offset_feature >= (long)spec->n_features) {
        if (spec->n_features == 0)
            return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                            "offset_feature must be -1 (none): the model has no features, "
                            "got %ld",
                            spec->offset_feature);
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "offset_feature must be -1 (none) or a feature in 0..%zu, got %ld",
                        spec->n_features - 1, spec->offset_feature);
    }
    if (spec->offset_feature >= 0 && spec->link != MOE_LINK_IDENTITY)
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "an offset needs the identity link (got %s)", moe_link_name(spec->link));
    if (spec->offset_feature >= 0 && ops->uses_classes)
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "family %s takes no offset: it would shift every class's logit alike",
                        ops->name);
    moe_status status = check_trials(spec, ops, message);
    if (status != MOE_OK)
        return status;
    size_t p = spec->n_features + (size_t)spec->intercept;
    unsigned char *inputs = malloc(p);
    if (inputs == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the model's inputs");
    size_t gate_free, expert_free;
    moe_spec_part_inputs(spec, 1, inputs);
    gate_free = moe_inputs_free_count(p, inputs);
    moe_spec_part_inputs(spec, 0, inputs);
    expert_free = moe_inputs_free_count(p, inputs);
    free(inputs);
    if (gate_free == 0 || expert_free == 0)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "the %s sees no input: give it a feature or the intercept",
                        gate_free == 0 ? "gate" : "experts");
    return MOE_OK;
}

moe_status moe_model_allocate(struct moe_model **out, const moe_model_spec *spec, char *message)
{
    moe_status status = check_spec(spec, message);
    if (status != MOE_OK)
        return status;
    const struct moe_family_ops *ops = moe_family_lookup(spec->family);
    struct moe_model *model = calloc(1, sizeof *model);
    if (model == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a model");
    model->family = spec->family;
    model->link = spec->link;
    model->n_experts = spec->n_experts;
    model->n_features = spec->n_features;
    model->n_classes = spec->n_classes;
    model->intercept = spec->intercept;
    model->n_inputs = spec->n_features + (size_t)spec->intercept;
    model->expert_rows = ops->uses_classes ? spec->n_classes : 1;
    model->family_ops = ops;
    model->gate = calloc(moe_gate_size(model), sizeof(double));
    model->experts = calloc(moe_experts_size(model), sizeof(double));
    if (ops->has_variance)
        model->variances = malloc(model->n_experts * sizeof(double));
    if (ops->has_degrees)
        model->degrees = malloc(model->n_experts * sizeof(double));
    if (model->gate == NULL || model->experts == NULL ||
        (ops->has_variance && model->variances == NULL) ||
        (ops->has_degrees && model->degrees == NULL)) {
        moe_model_free(model);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate model parameters");
    }
    if ((status = part_inputs_allocate(spec, 1, &model->gate_inputs, message)) != MOE_OK ||
        (status = part_inputs_allocate(spec, 0, &model->expert_inputs, message)) != MOE_OK) {
        moe_model_free(model);
        return status;
    }
    moe_inputs_hold(model->n_experts * model->expert_rows, model->n_inputs,
                    model->expert_inputs, model->experts);
    if (model->variances != NULL)
        for (size_t k = 0; k < model->n_experts; ++k)
            model->variances[k] = 1.0;
    if (model->degrees != NULL)
        for (size_t k = 0; k < model->n_experts; ++k)
            model->degrees[k] = ops->default_degrees;
    model->trials_input = model->n_inputs;
    for (size_t a = 0; model->expert_inputs != NULL && a < model->n_inputs; ++a)
        if (model->expert_inputs[a] == MOE_INPUT_TRIALS)
            model->trials_input = a;
    *out = model;
    return MOE_OK;
}

moe_status moe_model_create(moe_model_t **out, const moe_model_spec *spec)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (spec == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "spec is NULL");
    return moe_model_allocate(out, spec, NULL);
}

static char *copy_string(const char *text)
{
    size_t length = strlen(text);
    char *copy = malloc(length + 1);
    if (copy != NULL)
        memcpy(copy, text, length + 1);
    return copy;
}

static void free_names(struct moe_model *model)
{
    if (model->names == NULL)
        return;
    for (size_t slot = 0; slot < moe_name_slots(model); ++slot)
        free(model->names[slot]);
    free(model->names);
    model->names = NULL;
}

size_t moe_name_slots(const struct moe_model *model)
{
    size_t classes = model->family == MOE_FAMILY_MULTINOMIAL ? model->n_classes
                     : model->family == MOE_FAMILY_LOGISTIC  ? 2
                                                              : 0;
    return model->n_features + 1 + classes;
}

size_t moe_name_slot(const struct moe_model *model, int kind, size_t index)
{
    size_t slots = moe_name_slots(model), d = model->n_features;
    switch (kind) {
    case MOE_NAME_FEATURE: return index < d ? index : slots;
    case MOE_NAME_RESPONSE: return index == 0 ? d : slots;
    case MOE_NAME_CLASS: return index < slots - d - 1 ? d + 1 + index : slots;
    default: return slots;
    }
}

int moe_model_copy_names(struct moe_model *target, const struct moe_model *source)
{
    free_names(target);
    if (source->names == NULL)
        return 1;
    size_t slots = moe_name_slots(source);
    target->names = calloc(slots, sizeof(char *));
    if (target->names == NULL)
        return 0;
    for (size_t slot = 0; slot < slots; ++slot)
        if (source->names[slot] != NULL &&
            (target->names[slot] = copy_string(source->names[slot])) == NULL) {
            free_names(target);
            return 0;
        }
    return 1;
}

moe_status moe_model_set_name(moe_model_t *model, moe_name_kind kind, size_t index,
                              const char *name)
{
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    size_t slots = moe_name_slots(model);
    if (kind != MOE_NAME_FEATURE && kind != MOE_NAME_RESPONSE && kind != MOE_NAME_CLASS)
        return moe_fail(model->message, MOE_ERR_INVALID_ARGUMENT, "unknown name kind %d",
                        (int)kind);
    size_t slot = moe_name_slot(model, kind, index);
    if (slot == slots)
        return moe_fail(model->message, MOE_ERR_INVALID_ARGUMENT,
                        "%s name %zu is out of range for this model",
                        kind == MOE_NAME_FEATURE ? "feature"
                        : kind == MOE_NAME_RESPONSE ? "response" : "class",
                        index);
    size_t length = name == NULL ? 0 : strlen(name);
    if (name != NULL && (length == 0 || length > MOE_NAME_MAX))
        return moe_fail(model->message, MOE_ERR_INVALID_ARGUMENT,
                        "a name takes 1 to %d bytes, this one %zu", MOE_NAME_MAX, length);
    char *copy = NULL;
    if (name != NULL && (copy = copy_string(name)) == NULL)
        return moe_fail(model->message, MOE_ERR_OUT_OF_MEMORY, "cannot copy a name");
    if (model->names == NULL) {
        if (copy == NULL)
            return MOE_OK;
        if ((model->names = calloc(slots, sizeof(char *))) == NULL) {
            free(copy);
            return moe_fail(model->message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate names");
        }
    }
    free(model->names[slot]);
    model->names[slot] = copy;
    return MOE_OK;
}

const char *moe_model_get_name(const moe_model_t *model, moe_name_kind kind, size_t index)
{
    if (model == NULL || model->names == NULL)
        return NULL;
    size_t slot = moe_name_slot(model, (int)kind, index);
    return slot < moe_name_slots(model) ? model->names[slot] : NULL;
}

void moe_model_free(moe_model_t *model)
{
    if (model == NULL)
        return;
    free_names(model);
    free(model->gate);
    free(model->experts);
    free(model->variances);
    free(model->degrees);
    free(model->gate_inputs);
    free(model->expert_inputs);
    free(model);
}

static int same_inputs(size_t p, const unsigned char *a, const unsigned char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return memcmp(a, b, p) == 0;
}

int moe_model_same_inputs(const struct moe_model *a, const struct moe_model *b)
{
    return a->n_inputs == b->n_inputs && same_inputs(a->n_inputs, a->gate_inputs, b->gate_inputs) &&
           same_inputs(a->n_inputs, a->expert_inputs, b->expert_inputs);
}

static int same_structure(const struct moe_model *a, const struct moe_model *b)
{
    return a->family == b->family && a->link == b->link && a->n_experts == b->n_experts &&
           a->n_features == b->n_features && a->n_classes == b->n_classes &&
           a->intercept == b->intercept && moe_model_same_inputs(a, b);
}

moe_status moe_model_copy_parameters(moe_model_t *target, const moe_model_t *source)
{
    if (target == NULL || source == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL",
                        target == NULL ? "target" : "source");
    if (!same_structure(target, source))
        return moe_fail(target->message, MOE_ERR_DIMENSION,
                        "the models differ in structure (family, link, experts, features, "
                        "classes, intercept, or the inputs the gate and experts see)");
    if (target == source)
        return MOE_OK;
    memcpy(target->gate, source->gate, moe_gate_size(source) * sizeof(double));
    memcpy(target->experts, source->experts, moe_experts_size(source) * sizeof(double));
    if (source->variances != NULL)
        memcpy(target->variances, source->variances, source->n_experts * sizeof(double));
    if (source->degrees != NULL)
        memcpy(target->degrees, source->degrees, source->n_experts * sizeof(double));
    return MOE_OK;
}

moe_status moe_model_get_spec(const moe_model_t *model, moe_model_spec *spec)
{
    if (model == NULL || spec == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", model == NULL ? "model" : "spec");
    moe_status status =
        moe_check_struct_version(NULL, "model spec", spec->version, MOE_MODEL_SPEC_VERSION);
    if (status != MOE_OK)
        return status;
    spec->family = model->family;
    spec->n_experts = model->n_experts;
    spec->n_features = model->n_features;
    spec->intercept = model->intercept;
    spec->n_classes = model->n_classes;
    spec->link = model->link;
    if (spec->version >= 2) {
        size_t first = (size_t)model->intercept;
        spec->gate_features = model->gate_inputs ? model->gate_inputs + first : NULL;
        spec->expert_features = model->expert_inputs ? model->expert_inputs + first : NULL;
        spec->gate_intercept = model->intercept ? moe_input_free(model->gate_inputs, 0) : 1;
        spec->expert_intercept = model->intercept ? moe_input_free(model->expert_inputs, 0) : 1;
        spec->offset_feature = -1;
        for (size_t j = 0; model->expert_inputs != NULL && j < model->n_features; ++j)
            if (model->expert_inputs[first + j] == MOE_INPUT_OFFSET)
                spec->offset_feature = (long)j;
    }
    if (spec->version >= 3)
        spec->trials_feature = model->trials_input < model->n_inputs
                                   ? (long)(model->trials_input - (size_t)model->intercept)
                                   : -1;
    return MOE_OK;
}

moe_status moe_model_clone(moe_model_t **out, const moe_model_t *model)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_model_get_spec(model, &spec);
    struct moe_model *copy;
    moe_status status = moe_model_allocate(&copy, &spec, NULL);
    if (status != MOE_OK)
        return status;
    moe_model_copy_parameters(copy, model);
    if (!moe_model_copy_names(copy, model)) {
        moe_model_free(copy);
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot copy the model's names");
    }
    *out = copy;
    return MOE_OK;
}

const char *moe_model_last_error(const moe_model_t *model)
{
    return model == NULL ? "" : model->message;
}

moe_family moe_model_family(const moe_model_t *model)
{
    return model == NULL ? (moe_family)0 : model->family;
}

moe_link moe_model_link(const moe_model_t *model)
{
    return model == NULL ? MOE_LINK_IDENTITY : model->link;
}

size_t moe_model_n_experts(const moe_model_t *model)
{
    return model == NULL ? 0 : model->n_experts;
}

size_t moe_model_n_features(const moe_model_t *model)
{
    return model == NULL ? 0 : model->n_features;
}

size_t moe_model_n_classes(const moe_model_t *model)
{
    return model == NULL ? 0 : model->n_classes;
}

int moe_model_has_intercept(const moe_model_t *model)
{
    return model == NULL ? 0 : model->intercept;
}

size_t moe_model_n_inputs(const moe_model_t *model)
{
    return model == NULL ? 0 : model->n_inputs;
}

size_t moe_model_expert_rows(const moe_model_t *model)
{
    return model == NULL ? 0 : model->expert_rows;
}

size_t moe_model_n_free_params(const moe_model_t *model)
{
    if (model == NULL)
        return 0;
    size_t gate = (model->n_experts - 1) * moe_gate_free_inputs(model);
    return gate + model->n_experts * model->family_ops->expert_free_params(model);
}

/* Parameter access ------------------------------------------------------- */

static moe_status check_buffer(char *message, const void *model, const void *buffer,
                               size_t length, size_t needed, const char *what)
{
    if (model == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "model is NULL");
    if (buffer == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "%s buffer is NULL", what);
    if (length < needed)
        return moe_fail(message, MOE_ERR_DIMENSION, "%s buffer holds %zu values, %zu needed",
                        what, length, needed);
    return MOE_OK;
}

static moe_status check_finite(char *message, const double *values, size_t count,
                               const char *what)
{
    for (size_t i = 0; i < count; ++i)
        if (!isfinite(values[i]))
            return moe_fail(message, MOE_ERR_NON_FINITE, "%s value %zu is not finite", what, i);
    return MOE_OK;
}

/* A coefficient of an input its part does not see must be 0 (an offset's 1): silently
   changing it would hand back a different model than the one set. The gate's reference row
   is checked too, although re-referencing would subtract it: it must be zero there as
   well, or the other rows would move off zero. */
static moe_status check_held(char *message, const struct moe_model *model,
                             const unsigned char *inputs, size_t blocks, const double *values,
                             const char *what)
{
    size_t p = model->n_inputs;
    size_t index = moe_inputs_first_violation(blocks, p, inputs, values);
    if (index == blocks * p)
        return MOE_OK;
    size_t a = index % p;
    return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                    "%s value %zu is %.17g, but it must be %g: %s input %zu%s", what,
                    index, values[index], moe_input_held_value(inputs, a),
                    inputs[a] == MOE_INPUT_OFFSET ? "the experts take as an offset"
                    : inputs == model->gate_inputs ? "the gate does not see"
                                                   : "the experts do not see",
                    a,
                    model->intercept ? " (input 0 is the intercept)" : "");
}

moe_status moe_model_get_gate(const moe_model_t *model, double *gate, size_t length)
{
    moe_status status =
        check_buffer(NULL, model, gate, length, model ? moe_gate_size(model) : 0, "gate");
    if (status != MOE_OK)
        return status;
    memcpy(gate, model->gate, moe_gate_size(model) * sizeof(double));
    return MOE_OK;
}

int moe_rows_rereference(double *rows, size_t count, size_t p)
{
    const double *last = rows + (count - 1) * p;
    for (size_t k = 0; k + 1 < count; ++k)
        for (size_t j = 0; j < p; ++j)
            if (!isfinite(rows[k * p + j] - last[j]))
                return -1;
    for (size_t k = 0; k + 1 < count; ++k)
        for (size_t j = 0; j < p; ++j)
            rows[k * p + j] -= last[j];
    memset(rows + (count - 1) * p, 0, p * sizeof(double));
    return 0;
}

moe_status moe_model_set_gate(moe_model_t *model, const double *gate, size_t length)
{
    char *message = model ? model->message : NULL;
    moe_status status =
        check_buffer(message, model, gate, length, model ? moe_gate_size(model) : 0, "gate");
    if (status == MOE_OK)
        status = check_finite(message, gate, moe_gate_size(model), "gate");
    if (status == MOE_OK)
        status = check_held(message, model, model->gate_inputs, model->n_experts, gate, "gate");
    if (status != MOE_OK)
        return status;
    double *copy = moe_alloc_array(moe_gate_size(model), 1, sizeof(double));
    if (copy == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a copy of the gate");
    memcpy(copy, gate, moe_gate_size(model) * sizeof(double));
    if (moe_rows_rereference(copy, model->n_experts, model->n_inputs) != 0) {
        free(copy);
        return moe_fail(message, MOE_ERR_NON_FINITE,
                        "a gate row minus the reference (last) row overflows");
    }
    memcpy(model->gate, copy, moe_gate_size(model) * sizeof(double));
    free(copy);
    return MOE_OK;
}

moe_status moe_model_get_experts(const moe_model_t *model, double *coefficients, size_t length)
{
    moe_status status = check_buffer(NULL, model, coefficients, length,
                                     model ? moe_experts_size(model) : 0, "experts");
    if (status != MOE_OK)
        return status;
    memcpy(coefficients, model->experts, moe_experts_size(model) * sizeof(double));
    return MOE_OK;
}

moe_status moe_model_set_experts(moe_model_t *model, const double *coefficients, size_t length)
{
    char *message = model ? model->message : NULL;
    moe_status status = check_buffer(message, model, coefficients, length,
                                     model ? moe_experts_size(model) : 0, "experts");
    if (status == MOE_OK)
        status = check_finite(message, coefficients, moe_experts_size(model), "experts");
    if (status == MOE_OK)
        status = check_held(message, model, model->expert_inputs,
                            model->n_experts * model->expert_rows, coefficients, "experts");
    if (status != MOE_OK)
        return status;
    double *copy = moe_alloc_array(moe_experts_size(model), 1, sizeof(double));
    if (copy == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a copy of the experts");
    memcpy(copy, coefficients, moe_experts_size(model) * sizeof(double));
    if (model->family_ops->normalize_experts != NULL &&
        model->family_ops->normalize_experts(model, copy) != 0) {
        free(copy);
        return moe_fail(message, MOE_ERR_NON_FINITE,
                        "an expert's class row minus its reference (last) class row overflows");
    }
    memcpy(model->experts, copy, moe_experts_size(model) * sizeof(double));
    free(copy);
    return MOE_OK;
}

/* A per-expert array of the model (the variances, the t experts' degrees of freedom): where
   it is, its name in messages, why a family has none, and the check of a value to store. */
typedef struct per_expert {
    size_t field; /* offsetof(struct moe_model, the array) */
    const char *what;
    const char *absent; /* after "family NAME " */
    moe_status (*check)(char *message, size_t k, double value);
} per_expert;

static moe_status check_variance(char *message, size_t k, double value)
{
    if (isfinite(value) && value > 0.0)
        return MOE_OK;
    return moe_fail(message, isfinite(value) ? MOE_ERR_INVALID_ARGUMENT : MOE_ERR_NON_FINITE,
                    "variance %zu must be finite and > 0, got %g", k, value);
}

static moe_status check_degrees(char *message, size_t k, double value)
{
    if (moe_degrees_valid(value))
        return MOE_OK;
    return moe_fail(message, isfinite(value) ? MOE_ERR_INVALID_ARGUMENT : MOE_ERR_NON_FINITE,
                    "degrees of freedom %zu must lie in [%g, %g], got %g", k, MOE_DEGREES_MIN,
                    MOE_DEGREES_MAX, value);
}

static const per_expert variances_array = {offsetof(struct moe_model, variances), "variances",
                                           "has no variances", check_variance};
static const per_expert degrees_array = {offsetof(struct moe_model, degrees), "degrees",
                                         "has no degrees of freedom (Student-t experts only)",
                                         check_degrees};

static double *per_expert_values(const moe_model_t *model, const per_expert *array)
{
    return *(double *const *)((const char *)model + array->field);
}

static moe_status get_per_expert(const moe_model_t *model, const per_expert *array,
                                 double *values, size_t length)
{
    moe_status status = check_buffer(NULL, model, values, length,
                                     model ? model->n_experts : 0, array->what);
    if (status != MOE_OK)
        return status;
    const double *stored = per_expert_values(model, array);
    if (stored == NULL)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED, "family %s %s", model->family_ops->name,
                        array->absent);
    memcpy(values, stored, model->n_experts * sizeof(double));
    return MOE_OK;
}

static moe_status set_per_expert(moe_model_t *model, const per_expert *array,
                                 const double *values, size_t length)
{
    char *message = model ? model->message : NULL;
    moe_status status = check_buffer(message, model, values, length,
                                     model ? model->n_experts : 0, array->what);
    if (status != MOE_OK)
        return status;
    double *stored = per_expert_values(model, array);
    if (stored == NULL)
        return moe_fail(message, MOE_ERR_UNSUPPORTED, "family %s %s", model->family_ops->name,
                        array->absent);
    for (size_t k = 0; k < model->n_experts; ++k)
        if ((status = array->check(message, k, values[k])) != MOE_OK)
            return status;
    memcpy(stored, values, model->n_experts * sizeof(double));
    return MOE_OK;
}

moe_status moe_model_get_variances(const moe_model_t *model, double *variances, size_t length)
{
    return get_per_expert(model, &variances_array, variances, length);
}

moe_status moe_model_set_variances(moe_model_t *model, const double *variances, size_t length)
{
    return set_per_expert(model, &variances_array, variances, length);
}

moe_status moe_model_get_degrees(const moe_model_t *model, double *degrees, size_t length)
{
    return get_per_expert(model, &degrees_array, degrees, length);
}

moe_status moe_model_set_degrees(moe_model_t *model, const double *degrees, size_t length)
{
    return set_per_expert(model, &degrees_array, degrees, length);
}

moe_scale_kind moe_model_scale_kind(const moe_model_t *model)
{
    return model == NULL ? MOE_SCALE_NONE : model->family_ops->scale_kind;
}

moe_status moe_model_inverse_link(const moe_model_t *model, size_t n, const double *linear,
                                  double *out)
{
    if (model == NULL || linear == NULL || out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL",
                        model == NULL ? "model" : linear == NULL ? "linear" : "out");
    if (model->family_ops->inverse_link == NULL)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "%s experts have no one mean (a probability per class)",
                        model->family_ops->name);
    for (size_t i = 0; i < n; ++i)
        out[i] = model->family_ops->inverse_link(model, linear[i]);
    return MOE_OK;
}

moe_status moe_model_get_inputs(const moe_model_t *model, moe_model_part part,
                                unsigned char *roles, size_t length)
{
    if (model == NULL || roles == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", model == NULL ? "model" : "roles");
    if (part != MOE_PART_GATE && part != MOE_PART_EXPERTS)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "part must be MOE_PART_GATE or "
                        "MOE_PART_EXPERTS, got %d", (int)part);
    size_t p = model->n_inputs;
    if (length < p)
        return moe_fail(NULL, MOE_ERR_DIMENSION, "roles holds %zu values, %zu needed", length, p);
    const unsigned char *inputs = part == MOE_PART_GATE ? model->gate_inputs : model->expert_inputs;
    for (size_t a = 0; a < p; ++a)
        roles[a] = inputs == NULL ? MOE_INPUT_FREE : inputs[a];
    return MOE_OK;
}
