/* The one-GLM-per-expert M-step, gradient and curvature (families/glm_expert.h). */
#include "families/glm_expert.h"
#include "pass/newton.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "moe/kernels.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct expert_pass {
    const moe_glm_family *family;
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    size_t K, k, p;
    const double *beta;
    int derivatives; /* also the gradient and the Hessian's upper triangle */
} expert_pass;

/* Sums (sum scale) of one chunk: [data term, gradient (p), Hessian (p x p)]. */
static size_t expert_chunk(void *opaque, size_t start, size_t rows, double *sums,
                           double *workspace)
{
    const expert_pass *pass = opaque;
    size_t p = pass->p, R = moe_block_rows_for(rows);
    double *block = workspace, *weights = block + R * p, *scratch = weights + R;
    double *gradient = sums + 1, *hessian = sums + 1 + p;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset, count = rows - offset < R ? rows - offset : R;
        moe_data_load_block(pass->data, first, count, block);
        for (size_t i = 0; i < count; ++i) {
            double share = moe_data_weight(pass->data, first + i) *
                           pass->resp[(first + i) * pass->K + pass->k];
            weights[i] = 0.0;
            if (share == 0.0)
                continue;
            const double *x = block + i * p;
            moe_glm_row row;
            pass->family->row(pass->model, pass->k, x, pass->data->y[first + i],
                              moe_dot(p, x, pass->beta), &row);
            sums[0] += share * row.loss;
            if (!pass->derivatives)
                continue;
            for (size_t j = 0; j < p; ++j)
                gradient[j] += share * row.slope * x[j];
            weights[i] = share * row.curvature;
        }
        if (pass->derivatives)
            moe_weighted_gram_add(count, p, block, weights, scratch, hessian);
    }
    return 0;
}

static double ridge_norm(const moe_glm_expert *s, const double *beta)
{
    double sum = 0.0;
    for (size_t j = (size_t)s->model->intercept; j < s->p; ++j)
        sum += beta[j] * beta[j];
    return sum;
}

moe_status moe_glm_evaluate(moe_glm_expert *s, int derivatives, size_t *failed,
                            double *objective, char *message)
{
    size_t p = s->p;
    expert_pass pass = {s->family, s->model,   s->data, s->resp, s->model->n_experts,
                        s->k,      p,          s->beta, derivatives};
    size_t R = moe_block_rows_for(s->data->n);
    moe_chunk_job job = {s->data->n, 1 + p + p * p, R * (2 * p + 1), expert_chunk, &pass};
    moe_status status = moe_run_chunks(&job, s->options->threads, s->sums, failed, message);
    if (status != MOE_OK)
        return status;
    double N = s->options->total_weight, ridge = s->options->ridge;
    *objective = s->sums[0] / N + 0.5 * ridge * ridge_norm(s, s->beta);
    if (!isfinite(*objective))
        *objective = INFINITY;
    if (derivatives) {
        double *gradient = s->sums + 1, *hessian = s->sums + 1 + p;
        moe_symmetrize_upper(p, hessian);
        for (size_t a = 0; a < p; ++a) {
            gradient[a] /= N;
            for (size_t b = 0; b < p; ++b)
                hessian[a * p + b] /= N;
        }
        for (size_t j = (size_t)s->model->intercept; j < p; ++j) {
            gradient[j] += ridge * s->beta[j];
            hessian[j * p + j] += ridge;
        }
        /* Held inputs (common/inputs.h): a zero step there. */
        moe_inputs_zero(1, p, s->model->expert_inputs, gradient);
        moe_inputs_restrict_step(1, p, s->model->expert_inputs, hessian, NULL);
    }
    return MOE_OK;
}

/* The Newton loop's evaluation (pass/newton.h): derivatives only when it asks for all of
   them (a pass of the objective alone is cheaper than one with the gradient); where they
   are asked, a point at which the loss overflows is refused. */
static moe_status newton_evaluate(void *user, int level, double *objective, int *gradient_ready,
                                  char *message)
{
    moe_glm_expert *s = user;
    size_t failed = 0;
    int derivatives = level == MOE_NEWTON_DERIVATIVES;
    moe_status status = moe_glm_evaluate(s, derivatives, &failed, objective, message);
    if (status == MOE_OK && derivatives && !isfinite(*objective))
        status = moe_fail(message, MOE_ERR_NUMERICAL, "%s expert %zu: %s",
                          s->model->family_ops->name, s->k, s->family->overflow);
    *gradient_ready = derivatives;
    return status;
}

