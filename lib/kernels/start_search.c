/*
 * The default starting points (init = mixed): a search over many short EM runs.
 *
 * No single family of starts finds the best optimum of a mixture of experts everywhere.
 * k-means++ on [x, y] groups rows by where they lie, so regimes whose regression lines
 * cross are cut across and no number of its restarts escapes; random hard labels start
 * every expert near the pooled fit and find crossing lines, but split well separated
 * clusters in x poorly; random regression lines through a few rows find lines, not places;
 * the cells of random k-means++ seeds in x are shaped like a softmax gate's regions.
 * So the search draws starts from all of them in turn and lets EM judge: every start runs
 * a few EM iterations (the "small EM" of Biernacki, Celeux and Govaert 2003), the best
 * ones run on to convergence, and the best distinct end points become the fit's restarts.
 * A gate that switches hard between experts (change points) has optima in every gap between
 * rows, narrow basins that few starts of any family reach; so the best end point is then
 * improved by a local search over its gate (gate_search: the gate sharpened, one region's
 * border moved by a ladder of rows, EM to convergence from each, the better optimum kept)
 * when the search sees all of the fit's rows.
 * It all runs on a uniform sample of SEARCH_ROWS rows (more for models of many parameters),
 * so its cost does not grow with n; on larger data the restarts then converge on all rows
 * from the sample's optima.
 * docs/ARCHITECTURE.md ("Default starts") has the measurements behind the numbers below.
 */
#include "kernels/start_search.h"
#include "kernels/kernels.h"
#include "common/alloc.h"
#include "common/rng.h"
#include "pass/gate.h"
#include "pass/posterior.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows the search sees: at least SEARCH_ROWS, and SEARCH_ROWS_PER_PARAMETER per free
   parameter, so that the sample ranks optima as all rows would (on 2000 rows a model of 173
   parameters ranked a worse optimum first). */
#define SEARCH_ROWS 2000
#define SEARCH_ROWS_PER_PARAMETER 25
/* The search's budget, in rows times EM iterations, for its short runs and for continuing
   the best of them: small data get many starts (optima of hard gate switches between few
   rows are many and narrow), large data a fixed cost. */
#define SHORT_BUDGET 6e5
#define SURVIVOR_BUDGET 5e5
/* Starts drawn: the budget's, but at least SEARCH_STARTS_PER_EXPERT per expert and
   SEARCH_STARTS, at most SEARCH_STARTS_MAX. */
#define SEARCH_STARTS 24
#define SEARCH_STARTS_PER_EXPERT 6
#define SEARCH_STARTS_MAX 400
/* EM iterations of every start before the first selection. */
#define SHORT_ITERATIONS 10
/* A share's search (ot's local fits): LOCAL_STARTS_PER_EXPERT starts per expert at least,
   of LOCAL_SHORT_ITERATIONS each. Half the starts and half their iterations of the full
   search's floor: a local fit that ends in a poorer optimum is left out of ot's reduction
   by its screen, so a shard's search need not be as sure as a global fit's; at six starts
   of ten iterations every shard's search cost about what the global fit's did and sharding
   could not pay (bench/RESULTS.md). */
#define LOCAL_STARTS_PER_EXPERT 3
#define LOCAL_SHORT_ITERATIONS 5
/* Starts continued to convergence on the sample: the budget's at SURVIVOR_ITERATIONS each,
   but at least SURVIVORS_PER_RESTART per restart of the fit. */
#define SURVIVORS_PER_RESTART 1
#define SURVIVOR_ITERATIONS 100
/* The gate's (and classification experts') Newton steps per iteration in the search: a
   generalised EM with the fixed points of EM, at a fraction of the cost. */
#define SEARCH_GATE_NEWTON 1
/* The gate search from the best end point (gate_search): its budget in rows times EM
   iterations, the factors that sharpen the whole gate, and the first of the doubling ladder
   of rows that a move of one region's border takes across it. */
#define GATE_SEARCH_BUDGET 2e5
#define GATE_SCALES {2.0, 4.0, 16.0}
#define SHIFT_ROWS_FIRST 2
/* The start variants' budget (start_variants.c), in rows times EM iterations: a variant's
   run to convergence for each expert and one more, on the sample, for K up to about 10. */
#define VARIANT_BUDGET 2e6
/* End points whose objectives differ by less than this per unit weight are one optimum. */
#define DISTINCT_OBJECTIVE 1e-7
/* PRNG streams of the search, apart from the restarts' streams 0, 1, ... */
#define SAMPLE_STREAM (UINT64_C(1) << 40)
#define START_STREAM (UINT64_C(1) << 41)

typedef enum start_family {
    START_LINES,
    START_RANDOM,
    START_KMEANS_XY,
    START_KMEANS_X,
    START_SEEDS_X
} start_family;

