/*
 * ismm: incremental stochastic majorisation-minimisation (docs/ARCHITECTURE.md, "The
 * streaming estimator"), written against moe/estimator.h.
 *
 * The estimator keeps running statistics s of the surrogate (ismm_statistics.c) and, for
 * every batch, s <- s + gamma (Sbar(theta; batch) - s), theta <- argmin of the surrogate at
 * s. The schedule counts rows: gamma_r = step_scale (r + step_offset)^-step_decay for row r,
 * and a batch of B rows steps by 1 - prod (1 - gamma_r) over its rows (B = 1: gamma_r), so
 * that batches of 256 move the statistics as far over a stream as single rows do. Memory is
 * that of s and theta, O(K p^2 + (K p)^2) at most, whatever the stream's length.
 *
 * A session (moe_fitter_partial_fit) starts by collecting warm_start rows (by default
 * max(85, 10 x free parameters)); s_0 is their statistic at the starting point and theta_0
 * its minimiser. Until then the model is the caller's and the report's stages stay 0. The
 * starting point is init's (the search of init = mixed on those rows by default) with,
 * unless the caller gave it (init = model or custom), the gate scaled to separate the rows
 * by at most 10 logits and the variances at the rows' spread of y: a fit to so few rows
 * often separates the gate or collapses an expert, and the stream cannot walk a saturated
 * gate back (restart_bounded says why). With batch_size > 0 rows are cut into batches of
 * that size across calls (the rows of an unfinished batch wait in the state), so any split
 * of a stream into calls gives the same steps, bit for bit; with batch_size = 0 every call
 * is one batch. The warm start's size and batch_size are the session's from its first call.
 * A call consumes all its rows or, failing or cancelled, none: a snapshot taken before its
 * first step is put back. moe_fitter_fit runs epochs over the data in an order shuffled by
 * the seed, or with batch_size = 0 the deterministic batch MM (gamma = 1 on the whole data:
 * monotone).
 *
 * The state (statistics, iterate, Polyak average, waiting rows, step count, options) saves
 * to bytes that moe_fitter_save_state wraps in its checksummed file (ismm_state_file.c).
 * Loading trusts none of it: every count is checked against the others and against the
 * bytes present, so a crafted state allocates no more than it carries and describes only a
 * session ismm could reach. The options (declared in ismm_session.h) and the session's
 * arrays are in ismm_session.c.
 */
#include "estimators/ismm/ismm.h"
#include "estimators/ismm/ismm_session.h"
#include "common/inputs.h"
#include "common/check.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* moe_context_fail with a formatted message. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static moe_status fail_formatted(moe_fit_context *context, moe_status status, const char *format,
                                 ...)
{
    char message[512];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    return moe_context_fail(context, status, message);
}


/* ---- Model <-> parameters -------------------------------------------------------------------- */

/* The model's expert rows for the free rows of the storage: a multinomial expert's last
   (reference) class row is zero in the model and absent from the storage. */
size_t ismm_model_expert_rows(const ismm_shape *shape)
{
    return shape->rows + (shape->multinomial ? 1 : 0);
}