static moe_newton_problem newton_problem(moe_glm_expert *s)
{
    moe_newton_problem problem = {s->p,          s->beta,      s->sums + 1, s->sums + 1 + s->p,
                                  s->direction, s->saved,     s->work,     newton_evaluate, s,
                                  NULL};
    return problem;
}

/* Newton (IRLS) with step halving from s->beta; the objective never increases. */
static moe_status newton_from(moe_glm_expert *s, moe_newton_report *outcome, double *objective,
                              char *message)
{
    moe_newton_problem problem = newton_problem(s);
    moe_newton_options options = {s->options->max_newton, s->options->tolerance};
    *objective = INFINITY;
    return moe_newton_minimise(&problem, &options, outcome, objective, message);
}

/*
 * Newton from the current coefficients, the warm start that makes EM's M-steps short. Far
 * from the optimum (a count of 8e15 among counts of 4, an expert at the starting zeros) a
 * log link's Newton step overshoots by orders of magnitude, and 40 halvings do not bring it
 * back: the step fails and the expert would stay where it was. Then the minimisation runs
 * again from the family's constant start, and the better of the two ends is kept (the
 * problem is convex: both head for one minimum).
 */
static moe_status newton_steps(moe_glm_expert *s, moe_expert_mstep_report *report,
                               char *message)
{
    moe_newton_report outcome = {0, 0, 0, 0};
    double objective = INFINITY;
    moe_status status = newton_from(s, &outcome, &objective, message);
    if (status == MOE_OK && outcome.line_search_failures > 0) {
        memcpy(s->warm_end, s->beta, s->p * sizeof(double));
        moe_newton_report again = {0, 0, 0, 0};
        double other = INFINITY;
        moe_status retried = MOE_OK;
        if (s->family->constant_start != NULL && s->family->constant_start(s, message))
            retried = newton_from(s, &again, &other, message);
        outcome.steps += again.steps;
        outcome.ridge_fallbacks += again.ridge_fallbacks;
        /* the second run only ever improves on the first: its failure keeps the first's end */
        if (retried == MOE_OK && other < objective)
            outcome.line_search_failures = again.line_search_failures;
        else
            memcpy(s->beta, s->warm_end, s->p * sizeof(double));
    }
    report->newton_steps += outcome.steps;
    report->ridge_fallbacks += outcome.ridge_fallbacks;
    report->line_search_failures += outcome.line_search_failures;
    return status;
}

/* The inexact M-step: `inner_steps` gradient steps of size options->step, each halved until
   the objective does not increase (these curvatures have no global bound). */
static moe_status gradient_steps(moe_glm_expert *s, moe_expert_mstep_report *report,
                                 char *message)
{
    size_t p = s->p;
    moe_newton_problem problem = newton_problem(s);
    for (size_t step = 0; step < s->options->inner_steps; ++step) {
        double current = INFINITY;
        int ready = 0;
        moe_status status =
            newton_evaluate(s, MOE_NEWTON_DERIVATIVES, &current, &ready, message);
        if (status != MOE_OK)
            return status;
        for (size_t j = 0; j < p; ++j)
            s->direction[j] = -s->sums[1 + j];
        double squared = moe_dot(p, s->direction, s->direction);
        int accepted = 0;
        double next = current;
        status = moe_newton_line_search(&problem, current, squared * s->options->step,
                                        s->options->step, &next, &accepted, &ready, message);
        report->newton_steps++;
        if (status != MOE_OK || !accepted)
            return status;
    }
    return MOE_OK;
}