typedef struct candidate {
    struct moe_model *model;
    double objective; /* -INFINITY: the run failed */
    int spurious;     /* an expert collapsed onto a few rows (moe_search_collapsed) */
} candidate;

typedef struct search_rows {
    moe_data data;
    double *X, *y, *weights; /* the sample's own copies; NULL when data are the call's rows */
} search_rows;

static int rows_equal(const moe_data *a, const moe_data *b)
{
    return a->n == b->n && a->X == b->X && a->ldx == b->ldx && a->y == b->y &&
           a->weights == b->weights;
}

void moe_start_search_release(moe_fit_context *context)
{
    for (size_t c = 0; c < context->n_start_candidates; ++c)
        moe_model_free(context->start_candidates[c]);
    free(context->start_candidates);
    context->start_candidates = NULL;
    context->n_start_candidates = 0;
    context->start_searched = 0;
}

/* A local fit's search may cost about as much as LOCAL_SEARCH_ITERATIONS EM iterations on
   its rows: with fewer, a large shard started from poorer end points and its EM on all its
   rows took ten times longer than the search saved (bench/RESULTS.md); with more, a small
   shard's fit was mostly its search. */
#define LOCAL_SEARCH_ITERATIONS 10
/* ... but at most half of a full search, so that a large shard's fit is still a local one
   (one restart, LOCAL_STARTS_PER_EXPERT starts of LOCAL_SHORT_ITERATIONS): with the full
   search and its five restarts, a shard of 125,000 rows of 1e6 took 0.9 s against 1.3 s
   for the global fit (bench/RESULTS.md). */
#define LOCAL_SHARE_MOST 0.5

double moe_search_share_for_rows(size_t rows)
{
    double share = LOCAL_SEARCH_ITERATIONS * (double)rows / (SHORT_BUDGET + SURVIVOR_BUDGET);
    return share < LOCAL_SHARE_MOST ? share : LOCAL_SHARE_MOST;
}

/* The budget's share: 1 but for a fit of a shard of the rows (the search_shards option:
   1 / its count, or with -1 a share by the fit's rows, as ot's local fits take). */
static double search_share(const moe_fit_context *context)
{
    long long shards = (context->option_mask & MOE_OPTION_BIT(MOE_OPT_SEARCH_SHARDS))
                           ? context->options.integer[MOE_OPT_SEARCH_SHARDS]
                           : 0;
    if (shards > 1)
        return 1.0 / (double)shards;
    double share = shards == -1 ? moe_search_share_for_rows(context->data.n) : 0.0;
    return share > 0.0 && share < 1.0 ? share : 1.0;
}

size_t moe_start_search_count(const moe_fit_context *context)
{
    return context->n_start_candidates;
}

/* A uniform sample without replacement of the rows of positive weight (selection
   sampling: one pass, no index over all rows), or the rows themselves when few. */
static moe_status sample_rows(const moe_data *data, size_t parameters, uint64_t seed,
                              search_rows *sample, char *message)
{
    memset(sample, 0, sizeof *sample);
    size_t positive = 0;
    for (size_t i = 0; i < data->n; ++i)
        positive += moe_data_weight(data, i) > 0.0;
    size_t m = SEARCH_ROWS;
    if (parameters > m / SEARCH_ROWS_PER_PARAMETER)
        m = parameters * SEARCH_ROWS_PER_PARAMETER;
    if (positive <= m) {
        sample->data = *data;
        return MOE_OK;
    }
    size_t d = data->n_features;
    sample->X = d > 0 ? moe_alloc_array(m, d, sizeof(double)) : NULL;
    sample->y = moe_alloc_array(m, 1, sizeof(double));
    sample->weights = data->weights != NULL ? moe_alloc_array(m, 1, sizeof(double)) : NULL;
    if ((d > 0 && sample->X == NULL) || sample->y == NULL ||
        (data->weights != NULL && sample->weights == NULL))
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the search's sample");
    moe_rng rng;
    moe_rng_seed(&rng, seed, SAMPLE_STREAM);
    size_t taken = 0, remaining = positive;
    for (size_t i = 0; i < data->n && taken < m; ++i) {
        if (!(moe_data_weight(data, i) > 0.0))
            continue;
        if (moe_rng_below(&rng, remaining) < m - taken) {
            if (d > 0)
                memcpy(sample->X + taken * d, data->X + i * data->ldx, d * sizeof(double));
            sample->y[taken] = data->y[i];
            if (sample->weights != NULL)
                sample->weights[taken] = data->weights[i];
            taken++;
        }
        remaining--;
    }
    sample->data = *data;
    sample->data.n = m;
    sample->data.ldx = d;
    sample->data.X = sample->X;
    sample->data.y = sample->y;
    sample->data.weights = sample->weights;
    return MOE_OK;
}

