/*
 * Running an estimator: what the fitter does around fit, partial_fit and aggregate
 * (validation, the working copy, the outcome checks, canonical order, commit), streaming
 * sessions, and the report and trace that come out.
 */
#define _POSIX_C_SOURCE 200809L
#include "fitter/fitter_impl.h"
#include "common/alloc.h"
#include "common/check.h"
#include "common/clock.h"
#include "common/combine.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "common/versioned.h"
#include "model/family.h"
#include "pass/gate.h"
#include "pass/posterior.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* moe_fit_report's versions (common/versioned.h). */
static const moe_struct_layout report_layout = {"fit report", MOE_FIT_REPORT_VERSION,
                                                {sizeof(moe_fit_report)}};
_Static_assert(MOE_FIT_REPORT_VERSION == 1, "a new version appends its size to report_layout");

moe_status moe_fitter_get_report(const moe_fitter_t *fitter, moe_fit_report *report)
{
    if (fitter == NULL || report == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "report" : "fitter");
    if (fitter->report.version == 0) {
        /* A caller that ignores the return value must not read a success either. */
        moe_fit_report empty = MOE_FIT_REPORT_INIT;
        empty.status = MOE_ERR_INVALID_ARGUMENT;
        empty.loglik = NAN;
        moe_status status = moe_struct_copy_out(report, &empty, &report_layout, NULL);
        return status != MOE_OK ? status
                                : moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                                           "no fit has run on this fitter");
    }
    return moe_struct_copy_out(report, &fitter->report, &report_layout, NULL);
}

moe_status moe_fit_report_init(moe_fit_report *report, unsigned int version)
{
    if (report == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "report is NULL");
    moe_fit_report zero = MOE_FIT_REPORT_INIT;
    return moe_struct_fill(report, version, &zero, &report_layout, NULL);
}

moe_status moe_fitter_get_trace(const moe_fitter_t *fitter, double *trace, size_t capacity,
                                size_t *length)
{
    if (length != NULL)
        *length = 0;
    if (fitter == NULL || length == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "length" : "fitter");
    if (trace == NULL && capacity > 0)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER,
                        "trace is NULL but capacity is %zu (capacity 0 asks for the length)",
                        capacity);
    if (fitter->report.version == 0)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "no fit has run on this fitter");
    *length = fitter->trace_length;
    if (trace == NULL)
        return MOE_OK; /* the size query of moe/common.h */
    if (capacity < fitter->trace_length)
        return moe_fail(NULL, MOE_ERR_BUFFER_TOO_SMALL,
                        "trace holds %zu values, the trace has %zu", capacity,
                        fitter->trace_length);
    if (fitter->trace_length > 0)
        memcpy(trace, fitter->trace, fitter->trace_length * sizeof(double));
    return MOE_OK;
}

/* The rows of a call: sizes, finiteness, labels (when y is given) and weights. */
static moe_status validate_rows(char *message, const struct moe_model *model, size_t n,
                                const double *X, size_t ldx, const double *y,
                                const double *weights, int need_y)
{
    moe_status status = moe_check_design(message, n, X, ldx, model->n_features);
    if (status == MOE_OK && (need_y || y != NULL)) {
        status = moe_check_response_values(message, n, y);
        if (status == MOE_OK)
            status = model->family_ops->check_response(model, n, X, ldx, y, message);
    }
    if (status == MOE_OK)
        status = moe_check_weights(message, n, weights);
    return status;
}

/* Rows of positive weight against free parameters: fewer cannot identify the model. */
static moe_status check_sample_count(char *message, const struct moe_model *model, size_t n,
                                     const double *weights)
{
    size_t usable = 0;
    for (size_t i = 0; i < n; ++i)
        usable += weights == NULL || weights[i] > 0.0;
    /* A combined fit counts every worker's rows. */
    double count = (double)usable;
    moe_status status = moe_combine_sums(&count, 1, message);
    if (status != MOE_OK)
        return status;
    usable = (size_t)count;
    size_t needed = moe_model_n_free_params(model);
    if (usable < needed)
        return moe_fail(message, MOE_ERR_TOO_FEW_SAMPLES,
                        "%zu samples with positive weight for %zu free parameters", usable,
                        needed);
    return MOE_OK;
}

