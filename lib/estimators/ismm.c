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
 * its minimiser. The starting point is init's (the search of init = mixed on those rows by
 * default) with, unless the caller gave it (init = model or custom), the gate scaled to
 * separate the rows by at most 10 logits and the variances at the rows' spread of y: a fit
 * to so few rows often separates the gate or collapses an expert, and the stream cannot
 * walk a saturated gate back (restart_bounded says why). With batch_size > 0 rows are cut
 * into batches of that size across calls (the rows of an unfinished batch wait in the
 * state), so any split of a stream into calls gives the same steps, bit for bit; with
 * batch_size = 0 every call is one batch. moe_fitter_fit runs epochs over the data in an
 * order shuffled by the seed, or with batch_size = 0 the deterministic batch MM (gamma = 1
 * on the whole data: monotone).
 *
 * The state (statistics, iterate, Polyak average, waiting rows, step count, options) saves
 * to bytes that moe_fitter_save_state wraps in its checksummed file.
 */
#include "estimators/ismm.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ismm_settings {
    double step_scale, step_offset, step_decay; /* gamma_t = scale (t + offset)^-decay;
                                                   offset < 0: the warm-start size */
    size_t warm_start;                          /* rows; 0: automatic */
    ismm_bound bound;
    ismm_gate_solve gate_solve;
    double eps;
    size_t polyak; /* average the iterates from this step on; 0: off */
} ismm_settings;

static const ismm_settings default_settings = {1.0, -1.0, 0.6, 0, ISMM_BOUND_PAPER,
                                               ISMM_GATE_KRONECKER, 1e-6, 0};

typedef struct ismm_state {
    ismm_settings settings;
    int ready, started;
    ismm_shape shape;
    uint64_t steps, averaged;
    double variance_floor; /* absolute, fixed at the warm start */
    size_t warm_rows;      /* the warm start's size, fixed at the first call */
    double *statistics;    /* s */
    double *parameters;    /* theta_t */
    double *average;       /* Polyak average */
    /* Rows waiting: the warm start's, then an unfinished batch's. */
    size_t waiting, capacity;
    double *waiting_X, *waiting_y, *waiting_w;
} ismm_state;

/* ---- Options --------------------------------------------------------------------------------- */

static int parse_real(const char *text, double *value)
{
    return moe_option_parse_real(text, value) != MOE_OK;
}

static int parse_count(const char *text, size_t high, size_t *value)
{
    long long parsed = 0;
    if (moe_option_parse_integer(text, &parsed) != MOE_OK || parsed < 0 ||
        (unsigned long long)parsed > high)
        return 1;
    *value = (size_t)parsed;
    return 0;
}

static moe_status ismm_set_option(void *opaque, const char *name, const char *value)
{
    ismm_state *state = opaque;
    ismm_settings next = state->settings;
    int bad = 0;
    if (strcmp(name, "step_scale") == 0)
        bad = parse_real(value, &next.step_scale) || !(next.step_scale > 0.0) ||
              next.step_scale > 1.0;
    else if (strcmp(name, "step_offset") == 0)
        bad = parse_real(value, &next.step_offset) || next.step_offset < 0.0;
    else if (strcmp(name, "step_decay") == 0)
        bad = parse_real(value, &next.step_decay) || !(next.step_decay > 0.5) ||
              next.step_decay > 1.0;
    else if (strcmp(name, "warm_start") == 0)
        bad = parse_count(value, 100000000, &next.warm_start);
    else if (strcmp(name, "bound") == 0) {
        if (strcmp(value, "paper") == 0)
            next.bound = ISMM_BOUND_PAPER;
        else if (strcmp(value, "bohning") == 0)
            next.bound = ISMM_BOUND_BOHNING;
        else
            bad = 1;
    } else if (strcmp(name, "gate_solve") == 0) {
        if (strcmp(value, "kronecker") == 0)
            next.gate_solve = ISMM_GATE_KRONECKER;
        else if (strcmp(value, "dense") == 0)
            next.gate_solve = ISMM_GATE_DENSE;
        else
            bad = 1;
    } else if (strcmp(name, "bound_eps") == 0)
        bad = parse_real(value, &next.eps) || !(next.eps > 0.0) || next.eps > 1.0;
    else if (strcmp(name, "polyak") == 0)
        bad = parse_count(value, (size_t)1 << 53, &next.polyak);
    else
        return MOE_ERR_NOT_FOUND;
    if (bad)
        return MOE_ERR_INVALID_ARGUMENT;
    /* The schedule and the surrogate cannot change in the middle of a session. */
    if (state->started && memcmp(&next, &state->settings, sizeof next) != 0)
        return MOE_ERR_INVALID_ARGUMENT;
    state->settings = next;
    return MOE_OK;
}

