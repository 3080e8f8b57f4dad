#include "model/family.h"

double moe_expert_penalty(const struct moe_model *model, double ridge)
{
    if (ridge == 0.0)
        return 0.0;
    size_t p = model->n_inputs, rows = model->n_experts * model->expert_rows;
    double sum = 0.0;
    for (size_t r = 0; r < rows; ++r)
        for (size_t j = (size_t)model->intercept; j < p; ++j)
            sum += model->experts[r * p + j] * model->experts[r * p + j];
    return 0.5 * ridge * sum;
}

const struct moe_family_ops *moe_family_lookup(moe_family family)
{
    switch (family) {
    case MOE_FAMILY_GAUSSIAN: return &moe_family_gaussian;
    case MOE_FAMILY_LOGISTIC:
    case MOE_FAMILY_MULTINOMIAL: return NULL;
    }
    return NULL;
}