/* The models of an aggregation share everything with the target but the number of experts. */
static moe_status validate_models(char *message, const struct moe_model *target, size_t count,
                                  const moe_model_t *const *models, const double *weights)
{
    if (count == 0)
        return moe_fail(message, MOE_ERR_EMPTY_INPUT, "there are no models to aggregate");
    if (models == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "models is NULL");
    double total = 0.0;
    for (size_t m = 0; m < count; ++m) {
        const struct moe_model *model = models[m];
        if (model == NULL)
            return moe_fail(message, MOE_ERR_NULL_POINTER, "model %zu is NULL", m);
        if (model->family != target->family || model->link != target->link ||
            model->n_features != target->n_features || model->intercept != target->intercept ||
            model->n_classes != target->n_classes)
            return moe_fail(message, MOE_ERR_DIMENSION,
                            "model %zu differs from the target in family, link, features, "
                            "intercept or classes",
                            m);
        if (!moe_model_same_inputs(model, target))
            return moe_fail(message, MOE_ERR_DIMENSION,
                            "model %zu differs from the target in the inputs its gate or its "
                            "experts see, or in the offset (moe_model_spec's masks and "
                            "offset_feature)",
                            m);
        if (weights != NULL) {
            if (!isfinite(weights[m]))
                return moe_fail(message, MOE_ERR_NON_FINITE, "weight of model %zu is %g", m,
                                weights[m]);
            if (weights[m] < 0.0)
                return moe_fail(message, MOE_ERR_NEGATIVE_WEIGHT,
                                "weight of model %zu is negative (%g)", m, weights[m]);
            total += weights[m];
        }
    }
    if (weights != NULL && !(total > 0.0 && isfinite(total)))
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "the model weights must have a positive, finite sum");
    return MOE_OK;
}

/*
 * Fold one call's traces into the report and the fitter's trace. A fit keeps the winning
 * restart's trace; a partial fit appends it to the session's and adds its iterations.
 */
static void finish_report(struct moe_fitter *fitter, moe_fit_context *context,
                          moe_status status, const moe_fit_report *before, int continuing)
{
    /* An estimator that ran a single restart and succeeded need not name it. */
    if (status == MOE_OK && !context->result_set && context->n_traces == 1)
        moe_context_set_result(context, 0, 0);
    moe_fit_report *report = &fitter->report;
    report->n_restarts = context->n_traces;
    size_t total = 0;
    for (size_t r = 0; r < context->n_traces; ++r)
        if (context->traces[r].length > 0)
            total += context->traces[r].length - 1;
    report->total_iterations = (continuing ? before->total_iterations : 0) + total;
    report->iterations = continuing ? before->iterations : 0;
    int kept = status == MOE_OK || (status == MOE_ERR_CANCELLED && context->result_set);
    if (!continuing) {
        free(fitter->trace);
        fitter->trace = NULL;
        fitter->trace_length = 0;
    }
    if (status == MOE_OK && context->loglik_evaluated) /* the trace's values do not say it */
        report->loglik = context->unrecorded_loglik;
    if (!context->result_set || context->best_restart >= context->n_traces)
        return;
    moe_trace *best = &context->traces[context->best_restart];
    report->best_restart = context->best_restart;
    report->converged = status == MOE_OK && context->converged;
    if (best->length > 0) {
        report->iterations += best->length - 1;
        if (!(status == MOE_OK && context->loglik_evaluated))
            report->loglik = best->values[best->length - 1];
    }
    if (!continuing) {
        fitter->trace = best->values;
        fitter->trace_length = best->length;
        best->values = NULL;
    } else if (kept && best->length > 0) {
        double *grown = realloc(fitter->trace,
                                (fitter->trace_length + best->length) * sizeof(double));
        if (grown != NULL) { /* out of memory: the session's trace just stops growing */
            memcpy(grown + fitter->trace_length, best->values, best->length * sizeof(double));
            fitter->trace = grown;
            fitter->trace_length += best->length;
        }
    }
}

/*
 * What a successful estimator hands back must be finite: its parameters (however it wrote
 * them) and the log-likelihood the report will carry. An estimator that named no result, or
 * whose trace is its own objective (MOE_ESTIMATOR_OWN_OBJECTIVE), gets the log-likelihood of
 * its model evaluated here, on the call's rows when they have responses (an aggregation
 * without responses has none: NaN).
 */