/* ---- State ----------------------------------------------------------------------------------- */

static void release(ismm_state *state)
{
    free(state->statistics);
    free(state->parameters);
    free(state->average);
    free(state->waiting_X);
    free(state->waiting_y);
    free(state->waiting_w);
    ismm_settings settings = state->settings;
    memset(state, 0, sizeof *state);
    state->settings = settings;
}

static moe_status ismm_create(void **out)
{
    ismm_state *state = calloc(1, sizeof *state);
    if (state == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    state->settings = default_settings;
    *out = state;
    return MOE_OK;
}

static void ismm_destroy(void *opaque)
{
    if (opaque == NULL)
        return;
    release(opaque);
    free(opaque);
}

static moe_status ismm_reset(void *opaque)
{
    release(opaque);
    return MOE_OK;
}

static ismm_shape shape_of(const moe_model_t *model)
{
    ismm_shape shape;
    shape.K = moe_model_n_experts(model);
    shape.d = moe_model_n_features(model);
    shape.p = moe_model_n_inputs(model);
    shape.rows = moe_model_expert_rows(model);
    shape.gaussian = moe_model_family(model) == MOE_FAMILY_GAUSSIAN;
    shape.intercept = moe_model_has_intercept(model);
    return shape;
}

static int same_shape(const ismm_shape *a, const ismm_shape *b)
{
    return a->K == b->K && a->d == b->d && a->p == b->p && a->rows == b->rows &&
           a->gaussian == b->gaussian && a->intercept == b->intercept;
}

/* Ten rows per free parameter: with the default offset the first steps average over about
   warm^0.6 rows, and at twice the free parameters (85 rows at d = 10, K = 2) an expert's
   least squares saw fewer rows than its 11 coefficients: single-row streams collapsed an
   expert's variance on some streams of setting 6.2 (on 1 of 50 with six per parameter). */
static size_t automatic_warm_start(const moe_model_t *model)
{
    size_t free_parameters = moe_model_n_free_params(model);
    size_t rows = 10 * free_parameters;
    return rows > 85 ? rows : 85;
}

static moe_status allocate(ismm_state *state, const ismm_shape *shape, size_t warm_rows,
                           size_t batch_size)
{
    state->shape = *shape;
    state->warm_rows = warm_rows;
    state->capacity = warm_rows > batch_size ? warm_rows : batch_size;
    if (state->capacity == 0)
        state->capacity = 1;
    size_t d = shape->d > 0 ? shape->d : 1;
    state->statistics = calloc(ismm_statistics_size(shape), sizeof(double));
    state->parameters = calloc(ismm_parameters_size(shape), sizeof(double));
    state->average = calloc(ismm_parameters_size(shape), sizeof(double));
    state->waiting_X = calloc(state->capacity * d, sizeof(double));
    state->waiting_y = calloc(state->capacity, sizeof(double));
    state->waiting_w = calloc(state->capacity, sizeof(double));
    if (state->statistics == NULL || state->parameters == NULL || state->average == NULL ||
        state->waiting_X == NULL || state->waiting_y == NULL || state->waiting_w == NULL)
        return MOE_ERR_OUT_OF_MEMORY;
    state->ready = 1;
    return MOE_OK;
}

/* ---- Model <-> parameters -------------------------------------------------------------------- */

static moe_status read_model(const ismm_shape *shape, const moe_model_t *model, double *storage)
{
    ismm_parameters theta;
    ismm_parameters_map(shape, storage, &theta);
    moe_status status = moe_model_get_gate(model, theta.gate, shape->K * shape->p);
    if (status == MOE_OK)
        status = moe_model_get_experts(model, theta.experts, shape->K * shape->rows * shape->p);
    if (status == MOE_OK && shape->gaussian)
        status = moe_model_get_variances(model, theta.variances, shape->K);
    return status;
}

static moe_status write_model(const ismm_shape *shape, moe_model_t *model, const double *storage)
{
    ismm_parameters theta;
    ismm_parameters_map(shape, (double *)storage, &theta);
    moe_status status = moe_model_set_gate(model, theta.gate, shape->K * shape->p);
    if (status == MOE_OK)
        status = moe_model_set_experts(model, theta.experts, shape->K * shape->rows * shape->p);
    if (status == MOE_OK && shape->gaussian)
        status = moe_model_set_variances(model, theta.variances, shape->K);
    return status;
}

/* ---- One step -------------------------------------------------------------------------------- */

typedef struct call {
    moe_fit_context *context;
    ismm_state *state;
    double variance_floor_relative;
    double min_weight;
    size_t iteration; /* recorded in this call */
    double loglik;    /* of the call's batches, each before its step */
    double weight;
} call;

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
    moe_status status = ismm_batch_statistics(c->context, shape, &surrogate, &theta, rows,
                                              batch_statistics, batch_weight, batch_loglik);
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
            status = moe_context_fail(c->context, MOE_ERR_NUMERICAL,
                                      "ismm: the M-step found no finite minimiser for this "
                                      "batch; the state is unchanged");
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
    if (record)
        status = moe_context_iteration(c->context, 0, c->iteration++, loglik);
    return status;
}