/*
 * EM from the model's parameters on `data`: at most `iterations` iterations, stopping when
 * the objective changes by at most tolerance * (N + |objective|), as the fit's loop does.
 * The objective reached (penalised log-likelihood) goes to *objective, the iterations run to
 * *used (when not NULL).
 */
moe_status moe_search_em(moe_fit_context *context, const moe_fit_settings *settings,
                         struct moe_model *model, const moe_data *data, double *resp,
                         size_t iterations, double tolerance, double *objective, size_t *used)
{
    char *message = context->message;
    double total = moe_data_total_weight(data);
    moe_expert_mstep_options experts = moe_start_expert_options(settings, data);
    experts.inner_steps = 0;
    if (experts.max_newton > SEARCH_GATE_NEWTON)
        experts.max_newton = SEARCH_GATE_NEWTON; /* classification experts: as the gate */
    moe_gate_options gate = settings->gate;
    if (gate.max_newton > SEARCH_GATE_NEWTON)
        gate.max_newton = SEARCH_GATE_NEWTON;
    moe_status status = MOE_OK;
    /* The fit's curvature bound preconditions the sample's steps as well as any. */
    if (settings->gate_hessian_free &&
        (status = moe_context_gate_curvature(context, settings, &gate.curvature)) != MOE_OK)
        return status;
    moe_posterior_result posterior;
    status = moe_posterior_pass(model, data, resp, settings->threads, &posterior,
                                           message);
    if (status != MOE_OK)
        return status;
    double previous = posterior.loglik - total * moe_fit_penalty(model, settings);
    size_t t = 0;
    /* The report counts the search's work (a failed run's too). */
    moe_fit_report *report = context->report;
    report->search_runs += 1;
    while (t < iterations) {
        report->search_iterations += 1;
        moe_expert_mstep_report expert_report = MOE_EXPERT_MSTEP_REPORT_INIT;
        if (settings->update_experts)
            status = model->family_ops->m_step(model, data, resp, &experts, &expert_report,
                                               message);
        moe_gate_report gate_report = MOE_GATE_REPORT_INIT;
        if (status == MOE_OK && model->n_experts > 1)
            status = moe_gate_newton(model, data, resp, &gate, &gate_report, message);
        if (status == MOE_OK)
            status = moe_posterior_pass(model, data, resp, settings->threads, &posterior,
                                        message);
        if (status != MOE_OK)
            return status;
        double current = posterior.loglik - total * moe_fit_penalty(model, settings);
        if (!isfinite(current))
            return moe_fail(message, MOE_ERR_NUMERICAL, "a search run diverged");
        int settled = fabs(current - previous) <= tolerance * (total + fabs(current));
        previous = current;
        t++;
        if (settled)
            break;
    }
    *objective = previous;
    if (used != NULL)
        *used = t;
    context->search_cost += (double)data->n * (double)(t > 0 ? t : 1);
    return MOE_OK;
}

static moe_status draw_partition(start_family family, const moe_data *data, size_t K,
                                 moe_rng *rng, moe_label *labels, char *message)
{
    switch (family) {
    case START_LINES:
        return moe_init_lines_partition(data, K, rng, labels, message);
    case START_RANDOM:
        return moe_init_partition(MOE_INIT_RANDOM, data, K, 0, rng, labels, message);
    case START_KMEANS_XY:
        return moe_init_partition(MOE_INIT_KMEANS, data, K, 1, rng, labels, message);
    case START_SEEDS_X:
        return moe_init_seeds_partition(data, K, 0, rng, labels, message);
    case START_KMEANS_X:
        break;
    }
    return moe_init_partition(MOE_INIT_KMEANS, data, K, 0, rng, labels, message);
}

/* The count a budget affords, at least `least`, at most `most` (most wins). */
static size_t budget_count(double affordable, size_t least, size_t most)
{
    size_t count = affordable >= (double)most ? most : (size_t)affordable;
    if (count < least)
        count = least;
    return count < most ? count : most;
}

/* Ranking: end points without a collapsed expert first, then by objective, descending
   (failed runs, at -INFINITY, last). */
static int by_objective(const void *a, const void *b)
{
    const candidate *first = a, *second = b;
    if (first->spurious != second->spurious)
        return first->spurious - second->spurious;
    double x = first->objective, y = second->objective;
    return (x < y) - (x > y);
}

/*
 * An expert that holds fewer rows than it has parameters, or (Gaussian) whose variance sits
 * at the floor, fits its rows exactly: the likelihood grows without bound there (a line
 * through two points, a spike on tied responses), and such a spurious maximiser beats every
 * sensible fit. Many starts find them on small data, so the search ranks them last.
 */
