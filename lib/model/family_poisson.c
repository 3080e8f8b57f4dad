/*
 * Poisson experts with the log link: y in {0, 1, 2, ...},
 *   log f_k(y | x) = y eta - exp(eta) - log y!,   eta = beta_k' x~,  E[y | x, k] = exp(eta).
 * One stored row per expert, no variance. Each expert's M-step is a weighted Poisson
 * regression, solved exactly by Newton's method (IRLS) with step halving: the objective
 * per expert (sum scale, minimised)
 *   F(beta) = sum_i v_i r_ik (exp(eta_i) - y_i eta_i) + N (ridge/2) ||beta without intercept||^2
 * is convex, its Hessian sum v r exp(eta) x x' + N ridge, so Newton from any finite start
 * with a line search that never accepts an increase converges.
 */
#include "model/family.h"
#include "model/newton.h"
#include "common/alloc.h"
#include "common/combine.h"
#include "common/error.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "moe/kernels.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Counts above 2^53 are not all representable: integrality means nothing there. */
#define LARGEST_COUNT 9007199254740992.0

static int poisson_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY; /* the log link is part of the family */
}

static size_t poisson_expert_free_params(const struct moe_model *model)
{
    return moe_expert_free_inputs(model);
}

static moe_status poisson_check_response(const struct moe_model *model, size_t n,
                                         const double *y, char *message)
{
    (void)model;
    for (size_t i = 0; i < n; ++i) {
        if (isnan(y[i]))
            return moe_fail(message, MOE_ERR_NON_FINITE,
                            "row %zu, response: the value is NaN: poisson experts need counts",
                            i);
        if (!(y[i] >= 0.0 && y[i] <= LARGEST_COUNT && y[i] == floor(y[i])))
            return moe_fail(message, MOE_ERR_INVALID_LABEL,
                            "row %zu, response: %g is not a count: poisson experts need "
                            "counts, integers in {0, 1, ..., 2^53}",
                            i, y[i]);
    }
    return MOE_OK;
}

static void poisson_log_density(const struct moe_model *model, size_t rows, const double *linear,
                                const double *y, double *out, double *scratch)
{
    (void)scratch;
    size_t K = model->n_experts;
    for (size_t k = 0; k < K; ++k)
        for (size_t i = 0; i < rows; ++i) {
            double eta = linear[k * rows + i];
            /* y = 0 would make 0 * (-inf) of an underflowed rate: its term is just -mu. */
            double data = y[i] == 0.0 ? 0.0 : y[i] * eta;
            out[k * rows + i] = data - moe_exp(eta) - lgamma(y[i] + 1.0);
        }
}

static size_t poisson_prediction_width(const struct moe_model *model)
{
    (void)model;
    return 1;
}

static double log_rate(double eta)
{
    return eta; /* the log link */
}

/* E[y | x] = sum_k pi_k(x) exp(beta_k' x~) */
static void poisson_predict(const struct moe_model *model, size_t rows, const double *block,
                            const double *gate_proba, double *out, double *scratch)
{
    moe_expert_mixture_mean(model, rows, block, gate_proba, log_rate, out, scratch);
}

/* ---- One expert's weighted Poisson regression ------------------------------------------- */

typedef struct expert_pass {
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
            double y = pass->data->y[first + i];
            double eta = moe_dot(p, block + i * p, pass->beta), mu = moe_exp(eta);
            weights[i] = 0.0;
            if (share == 0.0)
                continue;
            sums[0] += share * (mu - (y == 0.0 ? 0.0 : y * eta));
            if (!pass->derivatives)
                continue;
            for (size_t j = 0; j < p; ++j)
                gradient[j] += share * (mu - y) * block[i * p + j];
            weights[i] = share * mu;
        }
        if (pass->derivatives)
            moe_weighted_gram_add(count, p, block, weights, scratch, hessian);
    }
    return 0;
}

typedef struct poisson_newton {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    const moe_expert_mstep_options *options;
    size_t k, p;
    double *beta, *saved, *direction, *sums, *work;
    double *warm_end; /* where Newton from the warm start ended (newton_steps) */
} poisson_newton;

static double ridge_norm(const poisson_newton *s, const double *beta)
{
    double sum = 0.0;
    for (size_t j = (size_t)s->model->intercept; j < s->p; ++j)
        sum += beta[j] * beta[j];
    return sum;
}

