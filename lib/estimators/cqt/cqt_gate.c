/*
 * Stage 2 of cqt: the gate by EM with the experts held (docs/ARCHITECTURE.md, "The tensor
 * estimator").
 *
 * The E-step is the library's (log space, moe_estep_run); the M-step is the gate's soft-label
 * softmax regression, solved by the library's Newton kernel (em) or one gradient step
 * preconditioned by C^-1 (gradient EM: a plain gradient step in the whitened coordinates,
 * where the step 2 is 1 / L for the curvature bound 1/2 of the softmax). Distances, the
 * domain's radius and the random start are all in the whitened coordinates u = whiten'(x -
 * mean), in which a gate row w acts as (whiten^-1 w)' u: the norm of a row is the standard
 * deviation of its logit, sqrt(w' C w), whatever the units of x.
 *
 * With an estimated noise, the shared variance takes its closed-form update after every gate
 * M-step (an expectation-conditional maximisation: still monotone).
 */
#include "estimators/cqt/cqt.h"

#include "common/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_ROWS = 256 };

/* sqrt(w' C w) */
static double whitened_norm(const cqt_stage1 *stage, const double *w)
{
    size_t d = stage->d;
    double sum = 0.0;
    for (size_t a = 0; a < d; ++a) {
        double row = 0.0;
        for (size_t b = 0; b < d; ++b)
            row += stage->covariance[a * d + b] * w[b];
        sum += w[a] * row;
    }
    return sqrt(sum > 0.0 ? sum : 0.0);
}

/* w_x = whiten w_u */
static void from_whitened(const cqt_stage1 *stage, const double *w_u, double *w_x)
{
    size_t d = stage->d;
    for (size_t a = 0; a < d; ++a) {
        double sum = 0.0;
        for (size_t b = 0; b < d; ++b)
            sum += stage->whiten[a * d + b] * w_u[b];
        w_x[a] = sum;
    }
}

/* w_u = whiten' w_x */
static void to_whitened_dual(const cqt_stage1 *stage, const double *w_x, double *w_u)
{
    size_t d = stage->d;
    for (size_t b = 0; b < d; ++b) {
        double sum = 0.0;
        for (size_t a = 0; a < d; ++a)
            sum += stage->whiten[a * d + b] * w_x[a];
        w_u[b] = sum;
    }
}

static void project_to_domain(const cqt_stage1 *stage, double *gate, size_t K, double radius)
{
    if (!(radius > 0.0))
        return;
    for (size_t k = 0; k + 1 < K; ++k) {
        double *row = gate + k * stage->d;
        double length = whitened_norm(stage, row);
        if (length > radius)
            for (size_t j = 0; j < stage->d; ++j)
                row[j] *= radius / length;
    }
}

/* ---- The shared variance's update and the moment gate: passes of their own ------------ */

typedef struct residual_pass {
    const moe_rows *rows;
    size_t d, K;
    const double *experts; /* K x d */
    const double *resp;    /* n x K */
    cqt_link_fn link;
} residual_pass;

/* sums: sum_i w_i sum_k r_ik (y_i - g(a_k' x_i))^2 */
static size_t residual_chunk(void *user, size_t first, size_t count, double *sums,
                             double *scratch)
{
    const residual_pass *pass = user;
    const moe_rows *rows = pass->rows;
    size_t d = pass->d, K = pass->K;
    double *linear = scratch, *block = scratch + BLOCK_ROWS * K;
    for (size_t start = first; start < first + count; start += BLOCK_ROWS) {
        size_t block_rows = first + count - start < BLOCK_ROWS ? first + count - start
                                                               : BLOCK_ROWS;
        /* The block product takes rows of d values, in pieces OpenBLAS runs on this thread
           (its threads would round otherwise). */
        const double *x = rows->X + start * rows->ldx;
        if (rows->ldx != d) {
            for (size_t r = 0; r < block_rows; ++r)
                memcpy(block + r * d, x + r * rows->ldx, d * sizeof(double));
            x = block;
        }
        moe_product_abt(block_rows, K, d, x, pass->experts, linear);
        for (size_t r = 0; r < block_rows; ++r) {
            size_t i = start + r;
            double w = rows->weights != NULL ? rows->weights[i] : 1.0;
            for (size_t k = 0; k < K; ++k) {
                double e = rows->y[i] - pass->link(linear[r * K + k]);
                sums[0] += w * pass->resp[i * K + k] * e * e;
            }
        }
    }
    return 0;
}

