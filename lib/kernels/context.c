/* What an estimator sees of a fit through its context: data, options, working model, the
   session, the report's counters, trace and progress. */
#include "kernels/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

moe_model_t *moe_context_model(moe_fit_context *context)
{
    return context == NULL ? NULL : context->model;
}

moe_fit_call moe_context_call(const moe_fit_context *context)
{
    return context == NULL ? (moe_fit_call)0 : context->call;
}

moe_status moe_context_rows(const moe_fit_context *context, moe_rows *rows)
{
    if (context == NULL || rows == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", context ? "rows" : "context");
    rows->n = context->data.n;
    rows->X = context->data.X;
    rows->ldx = context->data.ldx;
    rows->y = context->data.y;
    rows->weights = context->data.weights;
    return MOE_OK;
}

moe_status moe_context_session(const moe_fit_context *context, size_t *samples_seen,
                               size_t *batches)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    int partial = context->call == MOE_CALL_PARTIAL_FIT;
    if (samples_seen != NULL)
        *samples_seen = partial ? context->samples_seen : 0;
    if (batches != NULL)
        *batches = partial ? context->batches : 0;
    return MOE_OK;
}

moe_status moe_context_models(const moe_fit_context *context, size_t *count,
                              const moe_model_t *const **models, const double **weights)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    if (context->call != MOE_CALL_AGGREGATE)
        return moe_fail(context->message, MOE_ERR_UNSUPPORTED,
                        "there are models only in an aggregation (moe_fitter_aggregate)");
    if (count != NULL)
        *count = context->n_models;
    if (models != NULL)
        *models = context->models;
    if (weights != NULL)
        *weights = context->model_weights;
    return MOE_OK;
}

moe_status moe_context_count(moe_fit_context *context, moe_counter counter, size_t increment)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    moe_fit_report *report = context->report;
    size_t *field = counter == MOE_COUNTER_INNER_ITERATIONS        ? &report->inner_iterations
                    : counter == MOE_COUNTER_GRADIENT_EVALUATIONS  ? &report->gradient_evaluations
                    : counter == MOE_COUNTER_DEGENERATE_EVENTS     ? &report->degenerate_events
                    : counter == MOE_COUNTER_RIDGE_FALLBACKS       ? &report->ridge_fallbacks
                    : counter == MOE_COUNTER_LINE_SEARCH_FAILURES  ? &report->line_search_failures
                    : counter == MOE_COUNTER_FLOORED_VARIANCES     ? &report->floored_variances
                    : counter == MOE_COUNTER_SEPARATION_EVENTS     ? &report->separation_events
                    : counter == MOE_COUNTER_MONOTONICITY_VIOLATIONS
                        ? &report->monotonicity_violations
                    : counter == MOE_COUNTER_SEARCH_RUNS       ? &report->search_runs
                    : counter == MOE_COUNTER_SEARCH_ITERATIONS ? &report->search_iterations
                    : counter == MOE_COUNTER_STREAM_ROWS       ? &report->stream_rows
                        : NULL;
    if (field == NULL)
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "unknown report counter %d", (int)counter);
    *field = SIZE_MAX - *field < increment ? SIZE_MAX : *field + increment;
    return MOE_OK;
}

moe_status moe_context_note_decrease(moe_fit_context *context, double relative)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    if (!(relative >= 0.0) || !isfinite(relative))
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "a relative decrease must be finite and >= 0, got %g", relative);
    moe_fit_report *report = context->report;
    report->monotonicity_violations++;
    if (relative > report->worst_relative_decrease)
        report->worst_relative_decrease = relative;
    return MOE_OK;
}

moe_status moe_context_set_steps(moe_fit_context *context, double step, double gate_step)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    if ((!isnan(step) && !(step >= 0.0 && isfinite(step))) ||
        (!isnan(gate_step) && !(gate_step >= 0.0 && isfinite(gate_step))))
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "step sizes must be finite and >= 0 (or NAN to leave one), got %g, %g",
                        step, gate_step);
    if (!isnan(step))
        context->report->step = step;
    if (!isnan(gate_step))
        context->report->gate_step = gate_step;
    return MOE_OK;
}

moe_status moe_context_data(const moe_fit_context *context, size_t *n, const double **X,
                            size_t *ldx, const double **y, const double **weights)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    if (n != NULL)
        *n = context->data.n;
    if (X != NULL)
        *X = context->data.X;
    if (ldx != NULL)
        *ldx = context->data.ldx;
    if (y != NULL)
        *y = context->data.y;
    if (weights != NULL)
        *weights = context->data.weights;
    return MOE_OK;
}

moe_status moe_context_get_int(const moe_fit_context *context, moe_option option,
                               long long *value)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    if (value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "value is NULL");
    const moe_option_info *info = moe_option_info_get(option);
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown option number %d", (int)option);
    *value = moe_option_values_int(&context->options, info);
    /* The estimator sees the solver auto resolves to for this call's shape. */
    if (option == MOE_OPT_GATE_SOLVER)
        *value = moe_gate_solver_resolve((int)*value, context->model->n_experts,
                                         context->model->n_inputs, context->data.n);
    return MOE_OK;
}

moe_status moe_context_get_double(const moe_fit_context *context, moe_option option,
                                  double *value)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    if (value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "value is NULL");
    const moe_option_info *info = moe_option_info_get(option);
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown option number %d", (int)option);
    *value = moe_option_values_double(&context->options, info);
    return MOE_OK;
}