static moe_status check_outcome(struct moe_fitter *fitter, moe_fit_context *context)
{
    const struct moe_model *model = context->model;
    const double *arrays[] = {model->gate, model->experts, model->variances};
    size_t sizes[] = {moe_gate_size(model), moe_experts_size(model),
                      model->variances == NULL ? 0 : model->n_experts};
    const char *names[] = {"gate", "expert", "variance"};
    for (size_t a = 0; a < 3; ++a)
        for (size_t i = 0; i < sizes[a]; ++i)
            if (!isfinite(arrays[a][i]) || (a == 2 && !(arrays[a][i] > 0.0)))
                return moe_fail(fitter->message, MOE_ERR_NUMERICAL,
                                "estimator '%s' produced %s parameter %zu = %g",
                                fitter->ops.name, names[a], i, arrays[a][i]);
    int own_objective = (fitter->ops.flags & MOE_ESTIMATOR_OWN_OBJECTIVE) != 0;
    if (own_objective) { /* the trace holds no log-likelihood to report */
        context->unrecorded_loglik = NAN;
        context->loglik_evaluated = 1;
    }
    if ((own_objective || (!context->result_set && context->n_traces != 1)) &&
        context->data.n > 0 && context->data.y != NULL) {
        moe_posterior_result result;
        char ignored[MOE_MESSAGE_SIZE];
        moe_status status = moe_posterior_pass(model, &context->data, NULL, 1, &result,
                                               own_objective ? ignored : fitter->message);
        /* An estimator that optimised its own objective succeeded at that: a row its model
           gives no likelihood leaves the report's log-likelihood NaN, not the fit failed. */
        if (status != MOE_OK && !own_objective)
            return status;
        context->unrecorded_loglik = status == MOE_OK ? result.loglik : NAN;
        context->loglik_evaluated = 1;
    }
    return MOE_OK;
}

/*
 * The gate's transition mass (moe_fit_report.gate_transition, MOE_WARNING_GATE_SEPARATED):
 * min over experts k of sum_i w_i g_ik (1 - g_ik), in rows (divided by the mean weight), on
 * the fit's rows. One pass, the gate's logits block by block; NaN when it cannot be
 * computed (no rows, one expert, out of memory), which warns of nothing.
 */
static double gate_transition(const struct moe_model *model, const moe_data *data)
{
    size_t K = model->n_experts, p = model->n_inputs;
    if (K < 2 || data->n == 0)
        return NAN;
    double *block = moe_alloc_array(MOE_BLOCK_ROWS, p, sizeof(double));
    double *logits = moe_alloc_array(MOE_BLOCK_ROWS, K, sizeof(double));
    double *gate = moe_alloc_array(MOE_BLOCK_ROWS, K, sizeof(double));
    /* the experts' masses, then the rows, then whether any worker ran out of memory */
    double *mass = moe_calloc_array(K + 2, 1, sizeof(double));
    double smallest = NAN;
    if (mass != NULL && (block == NULL || logits == NULL || gate == NULL))
        mass[K + 1] = 1.0;
    if (mass != NULL && mass[K + 1] == 0.0) {
        for (size_t start = 0; start < data->n; start += MOE_BLOCK_ROWS) {
            size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
            moe_data_load_block(data, start, rows, block);
            moe_gate_logits(model, rows, block, logits);
            moe_softmax_rows(rows, K, logits, gate, NULL);
            for (size_t i = 0; i < rows; ++i) {
                double w = moe_data_weight(data, start + i);
                for (size_t k = 0; k < K; ++k)
                    mass[k] += w * gate[i * K + k] * (1.0 - gate[i * K + k]);
            }
        }
    }
    if (mass != NULL)
        mass[K] = (double)data->n;
    char ignored[MOE_MESSAGE_SIZE];
    if (mass != NULL && moe_combine_sums(mass, K + 2, ignored) == MOE_OK && mass[K + 1] == 0.0) {
        double mean_weight = moe_data_total_weight(data) / mass[K];
        smallest = INFINITY;
        for (size_t k = 0; k < K; ++k)
            if (mass[k] / mean_weight < smallest)
                smallest = mass[k] / mean_weight;
        if (!(mean_weight > 0.0) || !isfinite(smallest))
            smallest = NAN;
    }
    free(block);
    free(logits);
    free(gate);
    free(mass);
    return smallest;
}