static moe_status read_model(const ismm_shape *shape, const moe_model_t *model, double *storage)
{
    ismm_parameters theta;
    ismm_parameters_map(shape, storage, &theta);
    size_t p = shape->p, free_rows = shape->rows, rows = ismm_model_expert_rows(shape);
    double *experts = malloc(shape->K * rows * p * sizeof(double));
    if (experts == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    moe_status status = moe_model_get_gate(model, theta.gate, shape->K * p);
    if (status == MOE_OK)
        status = moe_model_get_experts(model, experts, shape->K * rows * p);
    for (size_t k = 0; status == MOE_OK && k < shape->K; ++k)
        memcpy(theta.experts + k * free_rows * p, experts + k * rows * p,
               free_rows * p * sizeof(double));
    free(experts);
    if (status == MOE_OK && shape->gaussian)
        status = moe_model_get_variances(model, theta.variances, shape->K);
    return status;
}

static moe_status write_model(const ismm_shape *shape, moe_model_t *model, const double *storage)
{
    ismm_parameters theta;
    ismm_parameters_map(shape, (double *)storage, &theta);
    size_t p = shape->p, free_rows = shape->rows, rows = ismm_model_expert_rows(shape);
    double *experts = calloc(shape->K * rows * p, sizeof(double));
    if (experts == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; k < shape->K; ++k)
        memcpy(experts + k * rows * p, theta.experts + k * free_rows * p,
               free_rows * p * sizeof(double));
    moe_status status = moe_model_set_gate(model, theta.gate, shape->K * p);
    if (status == MOE_OK)
        status = moe_model_set_experts(model, experts, shape->K * rows * p);
    free(experts);
    if (status == MOE_OK && shape->gaussian)
        status = moe_model_set_variances(model, theta.variances, shape->K);
    return status;
}

/* ---- One step -------------------------------------------------------------------------------- */

/* Where a batch's rows come from, to name a failing one in the caller's numbering: the first
   `earlier` rows waited from earlier calls, the rest are the caller's rows from `first` on
   (through `order` in a fit, when not NULL). */
typedef struct batch_origin {
    size_t earlier, first;
    const size_t *order;
} batch_origin;

typedef struct call {
    moe_fit_context *context;
    ismm_state *state;
    double variance_floor_relative;
    double min_weight;
    size_t iteration; /* recorded in this call */
    double loglik;    /* of the call's batches, each before its step */
    double weight;
    batch_origin origin; /* of the batch being stepped */
} call;

static moe_status fail_on_row(call *c, size_t row)
{
    const batch_origin *origin = &c->origin;
    if (row < origin->earlier)
        return fail_formatted(c->context, MOE_ERR_NUMERICAL,
                              "ismm: row %zu of the rows waiting from earlier calls has no "
                              "finite log-likelihood under the session's parameters; the "
                              "session is unchanged",
                              row);
    size_t index = origin->first + (row - origin->earlier);
    if (origin->order != NULL)
        index = origin->order[index];
    return fail_formatted(c->context, MOE_ERR_NUMERICAL,
                          "row %zu: ismm: no finite log-likelihood under the session's "
                          "parameters; the session is unchanged",
                          index);
}

/*
 * The step of a batch of `rows` rows: the schedule counts rows, so a batch weighs what its
 * rows would one at a time, 1 - prod_i (1 - gamma_r) over r = t rows + i (every earlier
 * batch taken to have this one's size, exact when batch_size is fixed). With the schedule
 * per step, a stream in batches of 256 moved its statistics by sum gamma_t = 15 over 1e5
 * rows against 250 one row at a time, and the gate, whose bound's curvature exceeds its
 * Hessian's some 25 times at slope 8, stayed 3 below the truth.
 */
static double step_size(const ismm_state *state, size_t rows)
{
    const ismm_settings *s = &state->settings;
    double offset = s->step_offset >= 0.0 ? s->step_offset : (double)state->warm_rows;
    if (rows < 1)
        rows = 1;
    double first = (double)state->steps * (double)rows + offset;
    double gamma = s->step_scale * pow(first + 1.0, -s->step_decay);
    if (rows > 1) {
        double keep = 1.0;
        for (size_t i = 1; i <= rows && keep > 0.001; ++i)
            keep *= 1.0 - s->step_scale * pow(first + (double)i, -s->step_decay);
        gamma = 1.0 - keep;
    }
    /* gamma = 1 would replace the statistics by one batch's (the collapse of a variance
       on one sample); gamma must stay in (0, 1). */
    if (!(gamma < 0.999))
        gamma = 0.999;
    return gamma;
}

static void report_mstep(moe_fit_context *context, const ismm_mstep_report *report)
{
    moe_context_count(context, MOE_COUNTER_RIDGE_FALLBACKS, report->ridge_fallbacks);
    moe_context_count(context, MOE_COUNTER_FLOORED_VARIANCES, report->floored_variances);
    moe_context_count(context, MOE_COUNTER_DEGENERATE_EVENTS, report->frozen_experts);
}

/*
 * One update from `rows`: the batch statistic at theta_t, s <- s + gamma (Sbar - s) (gamma =
 * 1: s = Sbar), theta <- argmin. On any failure s and theta are as they were.
 */
static moe_status update(call *c, const moe_rows *rows, double gamma, double *batch_loglik,
                         double *batch_weight)
{
    ismm_state *state = c->state;
    const ismm_shape *shape = &state->shape;
    size_t size = ismm_statistics_size(shape), parameters_size = ismm_parameters_size(shape);
    double *batch_statistics = malloc(size * sizeof(double));
    double *next = malloc(parameters_size * sizeof(double));
    double *next_statistics = malloc(size * sizeof(double));
    if (batch_statistics == NULL || next == NULL || next_statistics == NULL) {
        free(batch_statistics);
        free(next);
        free(next_statistics);
        return moe_context_fail(c->context, MOE_ERR_OUT_OF_MEMORY,
                                "cannot allocate ismm's step");
    }
    ismm_surrogate surrogate = {state->settings.bound, state->settings.eps};
    ismm_parameters theta;
    ismm_parameters_map(shape, state->parameters, &theta);
    size_t failed_row = 0;
    moe_status status = ismm_batch_statistics(c->context, shape, &surrogate, &theta, rows,
                                              batch_statistics, batch_weight, batch_loglik,
                                              &failed_row);
    if (status == MOE_ERR_NUMERICAL)
        status = fail_on_row(c, failed_row);
    if (status == MOE_OK) {
        for (size_t i = 0; i < size; ++i)
            next_statistics[i] =
                state->statistics[i] + gamma * (batch_statistics[i] - state->statistics[i]);
        memcpy(next, state->parameters, parameters_size * sizeof(double));
        ismm_statistics s;
        ismm_statistics_map(shape, next_statistics, &s);
        ismm_parameters next_theta;
        ismm_parameters_map(shape, next, &next_theta);
        ismm_mstep_report report = {0, 0, 0};
        int failed = ismm_mstep(shape, &surrogate, state->settings.gate_solve, &s,
                                state->variance_floor, c->min_weight, &next_theta, &report);
        for (size_t i = 0; !failed && i < parameters_size; ++i)
            failed = !isfinite(next[i]);
        if (failed)
            status = fail_formatted(c->context, MOE_ERR_NUMERICAL,
                                    "ismm: the M-step found no finite minimiser for a batch "
                                    "of %zu rows; the session is unchanged",
                                    rows->n);
        else {
            report_mstep(c->context, &report);
            memcpy(state->statistics, next_statistics, size * sizeof(double));
            memcpy(state->parameters, next, parameters_size * sizeof(double));
        }
    }
    free(batch_statistics);
    free(next);
    free(next_statistics);
    return status;
}

static void polyak_update(ismm_state *state)
{
    size_t size = ismm_parameters_size(&state->shape);
    if (state->settings.polyak == 0 || state->steps < state->settings.polyak)
        return;
    state->averaged += 1;
    double weight = 1.0 / (double)state->averaged;
    for (size_t i = 0; i < size; ++i)
        state->average[i] += weight * (state->parameters[i] - state->average[i]);
}

/* The model's parameters: the Polyak average once it has begun, else the iterate. */
static const double *estimate(const ismm_state *state)
{
    return state->averaged > 0 ? state->average : state->parameters;
}

/* A stochastic step on a batch: gamma_t, the update, the record. */
static moe_status stochastic_step(call *c, const moe_rows *rows, int record)
{
    ismm_state *state = c->state;
    double loglik = 0.0, weight = 0.0;
    moe_status status = update(c, rows, step_size(state, rows->n), &loglik, &weight);
    if (status != MOE_OK)
        return status;
    state->steps += 1;
    polyak_update(state);
    c->loglik += loglik;
    c->weight += weight;
    /* A partial fit's step is a step of the session: the report's prequential
       log-likelihood (stream_rows, stream_loglik) is the recorded batches'. */
    if (record)
        status = moe_context_count(c->context, MOE_COUNTER_STREAM_ROWS, rows->n);
    if (record && status == MOE_OK)
        status = moe_context_iteration(c->context, 0, c->iteration++, loglik);
    return status;
}

/* The warm start's gate may separate the rows by at most this many logits (a probability
   of 1 - 5e-5): docs/ARCHITECTURE.md, "The warm start", gives the measurements. */
static const double warm_gate_logits = 10.0;

/* The largest difference of two experts' gate logits over the rows. */
/* The largest difference between two of `count` rows of logits (coefficient rows of p, and
   the reference's zero logit) on any of the rows. */
static double largest_logit_gap(const ismm_shape *shape, const double *coefficients,
                                size_t count, const moe_rows *rows)
{
    size_t p = shape->p, d = shape->d, offset = shape->intercept ? 1 : 0;
    double largest = 0.0;
    for (size_t i = 0; i < rows->n; ++i) {
        const double *x = rows->X != NULL ? rows->X + i * rows->ldx : NULL;
        double low = 0.0, high = 0.0;
        for (size_t k = 0; k < count; ++k) {
            double logit = shape->intercept ? coefficients[k * p] : 0.0;
            for (size_t j = 0; j < d; ++j)
                logit += coefficients[k * p + offset + j] * x[j];
            low = logit < low ? logit : low;
            high = logit > high ? logit : high;
        }
        largest = high - low > largest ? high - low : largest;
    }
    return largest;
}

/* Coefficient rows scaled so that their logits differ by at most warm_gate_logits. */
static void bound_logits(const ismm_shape *shape, double *coefficients, size_t count,
                         const moe_rows *rows)
{
    double gap = largest_logit_gap(shape, coefficients, count, rows);
    if (gap > warm_gate_logits)
        for (size_t i = 0; i < count * shape->p; ++i)
            coefficients[i] *= warm_gate_logits / gap;
}

/*
 * The start's gate (and a classification expert's classes) scaled down until it separates
 * no two experts (classes) by more than warm_gate_logits on the warm rows, its variances restarted at the rows' spread of y, its
 * experts' coefficients kept. The start is a fit to the warm rows (85 in setting 6.1),
 * which often separates them: a gate slope of 23 to 190,000 where the truth's is 8, and
 * an expert whose variance collapsed on the few rows it interpolates. A saturated gate's
 * posteriors equal it, so the surrogate's gate statistic carries almost no gradient and
 * the decreasing steps never walk it back (the stream kept the warm slope for 1e6 rows);
 * a collapsed expert loses its rows and dies. Scaled, the gate keeps the start's direction
 * and stays informative. Measured against the flat gate (the first minimiser one bounded
 * MM step from zero) and bounds of 6 and 14 logits: docs/REPRODUCTIONS.md, "Streaming".
 */
static void restart_bounded(const ismm_shape *shape, const moe_rows *rows, double spread,
                            double *storage)
{
    ismm_parameters theta;
    ismm_parameters_map(shape, storage, &theta);
    bound_logits(shape, theta.gate, shape->K, rows);
    /* A classification expert's classes are a softmax too, and saturate alike. */
    for (size_t k = 0; !shape->gaussian && k < shape->K; ++k)
        bound_logits(shape, theta.experts + k * shape->rows * shape->p, shape->rows, rows);
    if (shape->gaussian)
        for (size_t k = 0; k < shape->K; ++k)
            theta.variances[k] = spread;
}

/* The warm start on the waiting rows: theta_0 from init (a start of the estimator's own
   bounded), s_0 = Sbar(theta_0; rows), theta = its minimiser. */
static moe_status warm_start(call *c, moe_model_t *model, const moe_rows *rows)
{
    ismm_state *state = c->state;
    const ismm_shape *shape = &state->shape;
    long long init = 0;
    moe_status status = moe_context_get_int(c->context, MOE_OPT_INIT, &init);
    if (status == MOE_OK)
        status = moe_context_start_rows(c->context, model, 0, rows);
    if (status == MOE_OK)
        status = read_model(shape, model, state->parameters);
    if (status != MOE_OK)
        return status;
    /* The variance floor from the warm rows' spread of y. */
    double total = 0.0, mean = 0.0, square = 0.0;
    for (size_t i = 0; i < rows->n; ++i) {
        double w = rows->weights != NULL ? rows->weights[i] : 1.0;
        total += w;
        mean += w * rows->y[i];
        square += w * rows->y[i] * rows->y[i];
    }
    double spread = total > 0.0 ? square / total - (mean / total) * (mean / total) : 0.0;
    state->variance_floor = c->variance_floor_relative * (spread > 0.0 ? spread : 1.0);
    if (state->variance_floor <= 0.0)
        state->variance_floor = 1e-300;
    /* The caller's own start (init = model or custom) is taken as given. */
    if (init != MOE_INIT_MODEL && init != MOE_INIT_CUSTOM)
        restart_bounded(shape, rows, spread > state->variance_floor ? spread : 1.0,
                        state->parameters);
    double loglik = 0.0, weight = 0.0;
    status = update(c, rows, 1.0, &loglik, &weight);
    if (status == MOE_OK)
        state->started = 1;
    return status;
}

/* ---- partial_fit ------------------------------------------------------------------------------ */

/* The caller's rows first .. first + count - 1 into the waiting buffer from row `at` on (room
   reserved). */
static void put_waiting(ismm_state *state, size_t at, const moe_rows *rows, size_t first,
                        size_t count)
{
    size_t d = state->shape.d;
    for (size_t i = 0; i < count; ++i) {
        size_t from = first + i, to = at + i;
        if (d > 0)
            memcpy(state->waiting_X + to * d, rows->X + from * rows->ldx, d * sizeof(double));
        state->waiting_y[to] = rows->y[from];
        state->waiting_w[to] = rows->weights != NULL ? rows->weights[from] : 1.0;
    }
}

static moe_rows waiting_rows(const ismm_state *state, size_t count)
{
    moe_rows rows = {count, state->shape.d > 0 ? state->waiting_X : NULL, state->shape.d,
                     state->waiting_y, state->waiting_w};
    return rows;
}

static moe_status read_common(call *c)
{
    double floor = 0.0, min_weight = 0.0;
    moe_status status = moe_context_get_double(c->context, MOE_OPT_VARIANCE_FLOOR, &floor);
    if (status == MOE_OK)
        status = moe_context_get_double(c->context, MOE_OPT_MIN_EXPERT_WEIGHT, &min_weight);
    c->variance_floor_relative = floor;
    c->min_weight = min_weight;
    return status;
}

static moe_status check_family(moe_fit_context *context, const moe_model_t *model)
{
    moe_family family = moe_model_family(model);
    if (family != MOE_FAMILY_GAUSSIAN && family != MOE_FAMILY_LOGISTIC &&
        family != MOE_FAMILY_MULTINOMIAL && family != MOE_FAMILY_STUDENT_T &&
        family != MOE_FAMILY_POISSON) {
        char text[256];
        snprintf(text, sizeof text,
                 "ismm's surrogate is derived for Gaussian, logistic and multinomial experts "
                 "only, not %s experts; fit them with em, gem or gd",
                 moe_family_name(family));
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED, text);
    }
    if (family != MOE_FAMILY_GAUSSIAN && family != MOE_FAMILY_LOGISTIC &&
        family != MOE_FAMILY_MULTINOMIAL)
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                family == MOE_FAMILY_STUDENT_T
                                    ? "ismm's surrogate is derived for Gaussian, logistic and "
                                      "multinomial experts only: a t expert's degrees of "
                                      "freedom have no quadratic majoriser; fit t experts "
                                      "with em"
                                    : "ismm's surrogate is derived for Gaussian, logistic and "
                                      "multinomial experts only: a Poisson expert's exp(beta' "
                                      "x) has no quadratic majoriser to build it from; fit "
                                      "Poisson experts with em, gem or gd");
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    if (moe_model_get_spec(model, &spec) == MOE_OK && spec.offset_feature >= 0)
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                "ismm's surrogate takes no offset; fit a model with an offset "
                                "with em, gem or gd");
    if (moe_model_family(model) == MOE_FAMILY_GAUSSIAN &&
        moe_model_link(model) != MOE_LINK_IDENTITY)
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                "ismm's Gaussian M-step is least squares: it fits the identity "
                                "link only");
    return MOE_OK;
}