/* An estimator may report restarts up to the n_init option; more than that is a bug in it,
   and an unchecked index would size the trace table from an arbitrary number. */
static moe_status trace_append(moe_fit_context *context, size_t restart, size_t iteration,
                               double value)
{
    long long n_init = context->options.integer[MOE_OPT_N_INIT];
    if (restart >= (size_t)n_init)
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "restart index %zu is not below n_init = %lld", restart, n_init);
    if (restart >= context->n_traces) {
        moe_trace *grown = realloc(context->traces, (restart + 1) * sizeof *grown);
        if (grown == NULL)
            return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                            "cannot grow the trace");
        memset(grown + context->n_traces, 0, (restart + 1 - context->n_traces) * sizeof *grown);
        context->traces = grown;
        context->n_traces = restart + 1;
    }
    moe_trace *trace = &context->traces[restart];
    if (iteration != trace->length)
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "restart %zu: iteration %zu recorded after %zu iterations (record "
                        "0, 1, 2, ... in order)",
                        restart, iteration, trace->length);
    if (trace->length == trace->capacity) {
        size_t capacity = trace->capacity == 0 ? 64 : 2 * trace->capacity;
        if (capacity > SIZE_MAX / sizeof(double))
            return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                            "the trace is too long");
        double *values = realloc(trace->values, capacity * sizeof(double));
        if (values == NULL)
            return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                            "cannot grow the trace");
        trace->values = values;
        trace->capacity = capacity;
    }
    trace->values[trace->length++] = value;
    return MOE_OK;
}

moe_status moe_context_iteration(moe_fit_context *context, size_t restart, size_t iteration,
                                 double loglik)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    /* The report and the trace promise finite values; a NaN here is a broken fit, not a
       number to pass on. */
    if (!isfinite(loglik))
        return moe_fail(context->message, MOE_ERR_NUMERICAL,
                        "restart %zu iteration %zu: the log-likelihood is %s", restart, iteration,
                        isnan(loglik) ? "NaN" : "infinite");
    moe_status status = trace_append(context, restart, iteration, loglik);
    if (status != MOE_OK || iteration == 0)
        return status;
    if (context->progress == NULL)
        return MOE_OK;
    long long n_init = context->options.integer[MOE_OPT_N_INIT];
    moe_progress progress = {MOE_PROGRESS_VERSION, restart, (size_t)n_init, iteration, loglik};
    if (context->progress(&progress, context->progress_data) != 0)
        return moe_fail(context->message, MOE_ERR_CANCELLED,
                        "cancelled by the progress callback at restart %zu iteration %zu",
                        restart, iteration);
    return MOE_OK;
}

moe_status moe_context_set_result(moe_fit_context *context, size_t best_restart, int converged)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    /* The report's log-likelihood and iterations come from this restart's trace. */
    if (best_restart >= context->n_traces || context->traces[best_restart].length == 0)
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "restart %zu recorded no iteration (moe_context_iteration) and cannot be "
                        "the result",
                        best_restart);
    context->best_restart = best_restart;
    context->converged = converged != 0;
    context->result_set = 1;
    return MOE_OK;
}

moe_status moe_context_add_stages(moe_fit_context *context, unsigned int stages)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    if ((stages & ~(MOE_STAGE_TENSOR | MOE_STAGE_GATE | MOE_STAGE_JOINT)) != 0)
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "unknown stage flags 0x%x", stages);
    context->report->stages |= stages;
    return MOE_OK;
}

moe_status moe_context_add_stage_seconds(moe_fit_context *context, unsigned int stage,
                                        double seconds)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    int index = stage == MOE_STAGE_TENSOR ? 0 : stage == MOE_STAGE_GATE ? 1
                : stage == MOE_STAGE_JOINT ? 2 : -1;
    if (index < 0 || !(seconds >= 0.0) || !isfinite(seconds))
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "stage 0x%x or seconds %g is not valid", stage, seconds);
    context->report->stage_seconds[index] += seconds;
    return MOE_OK;
}

moe_status moe_context_fail(moe_fit_context *context, moe_status status, const char *message)
{
    if (context == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "context is NULL");
    /* The message may be moe_last_error() or the context's own buffer, which moe_fail
       overwrites: copy it out first. */
    char copy[MOE_MESSAGE_SIZE];
    snprintf(copy, sizeof copy, "%s", message == NULL ? "" : message);
    return moe_fail(context->message, status, "%s", copy);
}

void moe_report_expert_mstep(moe_fit_context *context, const moe_expert_mstep_report *experts)
{
    moe_fit_report *report = context->report;
    report->degenerate_events += experts->degenerate_experts;
    report->ridge_fallbacks += experts->ridge_fallbacks;
    report->floored_variances += experts->floored_variances;
    report->inner_iterations += experts->newton_steps;
    report->line_search_failures += experts->line_search_failures;
    report->separation_events += experts->separations;
}

void moe_report_gate(moe_fit_context *context, const moe_gate_report *gate)
{
    moe_fit_report *report = context->report;
    report->inner_iterations += gate->newton_steps;
    report->ridge_fallbacks += gate->ridge_fallbacks;
    report->line_search_failures += gate->line_search_failures;
    report->separation_events += gate->separations;
}