/*
 * A fitted gate whose maximum likelihood lies at infinity (moe/fitter.h,
 * MOE_WARNING_GATE_SEPARATED). Only for an unpenalised gate: gate_l2 > 0 has a finite
 * optimum, and its standard errors are the penalised information's.
 */
static void check_gate(struct moe_fitter *fitter, const moe_fit_context *context)
{
    moe_fit_report *report = &fitter->report;
    if (context->data.y == NULL)
        return;
    report->gate_transition = gate_transition(context->model, &context->data);
    if (report->gate_transition < MOE_GATE_SEPARATED_ROWS &&
        !(fitter->options.real[MOE_OPT_GATE_L2] > 0.0))
        report->warnings |= MOE_WARNING_GATE_SEPARATED;
}

/* A fit or an aggregation ends any streaming session; the estimator forgets it. */
static moe_status end_session(struct moe_fitter *fitter)
{
    moe_status status = MOE_OK;
    if (fitter->ops.reset != NULL) {
        status = fitter->ops.reset(fitter->state);
        if (status != MOE_OK)
            moe_fail(fitter->message, status, "estimator '%s' could not reset its state",
                     fitter->ops.name);
    }
    memset(&fitter->session, 0, sizeof fitter->session);
    return status;
}

/*
 * The session as a successful partial fit leaves it (but for its rows): one more batch, and
 * the call's steps, which are its recorded iterations, with their batch log-likelihoods.
 * The sum goes on step by step, so that any split of a stream into calls adds the same
 * numbers in the same order (the same sum, bit for bit).
 */
static moe_session session_after(const struct moe_fitter *fitter,
                                 const moe_fit_context *context)
{
    moe_session next = fitter->session;
    next.active = 1;
    next.batches += 1;
    next.scored_rows += fitter->report.stream_rows; /* the estimator's count of the call */
    if (context->n_traces > 0)
        for (size_t t = 0; t < context->traces[0].length; ++t) {
            next.steps += 1;
            next.scored_loglik += context->traces[0].values[t];
        }
    return next;
}

/* The report's session fields: the session's (a failed call added nothing), or one batch of
   the call's rows for a fit or an aggregation. */
static void report_session(struct moe_fitter *fitter, int partial, size_t rows)
{
    moe_fit_report *report = &fitter->report;
    const moe_session *session = &fitter->session;
    report->samples_seen = partial ? session->samples_seen : rows;
    report->batches = partial ? session->batches : 1;
    report->stream_steps = partial ? session->steps : 0;
    report->stream_rows = partial ? session->scored_rows : 0;
    report->stream_loglik = partial ? session->scored_loglik : 0.0;
}

typedef struct call_input {
    moe_fit_call call;
    size_t n;
    const double *X;
    size_t ldx;
    const double *y;
    const double *weights;
    size_t n_models;
    const moe_model_t *const *models;
    const double *model_weights;
} call_input;

/* Whether an expert's mean can equal the constant c for every row: a free intercept, no
   offset, and c inside the link's range (identity: any; sigmoid: (0, 1); relu: >= 0). */
static int experts_can_reach(const struct moe_model *model, double c)
{
    if (!model->intercept || !moe_input_free(model->expert_inputs, 0))
        return 0;
    for (size_t a = 0; model->expert_inputs != NULL && a < model->n_inputs; ++a)
        if (model->expert_inputs[a] == MOE_INPUT_OFFSET)
            return 0;
    return model->link == MOE_LINK_IDENTITY || (model->link == MOE_LINK_SIGMOID && c > 0.0 &&
                                                c < 1.0) ||
           (model->link == MOE_LINK_RELU && c >= 0.0);
}

/* A fit of experts with a scale (Gaussian, t) to a response that never varies, which an
   expert's mean can equal on every row: its variance goes to zero and the likelihood
   without bound (on a constant column the variances stopped at their floor and the
   log-likelihood was positive and meaningless). Refused, as a regression on a constant
   is. Not checked: partial fits (one batch of a stream may well be constant) and fits of a
   shard, ot's local fits among them (search_shards set: one shard of a response that
   varies may not be). */