/* What a step changes, kept so that a call failing (or cancelled) half way can be undone. */
typedef struct snapshot {
    int taken, started;
    uint64_t steps, averaged;
    double variance_floor;
    double *arrays; /* the statistics, the iterate, the average */
} snapshot;

static moe_status snapshot_take(snapshot *saved, const ismm_state *state)
{
    size_t statistics = ismm_statistics_size(&state->shape);
    size_t parameters = ismm_parameters_size(&state->shape);
    saved->arrays = malloc((statistics + 2 * parameters) * sizeof(double));
    if (saved->arrays == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    memcpy(saved->arrays, state->statistics, statistics * sizeof(double));
    memcpy(saved->arrays + statistics, state->parameters, parameters * sizeof(double));
    memcpy(saved->arrays + statistics + parameters, state->average, parameters * sizeof(double));
    saved->started = state->started;
    saved->steps = state->steps;
    saved->averaged = state->averaged;
    saved->variance_floor = state->variance_floor;
    saved->taken = 1;
    return MOE_OK;
}

static void snapshot_restore(const snapshot *saved, ismm_state *state)
{
    if (!saved->taken)
        return;
    size_t statistics = ismm_statistics_size(&state->shape);
    size_t parameters = ismm_parameters_size(&state->shape);
    memcpy(state->statistics, saved->arrays, statistics * sizeof(double));
    memcpy(state->parameters, saved->arrays + statistics, parameters * sizeof(double));
    memcpy(state->average, saved->arrays + statistics + parameters, parameters * sizeof(double));
    state->started = saved->started;
    state->steps = saved->steps;
    state->averaged = saved->averaged;
    state->variance_floor = saved->variance_floor;
}

/*
 * A call's rows in the stream of the session: the rows waiting before it (`old`, the start of
 * the warm start or of a batch) and the call's first `fill` rows make the first segment, whole
 * or not; if whole, the next `direct` rows are stepped in place, in batches (or as one with
 * batch_size 0), and the last `tail` rows wait. Rows are consumed only in this order, so any
 * split of a stream into calls gives the same steps.
 */
typedef struct plan {
    size_t old, fill, direct, tail;
    int completes; /* the first segment is whole: it is stepped */
    int passes;    /* the call goes past it (or there is none): the tail waits alone */
} plan;

static plan make_plan(const ismm_state *state, size_t n)
{
    plan p = {state->waiting, 0, 0, 0, 0, 1};
    size_t B = state->batch_size;
    size_t segment = !state->started ? state->warm_rows : p.old > 0 ? B : 0;
    if (segment > 0) {
        p.fill = segment - p.old < n ? segment - p.old : n;
        p.completes = p.passes = p.old + p.fill == segment;
        if (!p.completes)
            return p;
    }
    size_t rest = n - p.fill;
    p.direct = B == 0 ? rest : rest / B * B;
    p.tail = rest - p.direct;
    return p;
}

static double caller_weight(const moe_rows *rows, size_t first, size_t count)
{
    double total = 0.0;
    for (size_t i = first; i < first + count; ++i)
        total += rows->weights != NULL ? rows->weights[i] : 1.0;
    return total;
}

/* Every segment the call will step has weight: checked before the first step. */
static moe_status check_plan(call *c, const plan *p, const moe_rows *rows)
{
    const ismm_state *state = c->state;
    if (p->completes) {
        double total = caller_weight(rows, 0, p->fill);
        for (size_t i = 0; i < p->old; ++i)
            total += state->waiting_w[i];
        if (!(total > 0.0))
            return fail_formatted(c->context, MOE_ERR_INVALID_ARGUMENT,
                                  "ismm: %s (%zu rows waiting and rows 0 to %zu of this call) "
                                  "has no weight",
                                  state->started ? "the batch" : "the warm start", p->old,
                                  p->fill - 1);
    }
    size_t size = state->batch_size > 0 ? state->batch_size : p->direct;
    for (size_t first = p->fill; first < p->fill + p->direct; first += size)
        if (!(caller_weight(rows, first, size) > 0.0))
            return fail_formatted(c->context, MOE_ERR_INVALID_ARGUMENT,
                                  "ismm: the batch of rows %zu to %zu of this call has no "
                                  "weight",
                                  first, first + size - 1);
    return MOE_OK;
}

/* The plan's steps; the snapshot is taken before the first. */
static moe_status run_plan(call *c, moe_model_t *model, const moe_rows *rows, const plan *p,
                           snapshot *saved)
{
    ismm_state *state = c->state;
    put_waiting(state, p->old, rows, 0, p->fill);
    if (!p->completes && p->direct == 0)
        return MOE_OK;
    moe_status status = snapshot_take(saved, state);
    if (status != MOE_OK)
        return moe_context_fail(c->context, status, "cannot allocate ismm's snapshot");
    if (p->completes) {
        moe_rows first = waiting_rows(state, p->old + p->fill);
        batch_origin origin = {p->old, 0, NULL};
        c->origin = origin;
        status = state->started ? stochastic_step(c, &first, 1) : warm_start(c, model, &first);
    }
    size_t size = state->batch_size > 0 ? state->batch_size : p->direct;
    for (size_t at = p->fill; status == MOE_OK && at < p->fill + p->direct; at += size) {
        moe_rows piece = {size, rows->X != NULL ? rows->X + at * rows->ldx : NULL, rows->ldx,
                          rows->y + at, rows->weights != NULL ? rows->weights + at : NULL};
        batch_origin origin = {0, at, NULL};
        c->origin = origin;
        status = stochastic_step(c, &piece, 1);
    }
    return status;
}

/* The inputs the model's parts see, for this call's M-steps. The statistics do not depend on
   them (they are means over rows at the current parameters), so a session keeps no copy
   across calls: it follows the model it is given. */
static void refresh_inputs(ismm_state *state, const moe_model_t *model)
{
    size_t p = state->shape.p;
    unsigned char *gate = state->inputs, *experts = state->inputs + p;
    moe_model_get_inputs(model, MOE_PART_GATE, gate, p);
    moe_model_get_inputs(model, MOE_PART_EXPERTS, experts, p);
    state->shape.gate_inputs = moe_inputs_or_every(p, gate);
    state->shape.expert_inputs = moe_inputs_or_every(p, experts);
}

/* The session's state for this call: checked against the model and the options, or new. */
static moe_status open_session(call *c, const moe_model_t *model, size_t batch_size)
{
    ismm_state *state = c->state;
    ismm_shape shape = ismm_shape_of(model);
    if (state->ready && !ismm_same_shape(&shape, &state->shape))
        return moe_context_fail(c->context, MOE_ERR_INVALID_ARGUMENT,
                                "ismm: the model's structure differs from the session's "
                                "(moe_fitter_reset starts a new session)");
    if (state->ready && batch_size != state->batch_size)
        return fail_formatted(c->context, MOE_ERR_INVALID_ARGUMENT,
                              "ismm: batch_size is %zu, but this session cuts its batches at "
                              "%zu rows (fixed at its first call; moe_fitter_reset starts a "
                              "new session)",
                              batch_size, state->batch_size);
    if (!state->ready &&
        ismm_allocate(state, &shape, ismm_configured_warm_rows(&state->settings, &shape), batch_size) !=
            MOE_OK) {
        ismm_release(state);
        return moe_context_fail(c->context, MOE_ERR_OUT_OF_MEMORY,
                                "cannot allocate ismm's state");
    }
    refresh_inputs(state, model);
    return MOE_OK;
}

/*
 * A call either consumes all its rows or, failing (cancelled included), leaves the session
 * exactly as it was: the rows that waited before it still wait, and the statistics, the
 * iterate and the counts are restored from the snapshot.
 */
static moe_status ismm_partial_fit(void *opaque, moe_fit_context *context)
{
    ismm_state *state = opaque;
    moe_model_t *model = moe_context_model(context);
    call c;
    memset(&c, 0, sizeof c);
    c.context = context;
    c.state = state;
    long long batch_size = 0;
    moe_status status = check_family(context, model);
    if (status == MOE_OK)
        status = read_common(&c);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_BATCH_SIZE, &batch_size);
    if (status != MOE_OK)
        return status;
    int fresh = !state->ready;
    status = open_session(&c, model, (size_t)batch_size);
    if (status != MOE_OK)
        return status;
    moe_rows rows;
    status = moe_context_rows(context, &rows);
    plan p = make_plan(state, status == MOE_OK ? rows.n : 0);
    if (status == MOE_OK)
        status = check_plan(&c, &p, &rows);
    if (status == MOE_OK) {
        status = ismm_reserve(state, p.old + p.fill > p.tail ? p.old + p.fill : p.tail);
        if (status != MOE_OK)
            status = moe_context_fail(context, status, "cannot allocate ismm's waiting rows");
    }
    snapshot saved;
    memset(&saved, 0, sizeof saved);
    if (status == MOE_OK)
        status = run_plan(&c, model, &rows, &p, &saved);
    if (status == MOE_OK && state->started)
        status = write_model(&state->shape, model, estimate(state));
    /* Until the warm start has its rows, the model stays as the caller gave it (the fitter
       reports its log-likelihood) and the report's stages stay 0: nothing was fitted. */
    if (status == MOE_OK && state->started)
        status = moe_context_add_stages(context, MOE_STAGE_JOINT);
    if (status == MOE_OK) {
        if (p.passes)
            put_waiting(state, 0, &rows, p.fill + p.direct, p.tail);
        state->waiting = p.passes ? p.tail : p.old + p.fill;
    } else {
        snapshot_restore(&saved, state);
        state->waiting = p.old;
    }
    free(saved.arrays);
    if (status != MOE_OK && fresh)
        ismm_release(state);
    return status;
}

