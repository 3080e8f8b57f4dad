/*
 * A model in its family's nested family (family op nested_family: t experts nest the normal
 * as nu grows) and back: the same gate, experts and variances; the nesting family's second
 * parameters at the nested model's limit (nested_start). The default start search runs the
 * nested family's own search through these (kernels/start_search.c).
 */
#include "model/family.h"

#include <string.h>

/* The parameters both families have: the gate, the experts, the variances. */
static void copy_shared(struct moe_model *target, const struct moe_model *source)
{
    memcpy(target->gate, source->gate, moe_gate_size(source) * sizeof(double));
    memcpy(target->experts, source->experts, moe_experts_size(source) * sizeof(double));
    if (source->variances != NULL && target->variances != NULL)
        memcpy(target->variances, source->variances, source->n_experts * sizeof(double));
}

moe_status moe_model_nested(struct moe_model **out, const struct moe_model *model)
{
    *out = NULL;
    const struct moe_family_ops *ops = model->family_ops;
    if (ops->nested_family == 0 || ops->nested_start == NULL)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "the %s family nests no other",
                        ops->name);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    moe_model_get_spec(model, &spec);
    spec.family = ops->nested_family;
    moe_status status = moe_model_allocate(out, &spec, NULL);
    if (status == MOE_OK)
        copy_shared(*out, model);
    return status;
}

void moe_model_from_nested(struct moe_model *target, const struct moe_model *nested)
{
    copy_shared(target, nested);
    target->family_ops->nested_start(target);
}