/* The warm start's gate may separate the rows by at most this many logits (a probability
   of 1 - 5e-5): docs/ARCHITECTURE.md, "The warm start", gives the measurements. */
static const double warm_gate_logits = 10.0;

/* The largest difference of two experts' gate logits over the rows. */
static double largest_logit_gap(const ismm_shape *shape, const double *gate, const moe_rows *rows)
{
    size_t K = shape->K, p = shape->p, d = shape->d, offset = shape->intercept ? 1 : 0;
    double largest = 0.0;
    for (size_t i = 0; i < rows->n; ++i) {
        const double *x = rows->X != NULL ? rows->X + i * rows->ldx : NULL;
        double low = INFINITY, high = -INFINITY;
        for (size_t k = 0; k < K; ++k) {
            double logit = shape->intercept ? gate[k * p] : 0.0;
            for (size_t j = 0; j < d; ++j)
                logit += gate[k * p + offset + j] * x[j];
            low = logit < low ? logit : low;
            high = logit > high ? logit : high;
        }
        largest = high - low > largest ? high - low : largest;
    }
    return largest;
}

/*
 * The start's gate scaled down until it separates no two experts by more than
 * warm_gate_logits on the warm rows, its variances restarted at the rows' spread of y, its
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
    double gap = largest_logit_gap(shape, theta.gate, rows);
    if (gap > warm_gate_logits)
        for (size_t i = 0; i < shape->K * shape->p; ++i)
            theta.gate[i] *= warm_gate_logits / gap;
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

static void append_waiting(ismm_state *state, const moe_rows *rows, size_t first, size_t count)
{
    size_t d = state->shape.d;
    for (size_t i = 0; i < count; ++i) {
        size_t from = first + i, to = state->waiting + i;
        if (d > 0)
            memcpy(state->waiting_X + to * d, rows->X + from * rows->ldx, d * sizeof(double));
        state->waiting_y[to] = rows->y[from];
        state->waiting_w[to] = rows->weights != NULL ? rows->weights[from] : 1.0;
    }
    state->waiting += count;
}

static moe_rows waiting_rows(const ismm_state *state)
{
    moe_rows rows = {state->waiting, state->shape.d > 0 ? state->waiting_X : NULL,
                     state->shape.d, state->waiting_y, state->waiting_w};
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
    if (moe_model_family(model) == MOE_FAMILY_GAUSSIAN &&
        moe_model_link(model) != MOE_LINK_IDENTITY)
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                "ismm's Gaussian M-step is least squares: it fits the identity "
                                "link only");
    return MOE_OK;
}

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
    ismm_shape shape = shape_of(model);
    if (state->ready && !same_shape(&shape, &state->shape))
        return moe_context_fail(context, MOE_ERR_INVALID_ARGUMENT,
                                "ismm: the model's structure differs from the session's "
                                "(moe_fitter_reset starts a new session)");
    if (!state->ready) {
        size_t warm = state->settings.warm_start > 0 ? state->settings.warm_start
                                                     : automatic_warm_start(model);
        if (allocate(state, &shape, warm, (size_t)batch_size) != MOE_OK) {
            release(state);
            return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                    "cannot allocate ismm's state");
        }
    }
    if (state->started && (size_t)batch_size > state->capacity)
        return moe_context_fail(context, MOE_ERR_INVALID_ARGUMENT,
                                "ismm: batch_size cannot grow during a session");
    moe_rows rows;
    status = moe_context_rows(context, &rows);
    size_t used = 0;
    if (status == MOE_OK && !state->started) {
        size_t take = state->warm_rows - state->waiting;
        if (take > rows.n)
            take = rows.n;
        append_waiting(state, &rows, 0, take);
        used = take;
        if (state->waiting == state->warm_rows) {
            moe_rows warm = waiting_rows(state);
            status = warm_start(&c, model, &warm);
            state->waiting = 0;
        }
    }
    if (status == MOE_OK && state->started) {
        if (batch_size == 0) {
            /* The rest of the call is one batch. */
            if (used < rows.n) {
                moe_rows rest = {rows.n - used, rows.X != NULL ? rows.X + used * rows.ldx : NULL,
                                 rows.ldx, rows.y + used,
                                 rows.weights != NULL ? rows.weights + used : NULL};
                status = stochastic_step(&c, &rest, 1);
            }
        } else {
            size_t B = (size_t)batch_size;
            while (status == MOE_OK && used < rows.n) {
                if (state->waiting == 0 && rows.n - used >= B) {
                    moe_rows piece = {B, rows.X != NULL ? rows.X + used * rows.ldx : NULL,
                                      rows.ldx, rows.y + used,
                                      rows.weights != NULL ? rows.weights + used : NULL};
                    status = stochastic_step(&c, &piece, 1);
                    used += B;
                    continue;
                }
                size_t take = B - state->waiting;
                if (take > rows.n - used)
                    take = rows.n - used;
                append_waiting(state, &rows, used, take);
                used += take;
                if (state->waiting == B) {
                    moe_rows piece = waiting_rows(state);
                    status = stochastic_step(&c, &piece, 1);
                    state->waiting = 0;
                }
            }
        }
    }
    if (status == MOE_OK && state->started)
        status = write_model(&state->shape, model, estimate(state));
    /* Rows that only waited leave the model as the caller gave it; the fitter reports its
       log-likelihood. */
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