static moe_status refuse_constant_response(struct moe_fitter *fitter,
                                           const struct moe_model *model,
                                           const call_input *input)
{
    if (model->variances == NULL || input->y == NULL ||
        fitter->options.integer[MOE_OPT_SEARCH_SHARDS] != 0)
        return MOE_OK;
    size_t first = 0;
    while (first < input->n && input->weights != NULL && !(input->weights[first] > 0.0))
        ++first;
    if (first == input->n)
        return MOE_OK;
    for (size_t i = first; i < input->n; ++i)
        if (input->y[i] != input->y[first] && (input->weights == NULL || input->weights[i] > 0.0))
            return MOE_OK;
    if (!experts_can_reach(model, input->y[first]))
        return MOE_OK;
    return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                    "the response is constant (%.17g on every row%s): %s experts' variances "
                    "would shrink to zero and the likelihood grow without bound, so there is "
                    "nothing to fit",
                    input->y[first], input->weights != NULL ? " of positive weight" : "",
                    moe_family_name(model->family));
}

static moe_status validate_call(struct moe_fitter *fitter, const struct moe_model *model,
                                const call_input *input)
{
    char *message = fitter->message;
    if (model == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "model is NULL");
    if (input->call == MOE_CALL_AGGREGATE) {
        if (fitter->ops.aggregate == NULL)
            return moe_fail(message, MOE_ERR_UNSUPPORTED,
                            "estimator '%s' does not aggregate models", fitter->ops.name);
        moe_status status = validate_models(message, model, input->n_models, input->models,
                                            input->model_weights);
        if (status == MOE_OK && input->n > 0)
            status = validate_rows(message, model, input->n, input->X, input->ldx, input->y,
                                   input->weights, 0);
        return status;
    }
    moe_status status = validate_rows(message, model, input->n, input->X, input->ldx, input->y,
                                      input->weights, 1);
    if (status == MOE_OK && input->call == MOE_CALL_PARTIAL_FIT && fitter->ops.partial_fit == NULL)
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "estimator '%s' does not support partial_fit", fitter->ops.name);
    int small_batches = input->call == MOE_CALL_PARTIAL_FIT &&
                        (fitter->ops.flags & MOE_ESTIMATOR_SMALL_BATCHES);
    if (status == MOE_OK && !small_batches)
        status = check_sample_count(message, model, input->n, input->weights);
    if (status == MOE_OK && input->call == MOE_CALL_FIT && fitter->combine == NULL)
        status = refuse_constant_response(fitter, model, input);
    return status;
}

/* What a combined fit needs (moe_fitter_set_combine): an estimator whose sums all go
   through the kernels, and a start that every worker holds alike. */
static moe_status validate_combined(struct moe_fitter *fitter, const call_input *input)
{
    char *message = fitter->message;
    if (input->call != MOE_CALL_FIT)
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "a fitter with a combine function only fits (moe_fitter_fit): "
                        "remove it for partial fits and aggregations");
    if (!(fitter->ops.flags & MOE_ESTIMATOR_COMBINES))
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "estimator '%s' cannot combine its sums over workers; em can",
                        fitter->ops.name);
    long long init = fitter->options.integer[MOE_OPT_INIT];
    long long restarts = fitter->options.integer[MOE_OPT_N_INIT];
    if (init == MOE_INIT_CUSTOM || (init == MOE_INIT_MODEL && restarts == 1))
        return MOE_OK;
    static const char *const names[] = {"random", "kmeans", "model", "custom", "tensor", "mixed"};
    return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                    "a combined fit starts where every worker can: init = model with "
                    "n_init = 1, or a start function (init = custom); init = %s with n_init = "
                    "%lld would start each worker from its own rows",
                    init >= 0 && init < 6 ? names[init] : "?", restarts);
}

/* A combined fit's rows on this worker, and the total weight of every worker's. */
static moe_status combined_rows(moe_combiner *combiner, const call_input *input,
                                char *message)
{
    double total = moe_weight_sum(input->n, input->weights);
    moe_status status = moe_combine_sums(&total, 1, message);
    if (status != MOE_OK)
        return status;
    combiner->X = input->n > 0 ? input->X : NULL;
    combiner->y = input->n > 0 ? input->y : NULL;
    combiner->weights = input->n > 0 ? input->weights : NULL;
    combiner->n = input->n;
    combiner->total_weight = total;
    return MOE_OK;
}