int moe_search_collapsed(const struct moe_model *model, const moe_fit_settings *settings,
                         const moe_data *data, const double *resp)
{
    size_t K = model->n_experts, p = moe_data_inputs(data);
    size_t parameters = p * (model->family_ops->uses_classes ? model->n_classes - 1 : 1) +
                        (model->family_ops->has_variance ? 1 : 0);
    double total = moe_data_total_weight(data);
    for (size_t k = 0; k < K; ++k) {
        if (model->family_ops->has_variance &&
            model->variances[k] <= settings->experts.variance_floor * (1.0 + 1e-9))
            return 1;
        double share = 0.0;
        for (size_t i = 0; i < data->n; ++i)
            share += moe_data_weight(data, i) * resp[i * K + k];
        /* In rows: the expert's share of the weight times the rows. */
        if (share / total * (double)data->n < (double)parameters)
            return 1;
    }
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The gate's linear predictors of every row (n x K) at the model's gate. */
static void gate_predictors(const struct moe_model *model, const moe_data *data, double *block,
                            double *eta)
{
    for (size_t start = 0; start < data->n; start += MOE_BLOCK_ROWS) {
        size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(data, start, rows, block);
        moe_gate_logits(model, rows, block, eta + start * model->n_experts);
    }
}

/*
 * The offset of expert k's gate intercept that moves `rows` rows of positive weight across
 * its region's border: out of the region (grow = 0) or into it (grow = 1), the rows nearest
 * the border first (the region of a row is its largest gate predictor). 0 when the region
 * (shrinking) or the rest (growing) has fewer than twice `rows` rows: a move takes at most
 * half of the side that loses rows.
 */
static double shift_offset(const moe_data *data, const double *eta, size_t K, size_t k,
                           int grow, size_t rows, double *margins)
{
    size_t m = 0;
    for (size_t i = 0; i < data->n; ++i) {
        if (!(moe_data_weight(data, i) > 0.0))
            continue;
        const double *row = eta + i * K;
        double other = -INFINITY;
        for (size_t l = 0; l < K; ++l)
            if (l != k && row[l] > other)
                other = row[l];
        /* How far k's predictor is from the border: above it for rows in the region. */
        double above = row[k] - other;
        if (grow ? !(above > 0.0) : above > 0.0)
            margins[m++] = fabs(above);
    }
    if (m < 2 * rows)
        return 0.0;
    qsort(margins, m, sizeof *margins, by_value);
    /* Midway between the last row moved and the first kept. */
    double offset = 0.5 * (margins[rows - 1] + margins[rows]);
    return grow ? offset : -offset;
}

/* The gate search's state: the end point it improves and the trial it moves. */
typedef struct gate_search_state {
    moe_fit_context *context;
    const moe_fit_settings *settings;
    const moe_data *sample;
    double *resp;
    struct moe_model *current, *trial;
    double objective, total;
    double budget; /* EM iterations left */
    double *eta, *block;
} gate_search_state;

/*
 * EM from the trial to convergence; 1 when it ends at a better optimum than the current end
 * point without a collapsed expert, which it then replaces. A failed move is no worse than
 * one that found nothing; only running out of memory stops the search (*status).
 */
static int try_move(gate_search_state *state, moe_status *status)
{
    double reached = -INFINITY;
    size_t used = 0;
    moe_status run = moe_search_em(state->context, state->settings, state->trial, state->sample,
                               state->resp, SURVIVOR_ITERATIONS, state->settings->tolerance,
                               &reached, &used);
    state->budget -= (double)(used > 0 ? used : 1);
    if (run == MOE_ERR_OUT_OF_MEMORY) {
        *status = run;
        return 0;
    }
    if (run != MOE_OK || !isfinite(reached) ||
        !(reached - state->objective >
          DISTINCT_OBJECTIVE * (state->total + fabs(state->objective))) ||
        moe_search_collapsed(state->trial, state->settings, state->sample, state->resp))
        return 0;
    struct moe_model *swap = state->current;
    state->current = state->trial;
    state->trial = swap;
    state->objective = reached;
    gate_predictors(state->current, state->sample, state->block, state->eta);
    return 1;
}

/*
 * The gate search: an iterated local search over the gate, from the best end point of the
 * short runs.
 *
 * Where a gate switches hard between experts along x (a change point, as in the motorcycle
 * data), every gap between neighbouring rows holds an optimum: EM moves a switch by a few
 * rows at most, because the experts follow the rows they are given and the gate follows the
 * experts. Optima several rows apart are then separate basins, and a narrow one is reached by
 * about 1 start in 100 of any family. Likewise a switch that EM left soft (a gradual
 * handover over a dozen rows) may have a better optimum where it is hard, and EM does not
 * cross from one to the other. So, from the best end point, this search moves the gate and
 * runs EM from there to convergence:
 *   - the whole gate sharpened (its coefficients times GATE_SCALES), which keeps every
 *     border where it is and makes the switches harder; a ladder of factors, because the
 *     coefficients of a switch that is already hard are anywhere far out (the likelihood is
 *     flat there), and one factor can leave EM on such a plateau;
 *   - one expert's region border moved by a doubling ladder of rows (SHIFT_ROWS_FIRST, twice
 *     that, ...; out of the region and into it, at most half of the side that loses rows),
 *     by offsetting its gate intercept so that exactly those rows change regions. The
 *     intercept offsets the whole region, so every dimension of x is treated alike; without
 *     an intercept or features the gate has no border to move.
 * A move to a better optimum (without a collapsed expert) replaces the end point, and the
 * moves start again from it. The search stops when no move finds anything better, or at
 * GATE_SEARCH_BUDGET rows times iterations, so small data see every move and data of
 * thousands of rows few (a row there is a small part of the likelihood, and switches move
 * freely).
 */
static moe_status gate_search(moe_fit_context *context, const moe_fit_settings *settings,
                              candidate *best, const moe_data *sample, double *resp)
{
    static const double scales[] = GATE_SCALES;
    char *message = context->message;
    size_t K = best->model->n_experts, n = sample->n, p = best->model->n_inputs;
    if (K < 2 || best->spurious || !isfinite(best->objective))
        return MOE_OK;
    gate_search_state state = {context, settings, sample, resp, best->model, NULL,
                               best->objective, moe_data_total_weight(sample),
                               search_share(context) * GATE_SEARCH_BUDGET / (double)n, NULL,
                               NULL};
    if (state.budget < 1.0)
        return MOE_OK;
    int borders = best->model->intercept && moe_input_free(best->model->gate_inputs, 0) &&
                  sample->n_features > 0;
    /* A failed move leaves its message; the fit's is the one from before. */
    char kept_message[MOE_MESSAGE_SIZE];
    memcpy(kept_message, message, MOE_MESSAGE_SIZE);
    moe_status status = moe_model_clone(&state.trial, state.current);
    if (status != MOE_OK)
        moe_fail_propagate(message, status);
    state.eta = moe_alloc_array(n, K, sizeof(double));
    state.block = moe_alloc_array(MOE_BLOCK_ROWS, p, sizeof(double));
    double *margins = moe_alloc_array(n, 1, sizeof(double));
    if (status == MOE_OK && (state.eta == NULL || state.block == NULL || margins == NULL))
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the gate search");
    if (status == MOE_OK)
        gate_predictors(state.current, sample, state.block, state.eta);
    int improved = 1;
    while (status == MOE_OK && improved && state.budget >= 1.0) {
        improved = 0;
        for (size_t q = 0; q < sizeof scales / sizeof scales[0] && !improved &&
                           status == MOE_OK && state.budget >= 1.0;
             ++q) {
            moe_model_copy_parameters(state.trial, state.current);
            for (size_t j = 0; j < K * p; ++j)
                state.trial->gate[j] *= scales[q];
            improved = try_move(&state, &status);
        }
        for (size_t rows = SHIFT_ROWS_FIRST;
             borders && !improved && status == MOE_OK && state.budget >= 1.0; rows *= 2) {
            int tried = 0;
            for (size_t k = 0; k < K && !improved && status == MOE_OK && state.budget >= 1.0;
                 ++k)
                for (int grow = 0; grow < 2 && !improved && status == MOE_OK &&
                                   state.budget >= 1.0;
                     ++grow) {
                    double offset = shift_offset(sample, state.eta, K, k, grow, rows, margins);
                    if (offset == 0.0)
                        continue;
                    tried = 1;
                    moe_model_copy_parameters(state.trial, state.current);
                    /* The last row of the gate is the reference, fixed at zero: moving its
                       region moves every other region the other way. */
                    if (k + 1 < K)
                        state.trial->gate[k * p] += offset;
                    else
                        for (size_t l = 0; l + 1 < K; ++l)
                            state.trial->gate[l * p] -= offset;
                    improved = try_move(&state, &status);
                }
            if (!tried)
                break; /* no region can lose or gain this many rows: the ladder is done */
        }
    }
    if (status == MOE_OK)
        memcpy(message, kept_message, MOE_MESSAGE_SIZE);
    best->model = state.current;
    best->objective = state.objective;
    moe_model_free(state.trial);
    free(state.eta);
    free(state.block);
    free(margins);
    return status;
}

/* The starts a search draws: its budget's, within the bounds above. */
static size_t start_count(size_t K, double rows, double share)
{
    size_t starts = budget_count(SHORT_BUDGET / (rows * SHORT_ITERATIONS),
                                 SEARCH_STARTS_PER_EXPERT * K, SEARCH_STARTS_MAX);
    if (starts < SEARCH_STARTS)
        starts = SEARCH_STARTS;
    /* A share (ot's local fits) takes that share of the starts, but LOCAL_STARTS_PER_EXPERT
       per expert at least: with one start of each family, local fits of K = 5, d = 20 on
       12,500 rows were poor enough that their reduction ended 0.3 nats per row below the
       global fit (bench/RESULTS.md). */
    if (share < 1.0)
        starts = budget_count(ceil((double)starts * share), LOCAL_STARTS_PER_EXPERT * K, starts);
    if (K == 1)
        starts = 1;
    return starts;
}

/* The last run that failed: the fit's status and message when no start could be run. */
typedef struct search_failure {
    moe_status status;
    char message[MOE_MESSAGE_SIZE];
} search_failure;

/* A run that failed ranks last (the others may not fail). */
static void run_failed(candidate *entry, moe_status run, const char *message,
                       search_failure *failure)
{
    entry->objective = -INFINITY;
    entry->spurious = 1;
    failure->status = run;
    memcpy(failure->message, message, MOE_MESSAGE_SIZE);
}

/* Every start drawn, by the families in turn, each from its own stream, and run for
   `iterations` EM iterations. Only running out of memory stops them. */
static moe_status short_runs(moe_fit_context *context, const moe_fit_settings *settings,
                             const struct moe_model *shape, const moe_data *sample,
                             double *resp, moe_label *labels, candidate *candidates,
                             size_t starts, size_t iterations,
                             const struct moe_model *origin, search_failure *failure)
{
    char *message = context->message;
    size_t K = shape->n_experts;
    /* Classification experts have no line to draw and no response to cluster on. */
    static const start_family gaussian_families[] = {START_LINES, START_RANDOM,
                                                     START_KMEANS_XY, START_SEEDS_X,
                                                     START_KMEANS_X};
    static const start_family class_families[] = {START_RANDOM, START_SEEDS_X,
                                                  START_KMEANS_X};
    /* Counts are clustered on with x, but lines through count data are no start. */
    static const start_family count_families[] = {START_RANDOM, START_KMEANS_XY,
                                                  START_SEEDS_X, START_KMEANS_X};
    int gaussian = shape->family_ops->has_variance;
    int counts = !gaussian && shape->family_ops->numeric_response;
    const start_family *families = gaussian ? gaussian_families
                                   : counts ? count_families
                                            : class_families;
    size_t n_families = gaussian ? 5 : counts ? 4 : 3;
    moe_status status = MOE_OK;
    for (size_t c = 0; c < starts && status == MOE_OK; ++c) {
        candidates[c].objective = -INFINITY;
        if ((status = moe_model_clone(&candidates[c].model, shape)) != MOE_OK) {
            moe_fail_propagate(message, status);
            break;
        }
        moe_model_copy_parameters(candidates[c].model, origin);
        moe_rng rng;
        moe_rng_seed(&rng, settings->seed, START_STREAM + c);
        moe_status run = draw_partition(families[c % n_families], sample, K, &rng, labels,
                                        message);
        if (run == MOE_OK)
            run = moe_start_from_labels(context, candidates[c].model, sample, resp, labels);
        if (run == MOE_OK)
            run = moe_search_em(context, settings, candidates[c].model, sample, resp, iterations,
                            0.0, &candidates[c].objective, NULL);
        if (run == MOE_OK)
            candidates[c].spurious = moe_search_collapsed(candidates[c].model, settings, sample,
                                                      resp);
        if (run == MOE_ERR_OUT_OF_MEMORY)
            status = run;
        else if (run != MOE_OK)
            run_failed(&candidates[c], run, message, failure);
    }
    return status;
}

/* The best `survivors` end points, ranked, continued to convergence on the sample. */
static moe_status survivor_runs(moe_fit_context *context, const moe_fit_settings *settings,
                                const moe_data *sample, double *resp, candidate *candidates,
                                size_t survivors, search_failure *failure)
{
    char *message = context->message;
    for (size_t c = 0; c < survivors && isfinite(candidates[c].objective); ++c) {
        moe_status run = moe_search_em(context, settings, candidates[c].model, sample, resp,
                                   SURVIVOR_ITERATIONS, settings->tolerance,
                                   &candidates[c].objective, NULL);
        if (run == MOE_OK)
            candidates[c].spurious = moe_search_collapsed(candidates[c].model, settings, sample,
                                                      resp);
        if (run == MOE_ERR_OUT_OF_MEMORY)
            return run;
        if (run != MOE_OK)
            run_failed(&candidates[c], run, message, failure);
    }
    return MOE_OK;
}

/* The best distinct end points of the ranked survivors become the fit's restarts (at most
   n_init of them), taken out of the candidates. */
static moe_status keep_end_points(moe_fit_context *context, const moe_fit_settings *settings,
                                  const moe_data *sample, candidate *candidates,
                                  size_t survivors)
{
    double total = moe_data_total_weight(sample);
    context->start_candidates = moe_calloc_array(settings->n_init, 1,
                                                 sizeof(struct moe_model *));
    if (context->start_candidates == NULL)
        return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot keep the search's end points");
    for (size_t c = 0; c < survivors && context->n_start_candidates < settings->n_init; ++c) {
        double objective = candidates[c].objective;
        /* Collapsed end points only when the search found nothing else. */
        if (!isfinite(objective) || (candidates[c].spurious && c > 0 && !candidates[0].spurious))
            break;
        int distinct = 1;
        for (size_t kept = 0; kept < c && distinct; ++kept)
            distinct = fabs(candidates[kept].objective - objective) >
                       DISTINCT_OBJECTIVE * (total + fabs(objective));
        if (!distinct)
            continue;
        context->start_candidates[context->n_start_candidates++] = candidates[c].model;
        candidates[c].model = NULL;
    }
    return MOE_OK;
}

/*
 * One pass of the search for models like `shape`, starting from origin's parameters:
 * `starts` starts drawn and run short, the best `survivors` run on to convergence and
 * ranked, the best one improved by the gate search.
 */
static moe_status search_pass(moe_fit_context *context, const moe_fit_settings *settings,
                              const struct moe_model *shape, const struct moe_model *origin,
                              const moe_data *sample, double *resp, moe_label *labels,
                              int fit_rows, candidate *candidates, size_t starts,
                              size_t survivors, search_failure *failure)
{
    double share = search_share(context);
    size_t short_iterations = share < 1.0 ? LOCAL_SHORT_ITERATIONS : SHORT_ITERATIONS;
    moe_status status = short_runs(context, settings, shape, sample, resp, labels, candidates,
                                   starts, short_iterations, origin, failure);
    if (status != MOE_OK)
        return status;
    qsort(candidates, starts, sizeof(candidate), by_objective);
    status = survivor_runs(context, settings, sample, resp, candidates, survivors, failure);
    qsort(candidates, survivors, sizeof(candidate), by_objective);
    /* candidates[0] may get a better model; the ranking stays, since it was first. Only
       when the rows are all of the fit's own: an optimum a few rows wide on a sample of
       larger data is the sample's (the restarts converge on all rows from its end points
       anyway), and a streaming estimator's first rows (moe_context_start_rows) just start a
       fit of many more, where a switch optimum of a few of them is one the stream must
       unlearn with a gate too hard to move (docs/ARCHITECTURE.md, "The gate search"). */
    if (status == MOE_OK && fit_rows)
        status = gate_search(context, settings, &candidates[0], sample, resp);
    return status;
}

/*
 * The nested family's search (family op nested_family): the same pass on a model of that
 * family, its survivors then turned into models like `shape` with the second parameters at
 * the nested limit (their objectives are the nested model's, which the limit equals). The
 * best of them runs on with its second parameters free.
 */
static moe_status nested_pass(moe_fit_context *context, const moe_fit_settings *settings,
                              const struct moe_model *shape, const moe_data *sample,
                              double *resp, moe_label *labels, int fit_rows,
                              candidate *candidates, size_t starts, size_t survivors,
                              search_failure *failure)
{
    struct moe_model *origin = NULL;
    moe_status status = moe_model_nested(&origin, context->start);
    if (status != MOE_OK)
        return moe_fail_propagate(context->message, status);
    status = search_pass(context, settings, origin, origin, sample, resp, labels, fit_rows,
                         candidates, starts, survivors, failure);
    moe_model_free(origin);
    for (size_t c = 0; c < survivors && status == MOE_OK; ++c) {
        struct moe_model *nesting = NULL;
        if ((status = moe_model_clone(&nesting, shape)) != MOE_OK) {
            moe_fail_propagate(context->message, status);
            break;
        }
        moe_model_from_nested(nesting, candidates[c].model);
        moe_model_free(candidates[c].model);
        candidates[c].model = nesting;
    }
    candidate *best = &candidates[0];
    if (status != MOE_OK || best->spurious || !isfinite(best->objective))
        return status;
    moe_status run = moe_search_em(context, settings, best->model, sample, resp,
                                   SURVIVOR_ITERATIONS, settings->tolerance, &best->objective,
                                   NULL);
    if (run == MOE_OK)
        best->spurious = moe_search_collapsed(best->model, settings, sample, resp);
    else if (run != MOE_ERR_OUT_OF_MEMORY)
        run_failed(best, run, context->message, failure);
    return run == MOE_ERR_OUT_OF_MEMORY ? run : MOE_OK;
}

/*
 * The search. A family that nests another at fixed second parameters (t experts: the
 * normal as nu grows) gets that family's search as a second pass, so that the fit starts
 * from the nested family's end points too and does not end below that family's fit from
 * the same search; then both passes' best end points try the family's start variants.
 * Both change the second parameters, which needs update_degrees (the caller may have fixed
 * them).
 */
static moe_status search(moe_fit_context *context, const moe_fit_settings *settings,
                         const struct moe_model *shape, const moe_data *sample, double *resp,
                         moe_label *labels, int fit_rows)
{
    char *message = context->message;
    double rows = (double)sample->n, share = search_share(context);
    size_t starts = start_count(shape->n_experts, rows, share);
    int free_parameters = settings->experts.update_degrees;
    size_t passes = free_parameters && shape->family_ops->nested_family != 0 ? 2 : 1;
    candidate *candidates = moe_calloc_array(passes * starts, 1, sizeof(candidate));
    if (candidates == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate %zu starts", starts);
    search_failure failure = {MOE_OK, ""};
    /* A share keeps one restart, the best end point: a local fit's extra restarts from the
       search's lesser end points converged in 4 or 5 iterations when they won and crept for
       100 and more when they lost, most of a shard's time (bench/RESULTS.md); a shard that
       ends in a poorer optimum is left out of ot's reduction by its screen. */
    size_t least_survivors = share < 1.0 ? 1 : SURVIVORS_PER_RESTART * settings->n_init;
    size_t survivors = budget_count(share * SURVIVOR_BUDGET / (rows * SURVIVOR_ITERATIONS),
                                    least_survivors > 0 ? least_survivors : 1, starts);
    moe_status status = MOE_OK;
    for (size_t pass = 0; pass < passes && status == MOE_OK; ++pass) {
        candidate *these = candidates + pass * starts;
        status = pass == 0 ? search_pass(context, settings, shape, context->start, sample,
                                         resp, labels, fit_rows, these, starts, survivors,
                                         &failure)
                           : nested_pass(context, settings, shape, sample, resp, labels,
                                         fit_rows, these, starts, survivors, &failure);
        if (status == MOE_OK && free_parameters && !these[0].spurious)
            status = moe_start_variant_search(context, settings, &these[0].model,
                                              &these[0].objective, sample, resp,
                                              share * VARIANT_BUDGET);
        /* The passes' survivors side by side, to be ranked together. */
        for (size_t c = 0; pass > 0 && c < survivors; ++c) {
            candidate swap = candidates[survivors + c];
            candidates[survivors + c] = these[c];
            these[c] = swap;
        }
    }
    if (status == MOE_OK) {
        /* (One pass's survivors are ranked already; qsort need not keep ties in order.) */
        if (passes > 1)
            qsort(candidates, passes * survivors, sizeof(candidate), by_objective);
        status = keep_end_points(context, settings, sample, candidates, passes * survivors);
    }
    for (size_t c = 0; c < passes * starts; ++c)
        moe_model_free(candidates[c].model);
    free(candidates);
    if (status == MOE_OK && context->n_start_candidates == 0) {
        status = failure.status != MOE_OK ? failure.status : MOE_ERR_NUMERICAL;
        memcpy(message, failure.message, MOE_MESSAGE_SIZE);
        if (message[0] == '\0')
            moe_fail(message, status, "no start of the search could be run");
    }
    return status;
}

moe_status moe_start_search_take(moe_fit_context *context, struct moe_model *model,
                                 size_t restart, const moe_data *data, double *resp,
                                 moe_label *labels)
{
    char *message = context->message;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    if (!context->start_searched || !rows_equal(&context->start_rows, data)) {
        moe_start_search_release(context);
        context->search_cost = 0.0;
        search_rows sample;
        moe_status status = sample_rows(data, moe_model_n_free_params(model), settings->seed,
                                        &sample, message);
        double *sample_resp = resp;
        moe_label *sample_labels = labels;
        if (status == MOE_OK && sample.y != NULL) {
            sample_resp = moe_alloc_array(sample.data.n, model->n_experts, sizeof(double));
            sample_labels = moe_alloc_array(sample.data.n, 1, sizeof(moe_label));
            if (sample_resp == NULL || sample_labels == NULL)
                status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                                  "cannot allocate the search's workspace");
        }
        /* The gate search only when the search sees all of the fit's own rows. */
        int fit_rows = sample.y == NULL && rows_equal(data, &context->data);
        if (status == MOE_OK)
            status = search(context, settings, model, &sample.data, sample_resp,
                            sample_labels, fit_rows);
        if (sample.y != NULL) {
            free(sample_resp);
            free(sample_labels);
        }
        free(sample.X);
        free(sample.y);
        free(sample.weights);
        if (status != MOE_OK) {
            moe_start_search_release(context);
            return status;
        }
        context->start_searched = 1;
        context->start_rows = *data;
    }
    moe_model_copy_parameters(model, context->start_candidates[restart %
                                                               context->n_start_candidates]);
    return MOE_OK;
}
