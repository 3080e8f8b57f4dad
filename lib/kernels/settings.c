/*
 * The call's settings, rows and model checks behind the kernels (kernels/kernels.h), and
 * the small public kernels built on them: total weight, penalty, expert log-densities and
 * the parallel runner.
 */
#include "kernels/kernels.h"
#include "kernels/gradient.h"
#include "common/alloc.h"
#include "common/check.h"
#include "common/combine.h"
#include "common/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double weighted_variance(const moe_data *data, double total)
{
    if (data->n == 0 || data->y == NULL || !(total > 0.0))
        return 0.0;
    /* A combined fit's workers add their sums (common/combine.h); a failed request leaves
       a value the fit's next request fails before it is used. */
    char ignored[MOE_MESSAGE_SIZE];
    double mean = 0.0;
    for (size_t i = 0; i < data->n; ++i)
        mean += moe_data_weight(data, i) * data->y[i];
    moe_combine_sums(&mean, 1, ignored);
    mean /= total;
    double sum = 0.0;
    for (size_t i = 0; i < data->n; ++i)
        sum += moe_data_weight(data, i) * (data->y[i] - mean) * (data->y[i] - mean);
    moe_combine_sums(&sum, 1, ignored);
    return sum / total;
}

static void read_settings(const moe_option_values *o, const moe_data *data,
                          moe_fit_settings *settings)
{
    memset(settings, 0, sizeof *settings);
    settings->max_iter = (size_t)o->integer[MOE_OPT_MAX_ITER];
    settings->tolerance = o->real[MOE_OPT_TOLERANCE];
    settings->n_init = (size_t)o->integer[MOE_OPT_N_INIT];
    settings->seed = (uint64_t)o->integer[MOE_OPT_SEED];
    settings->init = (moe_init_strategy)o->integer[MOE_OPT_INIT];
    double total = moe_data_total_weight(data);
    settings->total_weight = total;
    settings->threads = moe_resolve_threads((size_t)o->integer[MOE_OPT_THREADS]);
    settings->gate.l2 = o->real[MOE_OPT_GATE_L2];
    settings->gate.max_newton = (size_t)o->integer[MOE_OPT_GATE_MAX_NEWTON];
    settings->gate.tolerance = o->real[MOE_OPT_GATE_TOLERANCE];
    settings->gate.threads = settings->threads;
    moe_expert_mstep_options *experts = &settings->experts;
    experts->ridge = o->real[MOE_OPT_EXPERT_RIDGE];
    experts->total_weight = total;
    double variance = weighted_variance(data, total);
    experts->variance_floor = o->real[MOE_OPT_VARIANCE_FLOOR] * (variance > 0.0 ? variance : 1.0);
    if (!(experts->variance_floor > 0.0))
        experts->variance_floor = 1e-300;
    experts->min_weight = o->real[MOE_OPT_MIN_EXPERT_WEIGHT] * total;
    experts->update_variance = (int)o->integer[MOE_OPT_UPDATE_VARIANCE];
    experts->update_degrees = (int)o->integer[MOE_OPT_UPDATE_DEGREES];
    experts->max_newton = (size_t)o->integer[MOE_OPT_EXPERT_MAX_NEWTON];
    experts->tolerance = o->real[MOE_OPT_EXPERT_TOLERANCE];
    experts->threads = settings->threads;
    settings->update_experts = (int)o->integer[MOE_OPT_UPDATE_EXPERTS];
}

const moe_fit_settings *moe_context_settings(moe_fit_context *context)
{
    if (context->settings == NULL) {
        context->settings = malloc(sizeof *context->settings);
        if (context->settings == NULL)
            return NULL;
        read_settings(&context->options, &context->data, context->settings);
        /* Only an estimator with the gate_solver option reads it (em). */
        const struct moe_model *model = context->model;
        int solver = MOE_GATE_SOLVER_NEWTON;
        if (context->option_mask & MOE_OPTION_BIT(MOE_OPT_GATE_SOLVER))
            solver = moe_gate_solver_resolve(
                (int)context->options.integer[MOE_OPT_GATE_SOLVER], model->n_experts,
                model->n_inputs, context->data.n);
        context->settings->gate_hessian_free = solver == MOE_GATE_SOLVER_HESSIAN_FREE;
    }
    return context->settings;
}

