#include "estimators/model_copy.h"

#include <stdlib.h>

moe_status moe_estimator_copy_parameters(moe_model_t *to, const moe_model_t *from)
{
    size_t K = moe_model_n_experts(from), p = moe_model_n_inputs(from);
    size_t expert_values = K * moe_model_expert_rows(from) * p;
    size_t largest = expert_values > K ? expert_values : K;
    double *buffer = malloc((largest > 0 ? largest : 1) * sizeof(double));
    if (buffer == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    moe_status status = moe_model_get_gate(from, buffer, K * p);
    if (status == MOE_OK)
        status = moe_model_set_gate(to, buffer, K * p);
    if (status == MOE_OK)
        status = moe_model_get_experts(from, buffer, expert_values);
    if (status == MOE_OK)
        status = moe_model_set_experts(to, buffer, expert_values);
    if (status == MOE_OK && moe_model_family(from) == MOE_FAMILY_GAUSSIAN)
        status = moe_model_get_variances(from, buffer, K);
    if (status == MOE_OK && moe_model_family(from) == MOE_FAMILY_GAUSSIAN)
        status = moe_model_set_variances(to, buffer, K);
    free(buffer);
    return status;
}