static moe_status full_loglik(call *c, const moe_rows *rows, double *loglik)
{
    ismm_state *state = c->state;
    const ismm_shape *shape = &state->shape;
    double *scratch = malloc(ismm_statistics_size(shape) * sizeof(double));
    if (scratch == NULL)
        return moe_context_fail(c->context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    ismm_surrogate surrogate = {state->settings.bound, state->settings.eps};
    ismm_parameters theta;
    ismm_parameters_map(shape, (double *)estimate(state), &theta);
    double weight = 0.0;
    moe_status status = ismm_batch_statistics(c->context, shape, &surrogate, &theta, rows,
                                              scratch, &weight, loglik);
    free(scratch);
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
    double tolerance = 0.0;
    moe_status status = check_family(context, model);
    if (status == MOE_OK)
        status = read_common(&c);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_BATCH_SIZE, &batch_size);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_MAX_ITER, &epochs);
    if (status == MOE_OK)
        status = moe_context_get_int(context, MOE_OPT_SEED, &seed);
    if (status == MOE_OK)
        status = moe_context_get_double(context, MOE_OPT_TOLERANCE, &tolerance);
    if (status != MOE_OK)
        return status;
    release(state);
    moe_rows all;
    status = moe_context_rows(context, &all);
    if (status != MOE_OK)
        return status;
    size_t n = all.n, d = moe_model_n_features(model);
    ismm_shape shape = shape_of(model);
    size_t warm = state->settings.warm_start > 0 ? state->settings.warm_start
                                                 : automatic_warm_start(model);
    if (warm > n)
        warm = n;
    size_t B = batch_size > 0 ? (size_t)batch_size : 0;
    if (B > n)
        B = n;
    if (allocate(state, &shape, warm, B) != MOE_OK) {
        release(state);
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate ismm's state");
    }
    size_t *order = malloc(n * sizeof(size_t));
    if (order == NULL)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    moe_rng rng;
    moe_rng_seed(&rng, (uint64_t)seed, 0);
    /* Fisher-Yates from the seed: the warm start and every epoch's order. */
    for (size_t i = n; i > 1; --i) {
        size_t j = moe_rng_below(&rng, i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    gather(&all, order, 0, warm, d, state->waiting_X, state->waiting_y, state->waiting_w);
    state->waiting = warm;
    moe_rows warm_rows = waiting_rows(state);
    status = warm_start(&c, model, &warm_rows);
    state->waiting = 0;
    double previous = 0.0;
    int converged = 0;
    size_t iterations = 0;
    double total = 0.0;
    if (status == MOE_OK)
        status = moe_context_total_weight(context, NULL, &total);
    if (B == 0) {
        /* Batch MM: gamma = 1 on all the rows; the E-step's log-likelihood is theta_e's. */
        for (size_t epoch = 0; status == MOE_OK; ++epoch) {
            double loglik = 0.0, weight = 0.0;
            double *before = malloc(ismm_parameters_size(&shape) * sizeof(double));
            if (before == NULL) {
                status = moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            memcpy(before, state->parameters, ismm_parameters_size(&shape) * sizeof(double));
            status = epoch < (size_t)epochs ? update(&c, &all, 1.0, &loglik, &weight)
                                            : full_loglik(&c, &all, &loglik);
            if (status == MOE_OK)
                status = moe_context_iteration(context, 0, epoch, loglik);
            if (status == MOE_OK && epoch > 0) {
                double scale = total + fabs(loglik);
                if (loglik < previous - 1e-10 * scale)
                    moe_context_note_decrease(context, (previous - loglik) / scale);
                if (fabs(loglik - previous) <= tolerance * scale) {
                    /* theta_e met the tolerance: it is the result, not the step after it. */
                    memcpy(state->parameters, before,
                           ismm_parameters_size(&shape) * sizeof(double));
                    converged = 1;
                }
            }
            free(before);
            previous = loglik;
            iterations = epoch;
            if (converged || epoch >= (size_t)epochs)
                break;
            state->steps += 1;
        }
    } else {
        double *X = malloc(B * (d > 0 ? d : 1) * sizeof(double)), *y = malloc(B * sizeof(double));
        double *w = malloc(B * sizeof(double));
        if (status == MOE_OK && (X == NULL || y == NULL || w == NULL))
            status = moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
        double loglik = 0.0;
        if (status == MOE_OK)
            status = full_loglik(&c, &all, &loglik);
        if (status == MOE_OK)
            status = moe_context_iteration(context, 0, 0, loglik);
        previous = loglik;
        for (size_t epoch = 1; status == MOE_OK && epoch <= (size_t)epochs; ++epoch) {
            c.loglik = 0.0;
            c.weight = 0.0;
            for (size_t first = 0; status == MOE_OK && first < n; first += B) {
                size_t count = n - first < B ? n - first : B;
                gather(&all, order, first, count, d, X, y, w);
                moe_rows piece = {count, d > 0 ? X : NULL, d, y, w};
                status = stochastic_step(&c, &piece, 0);
            }
            /* The epoch's running log-likelihood: each batch scored before its step. */
            if (status == MOE_OK)
                status = moe_context_iteration(context, 0, epoch, c.loglik);
            iterations = epoch;
            if (status == MOE_OK && fabs(c.loglik - previous) <= tolerance * (total + fabs(c.loglik))) {
                converged = 1;
                break;
            }
            previous = c.loglik;
            /* The next epoch visits the rows in a new order. */
            for (size_t i = n; i > 1; --i) {
                size_t j = moe_rng_below(&rng, i), t = order[i - 1];
                order[i - 1] = order[j];
                order[j] = t;
            }
        }
        /* The last entry is the exact log-likelihood of the model returned. */
        if (status == MOE_OK)
            status = full_loglik(&c, &all, &loglik);
        if (status == MOE_OK)
            status = moe_context_iteration(context, 0, iterations + 1, loglik);
        free(X);
        free(y);
        free(w);
    }
    free(order);
    if (status == MOE_OK)
        status = write_model(&state->shape, model, estimate(state));
    if (status == MOE_OK)
        status = moe_context_set_result(context, 0, converged);
    /* A fit leaves no session behind. */
    release(state);
    return status;
}

/* ---- Saved state ------------------------------------------------------------------------------ */

/* Little-endian, fixed width: the state reads back on any platform. */
static void put_u64(unsigned char **at, uint64_t value)
{
    for (int i = 0; i < 8; ++i)
        (*at)[i] = (unsigned char)(value >> (8 * i));
    *at += 8;
}

static uint64_t get_u64(const unsigned char **at)
{
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i)
        value |= (uint64_t)(*at)[i] << (8 * i);
    *at += 8;
    return value;
}

static void put_double(unsigned char **at, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    put_u64(at, bits);
}

static double get_double(const unsigned char **at)
{
    uint64_t bits = get_u64(at);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

#define ISMM_STATE_MAGIC 0x314d4d5349ULL /* "ISMM1" */
enum { ISMM_HEADER_WORDS = 22 };

static size_t arrays_length(const ismm_state *state)
{
    size_t d = state->shape.d;
    return ismm_statistics_size(&state->shape) + 2 * ismm_parameters_size(&state->shape) +
           state->waiting * (d + 2);
}

static moe_status ismm_save_state(const void *opaque, void *buffer, size_t capacity,
                                  size_t *written)
{
    const ismm_state *state = opaque;
    size_t words = ISMM_HEADER_WORDS + (state->ready ? arrays_length(state) : 0);
    *written = words * 8;
    if (buffer == NULL && capacity == 0)
        return MOE_OK;
    if (capacity < words * 8)
        return MOE_ERR_BUFFER_TOO_SMALL;
    unsigned char *at = buffer;
    const ismm_settings *s = &state->settings;
    put_u64(&at, ISMM_STATE_MAGIC);
    put_double(&at, s->step_scale);
    put_double(&at, s->step_offset);
    put_double(&at, s->step_decay);
    put_u64(&at, s->warm_start);
    put_u64(&at, (uint64_t)s->bound);
    put_u64(&at, (uint64_t)s->gate_solve);
    put_double(&at, s->eps);
    put_u64(&at, s->polyak);
    put_u64(&at, (uint64_t)state->ready);
    put_u64(&at, (uint64_t)state->started);
    put_u64(&at, state->shape.K);
    put_u64(&at, state->shape.d);
    put_u64(&at, state->shape.rows);
    put_u64(&at, (uint64_t)state->shape.gaussian);
    put_u64(&at, (uint64_t)state->shape.intercept);
    put_u64(&at, state->steps);
    put_u64(&at, state->averaged);
    put_double(&at, state->variance_floor);
    put_u64(&at, state->warm_rows);
    put_u64(&at, state->capacity);
    put_u64(&at, state->waiting);
    if (!state->ready)
        return MOE_OK;
    size_t statistics = ismm_statistics_size(&state->shape);
    size_t parameters = ismm_parameters_size(&state->shape), d = state->shape.d;
    for (size_t i = 0; i < statistics; ++i)
        put_double(&at, state->statistics[i]);
    for (size_t i = 0; i < parameters; ++i)
        put_double(&at, state->parameters[i]);
    for (size_t i = 0; i < parameters; ++i)
        put_double(&at, state->average[i]);
    for (size_t i = 0; i < state->waiting; ++i) {
        for (size_t j = 0; j < d; ++j)
            put_double(&at, state->waiting_X[i * d + j]);
        put_double(&at, state->waiting_y[i]);
        put_double(&at, state->waiting_w[i]);
    }
    return MOE_OK;
}

static moe_status ismm_load_state(void *opaque, const void *buffer, size_t size)
{
    ismm_state *state = opaque;
    if (size < ISMM_HEADER_WORDS * 8 || size % 8 != 0)
        return MOE_ERR_FORMAT;
    const unsigned char *at = buffer;
    if (get_u64(&at) != ISMM_STATE_MAGIC)
        return MOE_ERR_FORMAT;
    ismm_settings s;
    s.step_scale = get_double(&at);
    s.step_offset = get_double(&at);
    s.step_decay = get_double(&at);
    s.warm_start = (size_t)get_u64(&at);
    uint64_t bound = get_u64(&at), gate_solve = get_u64(&at);
    s.eps = get_double(&at);
    s.polyak = (size_t)get_u64(&at);
    uint64_t ready = get_u64(&at), started = get_u64(&at);
    ismm_shape shape;
    shape.K = (size_t)get_u64(&at);
    shape.d = (size_t)get_u64(&at);
    shape.rows = (size_t)get_u64(&at);
    uint64_t gaussian = get_u64(&at), intercept = get_u64(&at);
    uint64_t steps = get_u64(&at), averaged = get_u64(&at);
    double floor = get_double(&at);
    uint64_t warm_rows = get_u64(&at), capacity = get_u64(&at), waiting = get_u64(&at);
    if (bound > 1 || gate_solve > 1 || ready > 1 || started > ready || gaussian > 1 ||
        intercept > 1 || !(s.step_scale > 0.0 && s.step_scale <= 1.0) ||
        !(s.step_decay > 0.5 && s.step_decay <= 1.0) || !(s.eps > 0.0 && s.eps <= 1.0) ||
        !(s.step_offset >= 0.0 || s.step_offset == -1.0) || !isfinite(s.step_offset))
        return MOE_ERR_FORMAT;
    s.bound = (ismm_bound)bound;
    s.gate_solve = (ismm_gate_solve)gate_solve;
    ismm_state loaded;
    memset(&loaded, 0, sizeof loaded);
    loaded.settings = s;
    if (ready) {
        /* Sizes bounded before any arithmetic on them. */
        if (shape.K < 1 || shape.K > 4096 || shape.d > 1000000 || shape.rows < 1 ||
            shape.rows > 65536 || capacity < 1 || capacity > 100000000 || waiting > capacity ||
            warm_rows > capacity || (started && waiting >= capacity) ||
            !(floor > 0.0) || !isfinite(floor))
            return MOE_ERR_FORMAT;
        shape.gaussian = (int)gaussian;
        shape.intercept = (int)intercept;
        shape.p = shape.d + (size_t)intercept;
        if (shape.p == 0 || (shape.gaussian && shape.rows != 1))
            return MOE_ERR_FORMAT;
        loaded.shape = shape;
        loaded.waiting = (size_t)waiting;
        size_t expected = ISMM_HEADER_WORDS + arrays_length(&loaded);
        if (size != expected * 8)
            return MOE_ERR_FORMAT;
        if (allocate(&loaded, &shape, (size_t)warm_rows, (size_t)capacity) != MOE_OK) {
            release(&loaded);
            return MOE_ERR_OUT_OF_MEMORY;
        }
        loaded.capacity = (size_t)capacity;
        loaded.started = (int)started;
        loaded.steps = steps;
        loaded.averaged = averaged;
        loaded.variance_floor = floor;
        loaded.waiting = (size_t)waiting;
        size_t statistics = ismm_statistics_size(&shape), parameters = ismm_parameters_size(&shape);
        int bad = 0;
        for (size_t i = 0; i < statistics; ++i)
            bad |= !isfinite(loaded.statistics[i] = get_double(&at));
        for (size_t i = 0; i < parameters; ++i)
            bad |= !isfinite(loaded.parameters[i] = get_double(&at));
        for (size_t i = 0; i < parameters; ++i)
            bad |= !isfinite(loaded.average[i] = get_double(&at));
        for (size_t i = 0; i < loaded.waiting; ++i) {
            for (size_t j = 0; j < shape.d; ++j)
                bad |= !isfinite(loaded.waiting_X[i * shape.d + j] = get_double(&at));
            bad |= !isfinite(loaded.waiting_y[i] = get_double(&at));
            double weight = loaded.waiting_w[i] = get_double(&at);
            bad |= !(weight >= 0.0) || !isfinite(weight);
        }
        if (bad) {
            release(&loaded);
            return MOE_ERR_FORMAT;
        }
    } else if (size != ISMM_HEADER_WORDS * 8 || started || waiting != 0) {
        return MOE_ERR_FORMAT;
    }
    release(state);
    *state = loaded;
    return MOE_OK;
}

const moe_estimator_ops moe_estimator_ismm = {
    .abi_version = MOE_ESTIMATOR_ABI_VERSION,
    .name = "ismm",
    .create = ismm_create,
    .destroy = ismm_destroy,
    .set_option = ismm_set_option,
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
};