/* The call's checks, and the end of a session a fit starts afresh; a combined fit's
   workers share their outcome, and every worker's rows are counted. */
static moe_status prepare_call(struct moe_fitter *fitter, moe_combiner *combiner,
                               const struct moe_model *model, const call_input *input,
                               int partial)
{
    moe_status status = fitter->combine != NULL ? validate_combined(fitter, input) : MOE_OK;
    if (status == MOE_OK)
        status = validate_call(fitter, model, input);
    if (status == MOE_OK && !partial)
        status = end_session(fitter);
    if (status == MOE_OK && fitter->combine != NULL)
        status = combined_rows(combiner, input, fitter->message);
    if (status != MOE_OK)
        status = moe_combine_final(status, fitter->message);
    return status;
}

/* What the call's context is made from: the rows, the caller's model, the fitter's options
   and hooks, and where the report and the message go. */
static void describe_call(moe_context_setup *setup, struct moe_fitter *fitter,
                          const struct moe_model *model, const call_input *input)
{
    memset(setup, 0, sizeof *setup);
    setup->call = input->call;
    setup->data.n = input->n;
    setup->data.n_features = model->n_features;
    setup->data.ldx = model->n_features == 0 ? 0 : input->ldx;
    setup->data.intercept = model->intercept;
    setup->data.X = input->n > 0 ? input->X : NULL;
    setup->data.y = input->n > 0 ? input->y : NULL;
    setup->data.weights = input->n > 0 ? input->weights : NULL;
    setup->model = model;
    setup->models = input->models;
    setup->model_weights = input->model_weights;
    setup->n_models = input->n_models;
    setup->options = fitter->options;
    setup->option_mask = fitter->option_mask;
    setup->start = fitter->start;
    setup->start_data = fitter->start_data;
    setup->progress = fitter->progress;
    setup->progress_data = fitter->progress_data;
    setup->run_estimator = moe_fitter_run_builtin;
    setup->samples_seen = fitter->session.samples_seen;
    setup->batches = fitter->session.batches;
    setup->search_cost = fitter->search_cost;
    setup->report = &fitter->report;
    setup->message = fitter->message;
}

/* The estimator's call on the context, the checks of its outcome, the report, and on
   success (or a cancel with a result) the working model into the caller's. */
static moe_status run_estimator(moe_fitter_t *fitter, moe_fit_context *context,
                                moe_model_t *model, const call_input *input,
                                const moe_fit_report *before, int continuing)
{
    int partial = input->call == MOE_CALL_PARTIAL_FIT;
    const moe_estimator_ops *ops = &fitter->ops;
    moe_status status = input->call == MOE_CALL_FIT ? ops->fit(fitter->state, context)
                        : partial ? ops->partial_fit(fitter->state, context)
                                  : ops->aggregate(fitter->state, context);
    if (status != MOE_OK && fitter->message[0] == '\0')
        moe_fail(fitter->message, status, "estimator '%s' failed: %s", ops->name,
                 moe_strerror(status));
    else if (status != MOE_OK)
        moe_fail(NULL, status, "%s", fitter->message); /* mirror into the thread slot */
    if (status == MOE_OK)
        status = check_outcome(fitter, context);
    moe_session steps = partial ? session_after(fitter, context) : fitter->session;
    if (status == MOE_OK && input->call == MOE_CALL_FIT)
        check_gate(fitter, context);
    /* Every worker of a combined fit ends with the same outcome. */
    status = moe_combine_final(status, fitter->message);
    finish_report(fitter, context, status, before, continuing);
    int keep = status == MOE_OK || (status == MOE_ERR_CANCELLED && context->result_set);
    int reorder = !(partial && (ops->flags & MOE_ESTIMATOR_KEEPS_ORDER));
    if (keep && reorder) {
        moe_status ordered = moe_model_canonicalize(context->model);
        if (ordered != MOE_OK) {
            status = moe_fail(fitter->message, ordered,
                              "could not put the fitted experts in canonical order: %s",
                              moe_model_last_error(context->model));
            keep = 0;
        }
    }
    if (keep)
        moe_model_copy_parameters(model, context->model);
    if (keep && partial) {
        fitter->session = steps;
        fitter->session.samples_seen += input->n;
        if (fitter->report.stages != 0)
            fitter->report.stages |= MOE_STAGE_STREAM;
    }
    return status;
}

