/* Canonical expert order, so that fits are reproducible and comparable across runs. */
#include "model/model_impl.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

/* Experts compare by their coefficient block, lexicographically, then by variance, then by
   degrees of freedom (t experts). */
static int compare_experts(const struct moe_model *model, size_t a, size_t b)
{
    size_t width = model->expert_rows * model->n_inputs;
    const double *left = model->experts + a * width;
    const double *right = model->experts + b * width;
    for (size_t j = 0; j < width; ++j) {
        if (left[j] < right[j])
            return -1;
        if (left[j] > right[j])
            return 1;
    }
    if (model->variances != NULL) {
        if (model->variances[a] < model->variances[b])
            return -1;
        if (model->variances[a] > model->variances[b])
            return 1;
    }
    if (model->degrees != NULL) {
        if (model->degrees[a] < model->degrees[b])
            return -1;
        if (model->degrees[a] > model->degrees[b])
            return 1;
    }
    return 0;
}

moe_status moe_model_canonicalize(moe_model_t *model)
{
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    size_t K = model->n_experts, p = model->n_inputs;
    size_t width = model->expert_rows * p;
    size_t *order = moe_alloc_array(K, 1, sizeof(size_t));
    double *gate = moe_alloc_array(K, p, sizeof(double));
    double *experts = moe_alloc_array(K, width, sizeof(double));
    double *variances = moe_alloc_array(K, 1, sizeof(double));
    double *degrees = moe_alloc_array(K, 1, sizeof(double));
    if (order == NULL || gate == NULL || experts == NULL || variances == NULL ||
        degrees == NULL) {
        free(order);
        free(gate);
        free(experts);
        free(variances);
        free(degrees);
        return moe_fail(model->message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate for reordering");
    }
    /* Insertion sort: K is small and the sort must be stable and deterministic. */
    for (size_t k = 0; k < K; ++k) {
        size_t position = k;
        while (position > 0 && compare_experts(model, order[position - 1], k) > 0) {
            order[position] = order[position - 1];
            --position;
        }
        order[position] = k;
    }
    for (size_t k = 0; k < K; ++k) {
        memcpy(gate + k * p, model->gate + order[k] * p, p * sizeof(double));
        memcpy(experts + k * width, model->experts + order[k] * width, width * sizeof(double));
        if (model->variances != NULL)
            variances[k] = model->variances[order[k]];
        if (model->degrees != NULL)
            degrees[k] = model->degrees[order[k]];
    }
    /* The new last expert becomes the gate's reference; its row is subtracted from the
       others, which can overflow. The model is changed only when that succeeds. */
    moe_status status = MOE_OK;
    if (moe_rows_rereference(gate, K, p) != 0) {
        status = moe_fail(model->message, MOE_ERR_NUMERICAL,
                          "re-referencing the gate to expert %zu overflows; the model is "
                          "unchanged",
                          order[K - 1]);
    } else {
        memcpy(model->gate, gate, K * p * sizeof(double));
        memcpy(model->experts, experts, K * width * sizeof(double));
        if (model->variances != NULL)
            memcpy(model->variances, variances, K * sizeof(double));
        if (model->degrees != NULL)
            memcpy(model->degrees, degrees, K * sizeof(double));
    }
    free(order);
    free(gate);
    free(experts);
    free(variances);
    free(degrees);
    return status;
}
