/* A fit context's life (kernels/context.h): made from the fitter's description of a call,
   released with everything the call and the kernels put in it. */
#include "kernels/context.h"
#include "kernels/start_search.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

/* An aggregation's model weights normalised to sum to 1 (equal without any). */
static moe_status aggregation_weights(moe_fit_context *context, const moe_context_setup *setup)
{
    context->models = setup->models;
    context->n_models = setup->n_models;
    context->model_weights = moe_alloc_array(setup->n_models, 1, sizeof(double));
    if (context->model_weights == NULL)
        return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate the weights of %zu models", setup->n_models);
    double total = setup->model_weights == NULL
                       ? (double)setup->n_models
                       : moe_weight_sum(setup->n_models, setup->model_weights);
    for (size_t m = 0; m < setup->n_models; ++m)
        context->model_weights[m] =
            (setup->model_weights == NULL ? 1.0 : setup->model_weights[m]) / total;
    return MOE_OK;
}

moe_status moe_context_create(moe_fit_context **out, const moe_context_setup *setup)
{
    *out = NULL;
    moe_fit_context *context = calloc(1, sizeof *context);
    if (context == NULL)
        return moe_fail(setup->message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a fit context");
    context->call = setup->call;
    context->data = setup->data;
    context->options = setup->options;
    context->option_mask = setup->option_mask;
    context->start_function = setup->start;
    context->start_data = setup->start_data;
    context->progress = setup->progress;
    context->progress_data = setup->progress_data;
    context->run_estimator = setup->run_estimator;
    context->samples_seen = setup->samples_seen;
    context->batches = setup->batches;
    context->search_cost = setup->search_cost;
    context->report = setup->report;
    context->message = setup->message;
    moe_status status = MOE_OK;
    if (setup->call == MOE_CALL_AGGREGATE)
        status = aggregation_weights(context, setup);
    if (status == MOE_OK && ((status = moe_model_clone(&context->model, setup->model)) != MOE_OK ||
                             (status = moe_model_clone(&context->start, setup->model)) != MOE_OK))
        moe_fail_propagate(context->message, status);
    if (status != MOE_OK) {
        moe_context_release(context);
        return status;
    }
    *out = context;
    return MOE_OK;
}

void moe_context_release(moe_fit_context *context)
{
    if (context == NULL)
        return;
    for (size_t r = 0; r < context->n_traces; ++r)
        free(context->traces[r].values);
    free(context->traces);
    free(context->model_weights);
    moe_model_free(context->model);
    moe_model_free(context->start);
    free(context->settings);
    free(context->gate_curvature);
    moe_start_search_release(context);
    free(context);
}