/* The report of a call that starts: a fit's afresh, a session's continued. */
static void start_report(struct moe_fitter *fitter, int continuing)
{
    if (!continuing) {
        memset(&fitter->report, 0, sizeof fitter->report);
        free(fitter->trace);
        fitter->trace = NULL;
        fitter->trace_length = 0;
    }
    fitter->report.version = MOE_FIT_REPORT_VERSION;
    fitter->report.status = MOE_OK;
    fitter->report.loglik = NAN;
    fitter->report.converged = 0;
    fitter->report.warnings = 0;
    fitter->report.gate_transition = NAN;
    fitter->report.stream_rows = 0; /* the call's, counted by the estimator */
}

static moe_status run_call(moe_fitter_t *fitter, moe_model_t *model, const call_input *input)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    double started = moe_now_seconds();
    int partial = input->call == MOE_CALL_PARTIAL_FIT;
    int continuing = partial && fitter->session.active;
    moe_fit_report before = fitter->report;
    fitter->message[0] = '\0';
    start_report(fitter, continuing);
    moe_combiner combiner = {0};
    combiner.function = fitter->combine;
    combiner.user = fitter->combine_data;
    moe_combiner *outer_combiner = moe_combiner_enter(&combiner);
    moe_status status = prepare_call(fitter, &combiner, model, input, partial);
    if (status != MOE_OK) {
        moe_combiner_leave(outer_combiner);
        fitter->report.status = status;
        fitter->report.seconds = (continuing ? before.seconds : 0.0) + moe_now_seconds() - started;
        return status;
    }
    moe_context_setup setup;
    describe_call(&setup, fitter, model, input);
    moe_fit_context *context = NULL;
    status = moe_context_create(&context, &setup);
    moe_scratch scratch = MOE_SCRATCH_INIT;
    moe_scratch *outer_scratch = moe_scratch_enter(&scratch);
    if (status == MOE_OK)
        status = run_estimator(fitter, context, model, input, &before, continuing);
    else /* the working copies could not be made: a combined fit's workers still hear it */
        status = moe_combine_final(status, fitter->message);
    moe_scratch_leave(outer_scratch);
    moe_scratch_free(&scratch);
    moe_combiner_leave(outer_combiner);
    if (context != NULL)
        fitter->search_cost = context->search_cost;
    moe_context_release(context);
    if (status == MOE_OK)
        fitter->message[0] = '\0'; /* a restart that failed on the way is not the outcome */
    fitter->report.status = status;
    fitter->report.seconds = (continuing ? before.seconds : 0.0) + moe_now_seconds() - started;
    report_session(fitter, partial, input->n);
    return status;
}

moe_status moe_fitter_fit(moe_fitter_t *fitter, moe_model_t *model, size_t n, const double *X,
                          size_t ldx, const double *y, const double *weights)
{
    call_input input = {MOE_CALL_FIT, n, X, ldx, y, weights, 0, NULL, NULL};
    return run_call(fitter, model, &input);
}

moe_status moe_fitter_partial_fit(moe_fitter_t *fitter, moe_model_t *model, size_t n,
                                  const double *X, size_t ldx, const double *y,
                                  const double *weights)
{
    call_input input = {MOE_CALL_PARTIAL_FIT, n, X, ldx, y, weights, 0, NULL, NULL};
    return run_call(fitter, model, &input);
}

moe_status moe_fitter_aggregate(moe_fitter_t *fitter, moe_model_t *model, size_t count,
                                const moe_model_t *const *models, const double *model_weights,
                                size_t n, const double *X, size_t ldx, const double *y,
                                const double *weights)
{
    call_input input = {MOE_CALL_AGGREGATE, n, X, ldx, y, weights, count, models, model_weights};
    return run_call(fitter, model, &input);
}

moe_status moe_fitter_reset(moe_fitter_t *fitter)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    return end_session(fitter);
}