typedef struct moment_pass {
    const moe_rows *rows;
    size_t d;
    const double *first_expert, *second_expert, *mean;
} moment_pass;

/* sums: sum_i w_i 1{Ratio_i <= 1/2} (x_i - mean), Ratio = (y - a2'x) / ((a1 - a2)'x), read
   without dividing (Ratio is Cauchy-like; only its distribution function at 1/2 is used). */
static size_t moment_chunk(void *user, size_t first, size_t count, double *sums,
                           double *scratch)
{
    (void)scratch;
    const moment_pass *pass = user;
    const moe_rows *rows = pass->rows;
    size_t d = pass->d;
    for (size_t i = first; i < first + count; ++i) {
        const double *x = rows->X + i * rows->ldx;
        double t1 = 0.0, t2 = 0.0;
        for (size_t j = 0; j < d; ++j) {
            t1 += pass->first_expert[j] * x[j];
            t2 += pass->second_expert[j] * x[j];
        }
        double numerator = rows->y[i] - t2, denominator = t1 - t2;
        int below = denominator > 0.0   ? numerator <= 0.5 * denominator
                    : denominator < 0.0 ? numerator >= 0.5 * denominator
                                        : numerator < 0.0;
        if (!below)
            continue;
        double w = rows->weights != NULL ? rows->weights[i] : 1.0;
        for (size_t j = 0; j < d; ++j)
            sums[j] += w * (x[j] - pass->mean[j]);
    }
    return 0;
}

static moe_status moment_gate(moe_fit_context *context, moe_model_t *model,
                              const cqt_stage1 *stage, const moe_rows *rows, double *gate)
{
    size_t d = stage->d;
    if (moe_model_n_experts(model) != 2 || moe_model_link(model) != MOE_LINK_IDENTITY)
        return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                                "cqt: gate_method = moments is the two-expert estimator of the "
                                "identity link");
    double *experts = malloc(2 * d * sizeof(double)), *sums = malloc(2 * d * sizeof(double));
    moe_status status = MOE_OK;
    if (experts == NULL || sums == NULL)
        status = moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                  "cannot allocate cqt's moment gate");
    if (status == MOE_OK)
        status = moe_model_get_experts(model, experts, 2 * d);
    moment_pass pass = {rows, d, experts, experts + d, stage->mean};
    if (status == MOE_OK)
        status = moe_context_parallel(context, rows->n, d, 0, moment_chunk, &pass, sums);
    if (status == MOE_OK) {
        /* In the whitened coordinates E[1{Ratio <= 1/2} u] = alpha w with alpha < 0: the
           gate row is the negated direction (unit length, the domain's radius in theory). */
        double *direction = sums + d;
        to_whitened_dual(stage, sums, direction);
        double length = 0.0;
        for (size_t j = 0; j < d; ++j)
            length += direction[j] * direction[j];
        length = sqrt(length);
        if (!(length > 0.0))
            status = moe_context_fail(context, MOE_ERR_NUMERICAL,
                                      "cqt: the moment gate's direction vanished");
        else {
            for (size_t j = 0; j < d; ++j)
                direction[j] = -direction[j] / length;
            from_whitened(stage, direction, gate);
            memset(gate + d, 0, d * sizeof(double));
        }
    }
    free(experts);
    free(sums);
    return status;
}

/* ---- The loop ------------------------------------------------------------------------------ */

typedef struct gate_work {
    moe_estep_t *estep;
    double *resp, *gate, *previous, *gradient, *dual, *experts, *variances;
} gate_work;

static void work_free(gate_work *work)
{
    moe_estep_free(work->estep);
    free(work->resp);
    free(work->gate);
    free(work->previous);
    free(work->gradient);
    free(work->dual);
    free(work->experts);
    free(work->variances);
}