/* The mean-scale objective at s->beta (and, with derivatives, its gradient and Hessian in
   s->sums, mean scale, penalty included); +inf where exp overflows. */
static moe_status evaluate(poisson_newton *s, int derivatives, size_t *failed, double *objective,
                           char *message)
{
    size_t p = s->p;
    expert_pass pass = {s->data, s->resp, s->model->n_experts, s->k, p, s->beta, derivatives};
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

static moe_status refuse_overflow(const poisson_newton *s, char *message)
{
    return moe_fail(message, MOE_ERR_NUMERICAL,
                    "poisson expert %zu: its expected counts overflow (a linear predictor above "
                    "709) at the coefficients the M-step starts from; the fit has diverged",
                    s->k);
}

/* The Newton loop's evaluation (model/newton.h): derivatives only when it asks for all of
   them (a pass of the objective alone is cheaper than one with the gradient); where they
   are asked, a point at which the expected counts overflow is refused. */
static moe_status newton_evaluate(void *user, int level, double *objective, int *gradient_ready,
                                  char *message)
{
    poisson_newton *s = user;
    size_t failed = 0;
    int derivatives = level == MOE_NEWTON_DERIVATIVES;
    moe_status status = evaluate(s, derivatives, &failed, objective, message);
    if (status == MOE_OK && derivatives && !isfinite(*objective))
        status = refuse_overflow(s, message);
    *gradient_ready = derivatives;
    return status;
}

static moe_newton_problem newton_problem(poisson_newton *s)
{
    moe_newton_problem problem = {s->p,          s->beta,      s->sums + 1, s->sums + 1 + s->p,
                                  s->direction, s->saved,     s->work,     newton_evaluate, s,
                                  NULL};
    return problem;
}

/* Newton (IRLS) with step halving from s->beta; the objective never increases. */
static moe_status newton_from(poisson_newton *s, moe_newton_report *outcome, double *objective,
                              char *message)
{
    moe_newton_problem problem = newton_problem(s);
    moe_newton_options options = {s->options->max_newton, s->options->tolerance};
    *objective = INFINITY;
    return moe_newton_minimise(&problem, &options, outcome, objective, message);
}

/*
 * The start a GLM fit takes (a constant rate, the weighted mean count): the free slopes at
 * zero, the held coefficients at their values, the intercept solving its own equation,
 * log(sum s y / sum s exp(eta without it)). Into s->beta; 0 when there is none (no free
 * intercept, or no counts).
 */
static int constant_rate_start(poisson_newton *s, char *message)
{
    const struct moe_model *model = s->model;
    size_t p = s->p, K = model->n_experts;
    if (!model->intercept || !moe_input_free(model->expert_inputs, 0))
        return 0;
    for (size_t a = 0; a < p; ++a)
        s->beta[a] = moe_input_free(model->expert_inputs, a)
                         ? 0.0
                         : moe_input_held_value(model->expert_inputs, a);
    double counts = 0.0;
    for (size_t i = 0; i < s->data->n; ++i)
        counts += moe_data_weight(s->data, i) * s->resp[i * K + s->k] * s->data->y[i];
    if (moe_combine_sums(&counts, 1, message) != MOE_OK)
        return 0;
    size_t failed = 0;
    double objective = 0.0;
    if (!(counts > 0.0) || evaluate(s, 1, &failed, &objective, message) != MOE_OK)
        return 0;
    /* the intercept's gradient, mean scale: (sum s mu - sum s y) / N */
    double rates = s->sums[1] * s->options->total_weight + counts;
    s->beta[0] = log(counts) - log(rates);
    return rates > 0.0 && isfinite(s->beta[0]);
}

/*
 * Newton from the current coefficients, the warm start that makes EM's M-steps short. Far
 * from the optimum (a count of 8e15 among counts of 4, an expert at the starting zeros) the
 * log link's Newton step overshoots by orders of magnitude, and 40 halvings do not bring it
 * back: the step fails and the expert would stay where it was. Then the minimisation runs
 * again from the constant rate, which puts every row's expected count at the mean, and the
 * better of the two ends is kept (the problem is convex: both head for one minimum).
 */
static moe_status newton_steps(poisson_newton *s, moe_expert_mstep_report *report,
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
        if (constant_rate_start(s, message))
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
   the objective does not increase (the Poisson curvature has no global bound). */
static moe_status gradient_steps(poisson_newton *s, moe_expert_mstep_report *report,
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

/* Weighted counts of zero under the expert with no penalty: the rate's optimum is 0, the
   intercept's at minus infinity. */
static int expert_without_counts(const poisson_newton *s)
{
    if (s->options->ridge != 0.0)
        return 0;
    double sums[2] = {0.0, 0.0}; /* counts, weight */
    size_t K = s->model->n_experts;
    for (size_t i = 0; i < s->data->n; ++i) {
        double share = moe_data_weight(s->data, i) * s->resp[i * K + s->k];
        sums[0] += share * s->data->y[i];
        sums[1] += share;
    }
    char ignored[MOE_MESSAGE_SIZE]; /* a failed request fails the fit's next one */
    moe_combine_sums(sums, 2, ignored);
    return sums[0] <= 1e-9 * sums[1];
}

static moe_status poisson_m_step(struct moe_model *model, const moe_data *data, const double *resp,
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
    poisson_newton s = {model, data,           resp, options,   0, p, memory, memory + p,
                        memory + 2 * p, sums, sums + 1 + p + p * p, memory + 3 * p};
    moe_status status = MOE_OK;
    for (size_t k = 0; k < K && status == MOE_OK; ++k) {
        if (!moe_expert_has_weight(data, resp, K, k, options, report))
            continue;
        s.k = k;
        memcpy(s.beta, model->experts + k * p, p * sizeof(double));
        status = options->inner_steps > 0 ? gradient_steps(&s, report, message)
                                          : newton_steps(&s, report, message);
        if (status == MOE_OK && options->inner_steps == 0 && expert_without_counts(&s))
            report->separations++;
        if (status == MOE_OK)
            memcpy(model->experts + k * p, s.beta, p * sizeof(double));
    }
    free(memory);
    return status;
}

/* ---- Gradient and curvature ------------------------------------------------------------ */

typedef struct gradient_pass {
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
            for (size_t k = 0; k < K; ++k)
                scaled[i * K + k] = weight * r[k] * (moe_exp(scaled[i * K + k]) - y);
        }
        moe_product_atb_add(count, K, p, scaled, block, sums);
    }
    return 0;
}

static moe_status poisson_gradient(const struct moe_model *model, const moe_data *data,
                                   const double *resp, double ridge, double total_weight,
                                   size_t threads, double *coefficients, double *log_variances,
                                   char *message)
{
    (void)log_variances;
    size_t K = model->n_experts, p = model->n_inputs;
    double *sums = moe_alloc_array(K * p, 1, sizeof(double));
    if (sums == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert gradient");
    gradient_pass pass = {model, data, resp};
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
            status = moe_fail(message, MOE_ERR_NUMERICAL,
                              "the poisson experts' gradient overflows: an expected count "
                              "exceeds the doubles' range");
    free(sums);
    return status;
}

/* Without data no bound exists: the curvature is E_w[r exp(eta) x x'], as large as the
   rates. data_curvature gives the one the safe steps use; this is its value at unit rates. */
static double poisson_curvature(const struct moe_model *model)
{
    (void)model;
    return 1.0;
}

/* The largest expected count of any expert on any row: with lambda_max(E_w[x x']) it bounds
   every expert's curvature, sum_i v r mu x x' <= max mu sum_i v x x'. */
static double poisson_data_curvature(const struct moe_model *model, const moe_data *data)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double largest = 0.0, *row = moe_alloc_array(p + 1, 1, sizeof(double));
    if (row == NULL)
        return INFINITY;
    for (size_t i = 0; i < data->n; ++i) {
        moe_data_load_block(data, i, 1, row);
        for (size_t k = 0; k < K; ++k) {
            double mu = moe_exp(moe_dot(p, row, model->experts + k * p));
            if (!(mu <= largest))
                largest = mu;
        }
    }
    free(row);
    return largest > 0.0 ? largest : DBL_MIN;
}

const struct moe_family_ops moe_family_poisson = {
    .id = MOE_FAMILY_POISSON,
    .name = "poisson",
    .uses_classes = 0,
    .has_variance = 0,
    .numeric_response = 1,
    .supports_link = poisson_supports_link,
    .expert_free_params = poisson_expert_free_params,
    .normalize_experts = NULL,
    .check_response = poisson_check_response,
    .log_density = poisson_log_density,
    .prediction_width = poisson_prediction_width,
    .predict = poisson_predict,
    .m_step = poisson_m_step,
    .gradient = poisson_gradient,
    .curvature = poisson_curvature,
    .data_curvature = poisson_data_curvature,
};