/* ---- fit: epochs ------------------------------------------------------------------------------ */

/* Rows of the data in `order` from `first`, gathered into a buffer. */
static void gather(const moe_rows *all, const size_t *order, size_t first, size_t count,
                   size_t d, double *X, double *y, double *w)
{
    for (size_t i = 0; i < count; ++i) {
        size_t from = order[first + i];
        if (d > 0)
            memcpy(X + i * d, all->X + from * all->ldx, d * sizeof(double));
        y[i] = all->y[from];
        w[i] = all->weights != NULL ? all->weights[from] : 1.0;
    }
}

/* The log-likelihood of the estimate on all of a fit's rows, in their order. */
static moe_status full_loglik(call *c, const moe_rows *rows, double *loglik)
{
    ismm_state *state = c->state;
    batch_origin natural = {0, 0, NULL};
    c->origin = natural;
    const ismm_shape *shape = &state->shape;
    double *scratch = malloc(ismm_statistics_size(shape) * sizeof(double));
    if (scratch == NULL)
        return moe_context_fail(c->context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    ismm_surrogate surrogate = {state->settings.bound, state->settings.eps};
    ismm_parameters theta;
    ismm_parameters_map(shape, (double *)estimate(state), &theta);
    double weight = 0.0;
    size_t failed_row = 0;
    moe_status status = ismm_batch_statistics(c->context, shape, &surrogate, &theta, rows,
                                              scratch, &weight, loglik, &failed_row);
    if (status == MOE_ERR_NUMERICAL)
        status = fail_on_row(c, failed_row);
    free(scratch);
    return status;
}

/* The fit's epochs: what they read, and what they leave. */
typedef struct epoch_plan {
    size_t epochs;           /* max_iter */
    size_t batch;            /* rows of a mini-batch; 0: batch MM on all the rows */
    double tolerance, total;  /* tol; the rows' total weight */
    size_t *order;           /* the rows' order, shuffled anew for every epoch of mini-batches */
    moe_rng rng;
    size_t iterations;       /* the last epoch run */
    int converged;
} epoch_plan;

/* Fisher-Yates from the generator's state. */
static void shuffle(size_t *order, size_t n, moe_rng *rng)
{
    for (size_t i = n; i > 1; --i) {
        size_t j = moe_rng_below(rng, i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* Batch MM: gamma = 1 on all the rows; the E-step's log-likelihood is theta_e's. */
static moe_status batch_epochs(call *c, const moe_rows *all, epoch_plan *plan)
{
    ismm_state *state = c->state;
    size_t size = ismm_parameters_size(&state->shape);
    double previous = 0.0;
    moe_status status = MOE_OK;
    for (size_t epoch = 0; status == MOE_OK; ++epoch) {
        double loglik = 0.0, weight = 0.0;
        double *before = malloc(size * sizeof(double));
        if (before == NULL) {
            status = moe_context_fail(c->context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        memcpy(before, state->parameters, size * sizeof(double));
        status = epoch < plan->epochs ? update(c, all, 1.0, &loglik, &weight)
                                      : full_loglik(c, all, &loglik);
        if (status == MOE_OK)
            status = moe_context_iteration(c->context, 0, epoch, loglik);
        if (status == MOE_OK && epoch > 0) {
            double scale = plan->total + fabs(loglik);
            if (loglik < previous - 1e-10 * scale)
                moe_context_note_decrease(c->context, (previous - loglik) / scale);
            if (fabs(loglik - previous) <= plan->tolerance * scale) {
                /* theta_e met the tolerance: it is the result, not the step after it. */
                memcpy(state->parameters, before, size * sizeof(double));
                plan->converged = 1;
            }
        }
        free(before);
        previous = loglik;
        plan->iterations = epoch;
        if (plan->converged || epoch >= plan->epochs)
            break;
        state->steps += 1;
    }
    return status;
}

/* One epoch of mini-batches in the plan's order; c->loglik sums each batch's log-likelihood
   before its step. X, y and w hold a batch. */
static moe_status minibatch_epoch(call *c, const moe_rows *all, size_t d,
                                  const epoch_plan *plan, double *X, double *y, double *w)
{
    size_t n = all->n, B = plan->batch;
    moe_status status = MOE_OK;
    c->loglik = 0.0;
    c->weight = 0.0;
    for (size_t first = 0; status == MOE_OK && first < n; first += B) {
        size_t count = n - first < B ? n - first : B;
        gather(all, plan->order, first, count, d, X, y, w);
        moe_rows piece = {count, d > 0 ? X : NULL, d, y, w};
        batch_origin origin = {0, first, plan->order};
        c->origin = origin;
        status = stochastic_step(c, &piece, 0);
    }
    return status;
}

/* Stochastic MM: epochs of mini-batches until the epoch's running log-likelihood stops
   changing; the trace starts and ends with the exact log-likelihood on all the rows. */
static moe_status minibatch_epochs(call *c, const moe_rows *all, size_t d, epoch_plan *plan)
{
    moe_fit_context *context = c->context;
    size_t n = all->n, B = plan->batch;
    double *X = malloc(B * (d > 0 ? d : 1) * sizeof(double)), *y = malloc(B * sizeof(double));
    double *w = malloc(B * sizeof(double));
    moe_status status = MOE_OK;
    if (X == NULL || y == NULL || w == NULL)
        status = moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    double loglik = 0.0;
    if (status == MOE_OK)
        status = full_loglik(c, all, &loglik);
    if (status == MOE_OK)
        status = moe_context_iteration(context, 0, 0, loglik);
    double previous = loglik;
    for (size_t epoch = 1; status == MOE_OK && epoch <= plan->epochs; ++epoch) {
        status = minibatch_epoch(c, all, d, plan, X, y, w);
        if (status == MOE_OK)
            status = moe_context_iteration(context, 0, epoch, c->loglik);
        plan->iterations = epoch;
        if (status == MOE_OK &&
            fabs(c->loglik - previous) <= plan->tolerance * (plan->total + fabs(c->loglik))) {
            plan->converged = 1;
            break;
        }
        previous = c->loglik;
        /* The next epoch visits the rows in a new order. */
        shuffle(plan->order, n, &plan->rng);
    }
    /* The last entry is the exact log-likelihood of the model returned. */
    if (status == MOE_OK)
        status = full_loglik(c, all, &loglik);
    if (status == MOE_OK)
        status = moe_context_iteration(context, 0, plan->iterations + 1, loglik);
    free(X);
    free(y);
    free(w);
    return status;
}

/* The fitter's options a fit reads, besides read_common's. */
static moe_status read_fit_options(call *c, const moe_model_t *model, long long *batch_size,
                                   long long *epochs, long long *seed, double *tolerance)
{
    moe_fit_context *context = c->context;
    moe_status status = check_family(context, model);
    if (status == MOE_OK)
        status = read_common(c);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_BATCH_SIZE, batch_size);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_MAX_ITER, epochs);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_SEED, seed);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_TOLERANCE, tolerance);
    return status;
}

static moe_status ismm_fit(void *opaque, moe_fit_context *context)
{
    ismm_state *state = opaque;
    moe_model_t *model = moe_context_model(context);
    call c;
    memset(&c, 0, sizeof c);
    c.context = context;
    c.state = state;
    long long batch_size = 0, epochs = 0, seed = 0;
    epoch_plan plan;
    memset(&plan, 0, sizeof plan);
    moe_status status = read_fit_options(&c, model, &batch_size, &epochs, &seed,
                                         &plan.tolerance);
    if (status != MOE_OK)
        return status;
    ismm_release(state);
    moe_rows all;
    status = moe_context_rows(context, &all);
    if (status != MOE_OK)
        return status;
    size_t n = all.n, d = moe_model_n_features(model);
    ismm_shape shape = ismm_shape_of(model);
    size_t warm = ismm_configured_warm_rows(&state->settings, &shape);
    if (warm > n)
        warm = n;
    plan.epochs = (size_t)epochs;
    plan.batch = batch_size > 0 ? (size_t)batch_size : 0;
    if (plan.batch > n)
        plan.batch = n;
    if (ismm_allocate(state, &shape, warm, plan.batch) != MOE_OK || ismm_reserve(state, warm) != MOE_OK) {
        ismm_release(state);
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate ismm's state");
    }
    refresh_inputs(state, model);
    plan.order = malloc(n * sizeof(size_t));
    if (plan.order == NULL)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < n; ++i)
        plan.order[i] = i;
    moe_rng_seed(&plan.rng, (uint64_t)seed, 0);
    /* Fisher-Yates from the seed: the warm start and every epoch's order. */
    shuffle(plan.order, n, &plan.rng);
    gather(&all, plan.order, 0, warm, d, state->waiting_X, state->waiting_y, state->waiting_w);
    moe_rows warm_rows = waiting_rows(state, warm);
    batch_origin warm_origin = {0, 0, plan.order};
    c.origin = warm_origin;
    status = warm_start(&c, model, &warm_rows);
    batch_origin natural = {0, 0, NULL};
    c.origin = natural;
    if (status == MOE_OK)
        status = moe_context_total_weight(context, NULL, &plan.total);
    if (status == MOE_OK)
        status = plan.batch == 0 ? batch_epochs(&c, &all, &plan)
                                 : minibatch_epochs(&c, &all, d, &plan);
    free(plan.order);
    if (status == MOE_OK)
        status = write_model(&state->shape, model, estimate(state));
    if (status == MOE_OK)
        status = moe_context_set_result(context, 0, plan.converged);
    /* A fit leaves no session behind. */
    ismm_release(state);
    return status;
}

const moe_estimator_ops moe_estimator_ismm = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "ismm",
    .create = ismm_create,
    .destroy = ismm_destroy,
    .fit = ismm_fit,
    .partial_fit = ismm_partial_fit,
    .options = MOE_OPTION_BIT(MOE_OPT_MAX_ITER) | MOE_OPTION_BIT(MOE_OPT_TOLERANCE) |
               MOE_OPTION_BIT(MOE_OPT_SEED) | MOE_OPTION_BIT(MOE_OPT_INIT) |
               MOE_OPTION_BIT(MOE_OPT_VARIANCE_FLOOR) |
               MOE_OPTION_BIT(MOE_OPT_MIN_EXPERT_WEIGHT) | MOE_OPTION_BIT(MOE_OPT_THREADS) |
               MOE_OPTION_BIT(MOE_OPT_BATCH_SIZE) | MOE_OPTION_BIT(MOE_OPT_GATE_MAX_NEWTON) |
               MOE_OPTION_BIT(MOE_OPT_GATE_TOLERANCE),
    .flags = MOE_ESTIMATOR_SMALL_BATCHES | MOE_ESTIMATOR_KEEPS_ORDER,
    .reset = ismm_reset,
    .aggregate = NULL,
    .save_state = ismm_save_state,
    .load_state = ismm_load_state,
    .option_table = ismm_option_table,
    .option_count = sizeof ismm_option_table / sizeof ismm_option_table[0],
    .set_option = ismm_set_option,
    .get_option = ismm_get_option,
};