moe_status moe_context_resolve_rows(moe_fit_context *context, const moe_rows *rows,
                                    moe_data *data)
{
    *data = context->data;
    if (rows == NULL || (rows->n == context->data.n && rows->X == context->data.X &&
                         rows->ldx == context->data.ldx && rows->y == context->data.y &&
                         rows->weights == context->data.weights))
        return MOE_OK;
    const struct moe_model *model = context->model;
    char *message = context->message;
    moe_status status = moe_check_design(message, rows->n, rows->X, rows->ldx,
                                         model->n_features);
    if (status == MOE_OK && rows->y != NULL) {
        status = moe_check_response_values(message, rows->n, rows->y);
        if (status == MOE_OK)
            status = model->family_ops->check_response(model, rows->n, rows->X, rows->ldx, rows->y,
                                                        message);
    }
    if (status == MOE_OK)
        status = moe_check_weights(message, rows->n, rows->weights);
    if (status != MOE_OK)
        return status;
    data->n = rows->n;
    data->ldx = model->n_features == 0 ? 0 : rows->ldx;
    data->X = rows->X;
    data->y = rows->y;
    data->weights = rows->weights;
    return MOE_OK;
}

moe_status moe_context_check_model(moe_fit_context *context, const moe_model_t *model)
{
    if (model == NULL)
        return moe_fail(context->message, MOE_ERR_NULL_POINTER, "model is NULL");
    const struct moe_model *working = context->model;
    if (model->family != working->family || model->n_experts != working->n_experts ||
        model->n_inputs != working->n_inputs || model->intercept != working->intercept ||
        model->n_classes != working->n_classes)
        return moe_fail(context->message, MOE_ERR_DIMENSION,
                        "the model's structure differs from the working model's");
    return MOE_OK;
}

double moe_fit_penalty(const struct moe_model *model, const moe_fit_settings *settings)
{
    return moe_gate_penalty(model, settings->gate.l2) +
           moe_expert_penalty(model, settings->experts.ridge);
}

moe_status moe_context_lambda(moe_fit_context *context, double *lambda)
{
    if (!context->lambda_ready) {
        const moe_fit_settings *settings = moe_context_settings(context);
        if (settings == NULL)
            return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                            "cannot allocate the fit's settings");
        moe_status status = moe_design_lambda_max(&context->data, settings->total_weight,
                                                  &context->lambda, context->message);
        if (status != MOE_OK)
            return status;
        context->lambda_ready = 1;
    }
    *lambda = context->lambda;
    return MOE_OK;
}

/* Context, settings, and the check every kernel starts with. */
static moe_status kernel_entry(moe_fit_context *context, const moe_fit_settings **settings)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    *settings = moe_context_settings(context);
    if (*settings == NULL)
        return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate the fit's settings");
    return MOE_OK;
}