/* E-step at the model: resp and the penalised objective (sum scale) and log-likelihood. */
static moe_status evaluate(moe_fit_context *context, gate_work *work, moe_model_t *model,
                           double *objective, double *loglik)
{
    moe_status status = moe_estep_run(work->estep, model, NULL, 0, work->resp);
    moe_estep_result result = MOE_ESTEP_RESULT_INIT;
    double penalty = 0.0;
    if (status == MOE_OK)
        status = moe_estep_get_result(work->estep, &result);
    if (status == MOE_OK)
        status = moe_context_penalty(context, model, &penalty);
    if (status == MOE_OK) {
        *loglik = result.loglik;
        *objective = result.loglik - result.total_weight * penalty;
    }
    return status;
}

static moe_status update_variance(moe_fit_context *context, gate_work *work, moe_model_t *model,
                                  const cqt_stage1 *stage, const moe_rows *rows,
                                  const cqt_gate_options *options)
{
    size_t K = moe_model_n_experts(model), d = stage->d;
    residual_pass pass = {rows, d, K, work->experts, work->resp,
                          cqt_link_function(moe_model_link(model))};
    double sum = 0.0;
    moe_status status = moe_context_parallel(context, rows->n, 1, BLOCK_ROWS * (K + d),
                                             residual_chunk, &pass, &sum);
    if (status != MOE_OK)
        return status;
    double variance = sum / stage->total_weight;
    if (!(variance > options->variance_floor))
        variance = options->variance_floor;
    for (size_t k = 0; k < K; ++k)
        work->variances[k] = variance;
    return moe_model_set_variances(model, work->variances, K);
}

static moe_status work_alloc(moe_fit_context *context, gate_work *work, size_t n, size_t K,
                             size_t d)
{
    memset(work, 0, sizeof *work);
    work->resp = malloc(n * K * sizeof(double));
    work->gate = calloc(K * d, sizeof(double));
    work->previous = calloc(K * d, sizeof(double));
    work->gradient = calloc(K * d, sizeof(double));
    work->dual = calloc(d, sizeof(double));
    work->experts = calloc(K * d, sizeof(double));
    work->variances = calloc(K, sizeof(double));
    if (work->resp == NULL || work->gate == NULL || work->previous == NULL ||
        work->gradient == NULL || work->dual == NULL || work->experts == NULL ||
        work->variances == NULL) {
        work_free(work);
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY,
                                "cannot allocate cqt's gate workspace");
    }
    return MOE_OK;
}

/* The start: a uniform point of the whitened unit ball (the theory's domain, R = 1), or of
   the domain when that is smaller. A wide domain is a bound on runaways, not a place to
   start from: logits of standard deviation 8 would start with hard labels. */
static moe_status start_gate(moe_fit_context *context, gate_work *work, moe_model_t *model,
                             const cqt_stage1 *stage, const moe_rows *rows,
                             const cqt_gate_options *options, moe_rng *rng)
{
    size_t K = moe_model_n_experts(model), d = stage->d;
    if (options->method == CQT_GATE_MOMENTS)
        return moment_gate(context, model, stage, rows, work->gate);
    double radius = options->radius > 0.0 && options->radius < 1.0 ? options->radius : 1.0;
    for (size_t k = 0; k + 1 < K; ++k) {
        double length = 0.0;
        for (size_t j = 0; j < d; ++j) {
            work->dual[j] = moe_rng_normal(rng);
            length += work->dual[j] * work->dual[j];
        }
        double scale = radius * pow(moe_rng_uniform(rng), 1.0 / (double)d) /
                       (length > 0.0 ? sqrt(length) : 1.0);
        for (size_t j = 0; j < d; ++j)
            work->dual[j] *= scale;
        from_whitened(stage, work->dual, work->gate + k * d);
    }
    return MOE_OK;
}

/* One step on the gate, into work->gate: a gradient step, or the gate's Newton step. */
static moe_status gate_step(moe_fit_context *context, gate_work *work, moe_model_t *model,
                            const cqt_stage1 *stage, const cqt_gate_options *options)
{
    size_t K = moe_model_n_experts(model), d = stage->d;
    moe_status status;
    if (options->method != CQT_GATE_GRADIENT) {
        status = moe_context_gate_newton(context, model, NULL, work->resp, 0);
        if (status == MOE_OK)
            status = moe_model_get_gate(model, work->gate, K * d);
        return status;
    }
    status = moe_context_gate_gradient(context, model, NULL, work->resp, work->gradient,
                                       (K - 1) * d);
    if (status != MOE_OK)
        return status;
    /* A step of `step` in u is step C^-1 g = step whiten whiten' g in x. */
    for (size_t k = 0; k + 1 < K; ++k) {
        to_whitened_dual(stage, work->gradient + k * d, work->dual);
        double *row = work->gate + k * d;
        double *change = work->gradient + k * d; /* reused for the step in x */
        from_whitened(stage, work->dual, change);
        for (size_t j = 0; j < d; ++j)
            row[j] -= options->step * change[j];
    }
    moe_context_count(context, MOE_COUNTER_GRADIENT_EVALUATIONS, 1);
    return MOE_OK;
}