moe_status moe_glm_m_step(const moe_glm_family *family, struct moe_model *model,
                          const moe_data *data, const double *resp,
                          const moe_expert_mstep_options *options,
                          moe_expert_mstep_report *report, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    /* beta, saved, direction, warm_end (p each), sums (1 + p + p^2), solver work
       (p (p + 1)) */
    double *memory = moe_alloc_array(4 * p + 1 + p + p * p + p * (p + 1), 1, sizeof(double));
    if (memory == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    double *sums = memory + 4 * p;
    moe_glm_expert s = {model,      family,         data, resp,           options,
                        0,          p,              memory, memory + p, memory + 2 * p,
                        sums,       sums + 1 + p + p * p, memory + 3 * p};
    moe_status status = MOE_OK;
    for (size_t k = 0; k < K && status == MOE_OK; ++k) {
        if (!moe_expert_has_weight(data, resp, K, k, options, report))
            continue;
        s.k = k;
        memcpy(s.beta, model->experts + k * p, p * sizeof(double));
        status = options->inner_steps > 0 ? gradient_steps(&s, report, message)
                                          : newton_steps(&s, report, message);
        if (status == MOE_OK && options->inner_steps == 0 && family->separated != NULL &&
            family->separated(&s))
            report->separations++;
        if (status == MOE_OK)
            memcpy(model->experts + k * p, s.beta, p * sizeof(double));
    }
    free(memory);
    return status;
}

typedef struct gradient_pass {
    const moe_glm_family *family;
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
} gradient_pass;

static size_t gradient_chunk(void *opaque, size_t start, size_t rows, double *sums,
                             double *workspace)
{
    const gradient_pass *pass = opaque;
    size_t K = pass->model->n_experts, p = pass->model->n_inputs;
    size_t R = moe_block_rows_for(rows);
    double *block = workspace, *scaled = block + R * p;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset, count = rows - offset < R ? rows - offset : R;
        moe_data_load_block(pass->data, first, count, block);
        moe_expert_linear(pass->model, count, block, scaled);
        for (size_t i = 0; i < count; ++i) {
            double weight = moe_data_weight(pass->data, first + i), y = pass->data->y[first + i];
            const double *r = pass->resp + (first + i) * K;
            for (size_t k = 0; k < K; ++k) {
                double share = weight * r[k];
                moe_glm_row row = {0.0, 0.0, 0.0};
                if (share != 0.0)
                    pass->family->row(pass->model, k, block + i * p, y, scaled[i * K + k],
                                      &row);
                scaled[i * K + k] = share * row.slope;
            }
        }
        moe_product_atb_add(count, K, p, scaled, block, sums);
    }
    return 0;
}

moe_status moe_glm_gradient(const moe_glm_family *family, const struct moe_model *model,
                            const moe_data *data, const double *resp, double ridge,
                            double total_weight, size_t threads, double *coefficients,
                            char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *sums = moe_alloc_array(K * p, 1, sizeof(double));
    if (sums == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert gradient");
    gradient_pass pass = {family, model, data, resp};
    moe_chunk_job job = {data->n, K * p, moe_block_rows_for(data->n) * (p + K), gradient_chunk,
                         &pass};
    size_t ignored = 0;
    moe_status status = moe_run_chunks(&job, threads, sums, &ignored, message);
    for (size_t k = 0; status == MOE_OK && k < K; ++k)
        for (size_t j = 0; j < p; ++j) {
            double value = sums[k * p + j] / total_weight;
            if (j >= (size_t)model->intercept)
                value += ridge * model->experts[k * p + j];
            coefficients[k * p + j] = value;
        }
    for (size_t i = 0; status == MOE_OK && i < K * p; ++i)
        if (!isfinite(coefficients[i]))
            status = moe_fail(message, MOE_ERR_NUMERICAL, "the %s experts' gradient overflows: %s",
                              model->family_ops->name, family->gradient_overflow);
    free(sums);
    return status;
}

double moe_glm_data_curvature(const moe_glm_family *family, const struct moe_model *model,
                              const moe_data *data)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double largest = 0.0, *row = moe_alloc_array(p + 1, 1, sizeof(double));
    if (row == NULL)
        return INFINITY;
    for (size_t i = 0; i < data->n; ++i) {
        moe_data_load_block(data, i, 1, row);
        for (size_t k = 0; k < K; ++k) {
            moe_glm_row terms;
            family->row(model, k, row, data->y[i], moe_dot(p, row, model->experts + k * p),
                        &terms);
            if (!(terms.curvature <= largest))
                largest = terms.curvature;
        }
    }
    free(row);
    return largest > 0.0 ? largest : DBL_MIN;
}