moe_status moe_context_total_weight(const moe_fit_context *context, const moe_rows *rows,
                                    double *total)
{
    if (context == NULL || total == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", context ? "total" : "context");
    moe_data data;
    moe_status status = moe_context_resolve_rows((moe_fit_context *)context, rows, &data);
    if (status == MOE_OK)
        *total = moe_data_total_weight(&data);
    return status;
}

moe_status moe_context_penalty(const moe_fit_context *context, const moe_model_t *model,
                               double *penalty)
{
    const moe_fit_settings *settings = NULL;
    moe_fit_context *mutable_context = (moe_fit_context *)context;
    moe_status status = kernel_entry(mutable_context, &settings);
    if (status == MOE_OK && penalty == NULL)
        status = moe_fail(context->message, MOE_ERR_NULL_POINTER, "penalty is NULL");
    if (status == MOE_OK)
        status = moe_context_check_model(mutable_context, model);
    if (status == MOE_OK)
        *penalty = moe_fit_penalty(model, settings);
    return status;
}

moe_status moe_context_expert_log_density(moe_fit_context *context, const moe_model_t *model,
                                          const moe_rows *rows, size_t first, size_t count,
                                          double *out)
{
    const moe_fit_settings *settings = NULL;
    moe_status status = kernel_entry(context, &settings);
    moe_data data;
    if (status == MOE_OK)
        status = moe_context_check_model(context, model);
    if (status == MOE_OK)
        status = moe_context_resolve_rows(context, rows, &data);
    if (status != MOE_OK)
        return status;
    char *message = context->message;
    if (out == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "out is NULL");
    if (data.y == NULL)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT, "the rows have no responses");
    if (first > data.n || count > data.n - first)
        return moe_fail(message, MOE_ERR_DIMENSION, "rows %zu to %zu are not among the %zu",
                        first, first + count, data.n);
    size_t K = model->n_experts, width = K * model->expert_rows, p = model->n_inputs;
    double *columns = moe_alloc_array(MOE_BLOCK_ROWS, p, sizeof(double));
    double *linear = moe_alloc_array(MOE_BLOCK_ROWS, width, sizeof(double));
    double *scratch = moe_alloc_array(MOE_BLOCK_ROWS, width, sizeof(double));
    double *density = moe_alloc_array(MOE_BLOCK_ROWS, K, sizeof(double));
    if (columns == NULL || linear == NULL || scratch == NULL || density == NULL)
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a row block");
    for (size_t start = 0; start < count && status == MOE_OK; start += MOE_BLOCK_ROWS) {
        size_t rows_here = count - start < MOE_BLOCK_ROWS ? count - start : MOE_BLOCK_ROWS;
        moe_data_load_columns(&data, first + start, rows_here, columns);
        moe_expert_linear_columns(model, rows_here, columns, linear);
        model->family_ops->log_density(model, rows_here, columns, linear, data.y + first + start,
                                       density, scratch);
        /* the family's columns into the caller's rows x K */
        for (size_t i = 0; i < rows_here; ++i)
            for (size_t k = 0; k < K; ++k)
                out[(start + i) * K + k] = density[k * rows_here + i];
    }
    free(columns);
    free(linear);
    free(scratch);
    free(density);
    return status;
}

typedef struct chunk_adapter {
    moe_chunk_fn run;
    void *user;
} chunk_adapter;

static size_t adapt_chunk(void *opaque, size_t start, size_t rows, double *sums, double *scratch)
{
    const chunk_adapter *adapter = opaque;
    return adapter->run(adapter->user, start, rows, sums, scratch);
}

moe_status moe_context_parallel(moe_fit_context *context, size_t n, size_t sums_size,
                                size_t scratch_size, moe_chunk_fn run, void *user, double *sums)
{
    const moe_fit_settings *settings = NULL;
    moe_status status = kernel_entry(context, &settings);
    if (status != MOE_OK)
        return status;
    char *message = context->message;
    if (run == NULL || (sums == NULL && sums_size > 0))
        return moe_fail(message, MOE_ERR_NULL_POINTER, "%s is NULL", run ? "sums" : "run");
    if (sums_size > 0)
        memset(sums, 0, sums_size * sizeof(double));
    if (n == 0)
        return MOE_OK;
    chunk_adapter adapter = {run, user};
    moe_chunk_job job = {n, sums_size, scratch_size, adapt_chunk, &adapter};
    size_t failed_row = 0;
    status = moe_run_chunks(&job, settings->threads, sums, &failed_row, message);
    if (status == MOE_ERR_NUMERICAL)
        return moe_fail(message, MOE_ERR_NUMERICAL, "row %zu: the pass failed there", failed_row);
    return status;
}