/* How far the gate moved in the last step: its largest row change, in the whitened norm. */
static double gate_change(const cqt_stage1 *stage, gate_work *work, size_t K)
{
    size_t d = stage->d;
    double change = 0.0;
    for (size_t k = 0; k + 1 < K; ++k) {
        for (size_t j = 0; j < d; ++j)
            work->dual[j] = work->gate[k * d + j] - work->previous[k * d + j];
        double moved = whitened_norm(stage, work->dual);
        if (moved > change)
            change = moved;
    }
    return change;
}

/* The iterations from the start, whose penalised objective is *objective, until the gate
   moves less than change_tol or max_iter. */
static moe_status iterate(moe_fit_context *context, gate_work *work, moe_model_t *model,
                          const cqt_stage1 *stage, const moe_rows *rows,
                          const cqt_gate_options *options, size_t restart, double *objective,
                          cqt_gate_result *result)
{
    size_t K = moe_model_n_experts(model), d = stage->d;
    double total = 0.0, loglik = 0.0;
    moe_status status = moe_context_total_weight(context, NULL, &total);
    for (size_t iteration = 1; status == MOE_OK && iteration <= options->max_iter;
         ++iteration) {
        memcpy(work->previous, work->gate, K * d * sizeof(double));
        status = gate_step(context, work, model, stage, options);
        if (status != MOE_OK)
            break;
        project_to_domain(stage, work->gate, K, options->radius);
        status = moe_model_set_gate(model, work->gate, K * d);
        if (status == MOE_OK && options->estimate_sigma)
            status = update_variance(context, work, model, stage, rows, options);
        double next = 0.0;
        if (status == MOE_OK)
            status = evaluate(context, work, model, &next, &loglik);
        if (status != MOE_OK)
            break;
        double scale = total + fabs(*objective);
        if (next < *objective - 1e-10 * scale)
            moe_context_note_decrease(context, (*objective - next) / scale);
        *objective = next;
        result->iterations = iteration;
        if (options->record)
            status = moe_context_iteration(context, restart, iteration, loglik);
        if (gate_change(stage, work, K) < options->change_tol) {
            result->converged = 1;
            break;
        }
    }
    return status;
}

moe_status cqt_gate_fit(moe_fit_context *context, moe_model_t *model, const cqt_stage1 *stage,
                        const cqt_gate_options *options, moe_rng *rng, size_t restart,
                        cqt_gate_result *result)
{
    size_t K = moe_model_n_experts(model), d = stage->d;
    moe_rows rows;
    moe_status status = moe_context_rows(context, &rows);
    if (status != MOE_OK)
        return status;
    gate_work work;
    memset(result, 0, sizeof *result);
    status = work_alloc(context, &work, rows.n, K, d);
    if (status != MOE_OK)
        return status;
    status = moe_estep_create(context, 0, &work.estep);
    if (status == MOE_OK)
        status = moe_model_get_experts(model, work.experts, K * d);
    if (status == MOE_OK)
        status = start_gate(context, &work, model, stage, &rows, options, rng);
    if (status == MOE_OK)
        status = moe_model_set_gate(model, work.gate, K * d);
    double objective = 0.0, loglik = 0.0;
    if (status == MOE_OK)
        status = evaluate(context, &work, model, &objective, &loglik);
    if (status == MOE_OK && options->record)
        status = moe_context_iteration(context, restart, 0, loglik);
    if (options->method == CQT_GATE_MOMENTS) {
        result->objective = objective;
        result->converged = 1;
        work_free(&work);
        return status;
    }
    if (status == MOE_OK)
        status = iterate(context, &work, model, stage, &rows, options, restart, &objective,
                         result);
    result->objective = objective;
    work_free(&work);
    return status;
}
