/*
 * Student-t regression experts (identity link): y = beta_k' x~ + sigma_k e, e ~ t(nu_k),
 *   log f_k(y | x) = lgamma((nu+1)/2) - lgamma(nu/2) - log(pi nu sigma^2)/2
 *                    - (nu+1)/2 log(1 + e^2 / (nu sigma^2)),   e = y - beta_k' x~.
 * One stored row per expert; model->variances holds the squared scales sigma_k^2 and
 * model->degrees the degrees of freedom nu_k.
 *
 * The M-step is one cycle of ECME (Liu and Rubin) per expert, on the scale-mixture form of
 * the t (y | u ~ N(mean, sigma^2 / u), u ~ Gamma(nu/2, nu/2)):
 *   E:   u_i = (nu + 1) / (nu + e_i^2 / sigma^2) at the current parameters;
 *   CM1: beta by least squares weighted w r u, then sigma^2 = sum w r u e^2 / sum w r: an EM
 *        step of the scale mixture at fixed nu, which never lowers the weighted t
 *        log-likelihood (minus the ridge penalty);
 *   CM2: nu maximising the weighted t log-likelihood itself at the new beta and sigma^2
 *        (maximise_degrees: Newton in log nu with halving, each step kept only if the value
 *        does not fall). ECM's CM2, the root of the complete-data equation at the old u, made
 *        nu creep: a nearly Gaussian expert's nu rose a few percent an iteration, fits met
 *        the 500-iteration cap, and the start search, judging short runs, preferred the
 *        optimum where every expert shares the heavy tail (docs/REPRODUCTIONS.md, "t experts:
 *        the default start and nu's step").
 * One cycle per M-step (the outer em iterates). options->inner_steps is ignored.
 * gem and gd step nu with the other parameters, in log nu (t_degrees_gradient; the kernel
 * clamps the step to [-1, 1] per iteration, as for the log-scales). moe_student_t_row gives
 * one row's score and Hessian for the observed information (information/information.c).
 */
#include "model/family.h"
#include "common/alloc.h"
#include "common/combine.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "common/special.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double log_pi = 1.1447298858494001741434273513531;

/* The part of log f that does not depend on the residual. */
static double t_constant(double nu, double scale_squared)
{
    return lgamma(0.5 * (nu + 1.0)) - lgamma(0.5 * nu) - 0.5 * (log_pi + log(nu * scale_squared));
}

static double t_log_density(double residual, double nu, double scale_squared, double constant)
{
    return constant - 0.5 * (nu + 1.0) * log1p(residual * residual / (nu * scale_squared));
}

/*
 * With a = nu sigma^2 + e^2 (v = sigma^2):
 *   d log f / d beta = (nu + 1) e / a x~,   d / d v = -1/(2v) + (nu + 1) e^2 / (2 v a),
 *   d / d nu = [psi((nu+1)/2) - psi(nu/2) - log(1 + e^2/(nu v)) + (e^2 - v)/a] / 2,
 * and the second derivatives of those, differentiated by hand (the checks are central
 * differences of the log-likelihood, tests/test_student_t.c).
 */
void moe_student_t_row(double residual, double nu, double scale_squared, moe_student_t_terms *out)
{
    double e = residual, e2 = e * e, v = scale_squared, a = nu * v + e2, a2 = a * a;
    out->log_density = t_log_density(e, nu, v, t_constant(nu, v));
    out->score_location = (nu + 1.0) * e / a;
    out->score_scale = -0.5 / v + 0.5 * (nu + 1.0) * e2 / (v * a);
    out->score_degrees = 0.5 * (moe_digamma(0.5 * (nu + 1.0)) - moe_digamma(0.5 * nu) -
                                log1p(e2 / (nu * v)) + (e2 - v) / a);
    out->location_location = (nu + 1.0) * (nu * v - e2) / a2;
    out->location_scale = (nu + 1.0) * nu * e / a2;
    out->location_degrees = e * (v - e2) / a2;
    out->scale_scale = -0.5 / (v * v) + 0.5 * (nu + 1.0) * e2 * (a + nu * v) / (v * v * a2);
    out->scale_degrees = e2 * (v - e2) / (2.0 * v * a2);
    out->degrees_degrees = -0.25 * (moe_trigamma(0.5 * (nu + 1.0)) - moe_trigamma(0.5 * nu)) -
                           0.5 / nu + 0.5 * v / a + 0.5 * v * (e2 - v) / a2;
}

static int t_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY;
}

static size_t t_expert_free_params(const struct moe_model *model)
{
    return moe_expert_free_inputs(model) + 2; /* coefficients, the scale and nu */
}

static moe_status t_check_response(const struct moe_model *model, size_t n,
                                   const double *X, size_t ldx, const double *y,
                                   char *message)
{
    (void)X;
    (void)ldx;
    (void)model;
    (void)n;
    (void)y;
    (void)message;
    return MOE_OK; /* any finite value; finiteness is checked for every family */
}

static void t_log_density_block(const struct moe_model *model, size_t rows,
    const double *columns, const double *linear, const double *y, double *out,
                                double *scratch)
{
    (void)columns;
    (void)scratch;
    for (size_t k = 0; k < model->n_experts; ++k) {
        double nu = model->degrees[k], scale = model->variances[k];
        double constant = t_constant(nu, scale);
        for (size_t i = 0; i < rows; ++i)
            out[k * rows + i] = t_log_density(y[i] - linear[k * rows + i], nu, scale, constant);
    }
}

static size_t t_prediction_width(const struct moe_model *model)
{
    (void)model;
    return 1;
}

/* The mixture of the experts' locations (their means where nu > 1). */
static void t_predict(const struct moe_model *model, size_t rows, const double *block,
                      const double *gate_proba, double *out, double *scratch)
{
    size_t K = model->n_experts;
    moe_expert_linear(model, rows, block, scratch);
    for (size_t i = 0; i < rows; ++i)
        out[i] = moe_dot(K, gate_proba + i * K, scratch + i * K);
}

/* ---- One expert's ECM ------------------------------------------------------------------- */

/* The sums of a combined fit's workers (common/combine.h); without one, nothing. A failed
   request leaves values the fit's next request fails before they are used. */
static void combine(double *values, size_t count)
{
    char ignored[MOE_MESSAGE_SIZE];
    moe_combine_sums(values, count, ignored);
}

typedef struct t_expert {
    const struct moe_model *model;
    const moe_data *data;
    const moe_expert_mstep_options *options;
    size_t p;
    double *beta;   /* p, the coefficients being fitted */
    double scale;   /* sigma^2 */
    double nu;
    double *share;  /* n: w_i r_ik */
    double *u;      /* n: the scale weights of the last E step */
    double *squared; /* n: squared residuals at beta (maximise_degrees) */
    double total;   /* sum of share */
    double *block, *weights, *scratch, *gram, *rhs, *work; /* R x p, R, R x p, p x p, p, p(p+1) */
} t_expert;

static double residual_at(const t_expert *e, const double *row, size_t i)
{
    return e->data->y[i] - moe_dot(e->p, row, e->beta);
}

static double ridge_norm(const t_expert *e)
{
    double sum = 0.0;
    for (size_t j = (size_t)e->model->intercept; j < e->p; ++j)
        sum += e->beta[j] * e->beta[j];
    return sum;
}

/* The E step and CM1's sums: u at the current parameters, the Gram matrix and right side
   of the weighted least squares; returns sum w r (log u - u). */
static double scale_weights(t_expert *e)
{
    const moe_data *data = e->data;
    size_t p = e->p, R = moe_block_rows_for(data->n);
    double sum = 0.0;
    memset(e->gram, 0, p * p * sizeof(double));
    memset(e->rhs, 0, p * sizeof(double));
    for (size_t first = 0; first < data->n; first += R) {
        size_t count = data->n - first < R ? data->n - first : R;
        moe_data_load_block(data, first, count, e->block);
        for (size_t i = 0; i < count; ++i) {
            size_t row = first + i;
            double residual = residual_at(e, e->block + i * p, row);
            double u = (e->nu + 1.0) / (e->nu + residual * residual / e->scale);
            e->u[row] = u;
            e->weights[i] = e->share[row] * u;
            if (e->share[row] != 0.0)
                sum += e->share[row] * (log(u) - u);
            for (size_t j = 0; j < p; ++j)
                e->rhs[j] += e->weights[i] * data->y[row] * e->block[i * p + j];
        }
        moe_weighted_gram_add(count, p, e->block, e->weights, e->scratch, e->gram);
    }
    combine(e->gram, p * p);
    combine(e->rhs, p);
    combine(&sum, 1);
    moe_symmetrize_upper(p, e->gram);
    return sum;
}

/* CM1: the weighted least squares (the ridge as in family_gaussian.c: N ridge sigma^2 on
   the diagonal), then the scale at the new coefficients with the same u. */
static void update_location_scale(t_expert *e, moe_expert_mstep_report *report)
{
    size_t p = e->p;
    double shrink = e->options->ridge * e->options->total_weight * e->scale;
    for (size_t j = (size_t)e->model->intercept; j < p; ++j)
        e->gram[j * p + j] += shrink;
    moe_inputs_restrict_values(p, e->model->expert_inputs, e->gram, e->rhs);
    int ridge_used = 0;
    if (moe_solve_spd(p, e->gram, e->rhs, e->work, &ridge_used) != 0) {
        report->line_search_failures++;
        return;
    }
    report->ridge_fallbacks += (size_t)ridge_used;
    memcpy(e->beta, e->rhs, p * sizeof(double));
    if (!e->options->update_variance)
        return;
    const moe_data *data = e->data;
    size_t R = moe_block_rows_for(data->n);
    double squares = 0.0;
    for (size_t first = 0; first < data->n; first += R) {
        size_t count = data->n - first < R ? data->n - first : R;
        moe_data_load_block(data, first, count, e->block);
        for (size_t i = 0; i < count; ++i) {
            double residual = residual_at(e, e->block + i * p, first + i);
            squares += e->share[first + i] * e->u[first + i] * residual * residual;
        }
    }
    combine(&squares, 1);
    double scale = squares / e->total;
    if (!(scale >= e->options->variance_floor)) {
        scale = e->options->variance_floor;
        report->floored_variances++;
    }
    e->scale = scale;
}

/* The squared residuals at e->beta, for the Newton steps in nu (which keep beta). */
static void squared_residuals(t_expert *e)
{
    const moe_data *data = e->data;
    size_t R = moe_block_rows_for(data->n);
    for (size_t first = 0; first < data->n; first += R) {
        size_t count = data->n - first < R ? data->n - first : R;
        moe_data_load_block(data, first, count, e->block);
        for (size_t i = 0; i < count; ++i) {
            double residual = residual_at(e, e->block + i * e->p, first + i);
            e->squared[first + i] = residual * residual;
        }
    }
}

/*
 * The weighted t log-likelihood at e->beta and e->scale, as a function of t = log nu: its
 * value (minus the ridge penalty), first and second derivatives. From five sums over the
 * rows (a = nu v + e^2): the terms of moe_student_t_row that do not depend on the row
 * (lgamma, digamma, trigamma of nu) are taken once, out of the loop.
 */
static void degrees_terms(t_expert *e, double nu, double terms[3])
{
    double v = e->scale, sum[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (size_t i = 0; i < e->data->n; ++i) {
        double share = e->share[i];
        if (share == 0.0)
            continue;
        double e2 = e->squared[i], a = nu * v + e2, ratio = (e2 - v) / a;
        sum[0] += share;
        sum[1] += share * log1p(e2 / (nu * v));
        sum[2] += share * ratio;
        sum[3] += share * v / a;
        sum[4] += share * v * ratio / a;
    }
    combine(sum, 5);
    double psi = moe_digamma(0.5 * (nu + 1.0)) - moe_digamma(0.5 * nu);
    double psi1 = moe_trigamma(0.5 * (nu + 1.0)) - moe_trigamma(0.5 * nu);
    double value = t_constant(nu, v) * sum[0] - 0.5 * (nu + 1.0) * sum[1];
    double first = 0.5 * (psi * sum[0] - sum[1] + sum[2]);           /* d / d nu */
    double second = 0.25 * psi1 * sum[0] + 0.5 / nu * sum[0] - 0.5 * (sum[3] + sum[4]);
    terms[0] = value - e->options->total_weight * 0.5 * e->options->ridge * ridge_norm(e);
    terms[1] = nu * first;                 /* d / d log nu */
    terms[2] = nu * nu * second + nu * first; /* d^2 / d (log nu)^2 */
}

/*
 * CM2 as ECME's step: nu maximises the weighted t log-likelihood itself at the new
 * coefficients and scale (the ECM root above maximised the complete-data expectation at the
 * old u, and crept: nu of a nearly Gaussian expert rose by a few percent an iteration, so fits
 * met the iteration cap). Newton in log nu, a step clamped to [-2, 2] and halved until the
 * value does not fall (so the cycle stays monotone), to a gain below 1e-12 of the value or
 * MAX_DEGREES_STEPS passes; nu stays within [MOE_DEGREES_MIN, MOE_DEGREES_MAX].
 */
#define MAX_DEGREES_STEPS 12

/* The Newton step in log nu from `at` (within the range), or a unit step uphill where the
   value is not concave there. */
static double degrees_step(double at, const double terms[3])
{
    double step = terms[2] < 0.0 ? -terms[1] / terms[2] : (terms[1] > 0.0 ? 1.0 : -1.0);
    step = fmax(-2.0, fmin(2.0, step));
    return fmax(log(MOE_DEGREES_MIN) - at, fmin(log(MOE_DEGREES_MAX) - at, step));
}

static void maximise_degrees(t_expert *e)
{
    double at = log(e->nu), terms[3], trial[3];
    squared_residuals(e);
    degrees_terms(e, e->nu, terms);
    int passes = 1;
    while (passes < MAX_DEGREES_STEPS && isfinite(terms[0])) {
        double step = degrees_step(at, terms);
        if (!(fabs(step * terms[1]) > 1e-12 * (1.0 + fabs(terms[0]))))
            break;
        int accepted = 0;
        while (!accepted && passes < MAX_DEGREES_STEPS) {
            degrees_terms(e, exp(at + step), trial);
            ++passes;
            accepted = trial[0] >= terms[0]; /* false for NaN */
            if (!accepted)
                step *= 0.5;
        }
        if (!accepted)
            break;
        at += step;
        memcpy(terms, trial, sizeof terms);
    }
    e->nu = fmin(MOE_DEGREES_MAX, fmax(MOE_DEGREES_MIN, exp(at)));
}

/* One cycle: E, CM1 (coefficients and scale at the old nu), then nu by ECME. */
static void ecm_cycle(t_expert *e, moe_expert_mstep_report *report)
{
    scale_weights(e);
    update_location_scale(e, report);
    report->newton_steps++;
    if (e->options->update_degrees)
        maximise_degrees(e);
}

static void free_expert(t_expert *e)
{
    free(e->beta);
    free(e->share);
    free(e->block);
}

static moe_status allocate_expert(t_expert *e, char *message)
{
    size_t p = e->p, n = e->data->n, R = moe_block_rows_for(n);
    e->beta = moe_alloc_array(p, 1, sizeof(double));
    e->share = moe_alloc_array(n, 3, sizeof(double));
    /* block R p, weights R, scratch R p, gram p p, rhs p, work p (p + 1) */
    e->block = moe_alloc_array(2 * R * p + R + p * p + p + p * (p + 1), 1, sizeof(double));
    if (e->beta == NULL || e->share == NULL || e->block == NULL) {
        free_expert(e);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    }
    e->u = e->share + n;
    e->squared = e->u + n;
    e->weights = e->block + R * p;
    e->scratch = e->weights + R;
    e->gram = e->scratch + R * p;
    e->rhs = e->gram + p * p;
    e->work = e->rhs + p;
    return MOE_OK;
}

static moe_status t_m_step(struct moe_model *model, const moe_data *data, const double *resp,
                           const moe_expert_mstep_options *options,
                           moe_expert_mstep_report *report, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    t_expert e = {0};
    e.model = model;
    e.data = data;
    e.options = options;
    e.p = p;
    moe_status status = allocate_expert(&e, message);
    if (status != MOE_OK)
        return status;
    for (size_t k = 0; k < K && status == MOE_OK; ++k) {
        e.total = 0.0;
        for (size_t i = 0; i < data->n; ++i) {
            e.share[i] = moe_data_weight(data, i) * resp[i * K + k];
            e.total += e.share[i];
        }
        combine(&e.total, 1);
        if (!(e.total > options->min_weight)) {
            report->degenerate_experts++;
            continue;
        }
        memcpy(e.beta, model->experts + k * p, p * sizeof(double));
        e.scale = model->variances[k];
        e.nu = model->degrees[k];
        ecm_cycle(&e, report);
        memcpy(model->experts + k * p, e.beta, p * sizeof(double));
        model->variances[k] = e.scale;
        model->degrees[k] = e.nu;
    }
    free_expert(&e);
    return status;
}

/*
 * The mean-scale surrogate's gradient, from the row derivatives of moe_student_t_row (a =
 * nu sigma^2 + e^2): in beta_k -(1/N) sum w r (nu+1) e / a x~ (+ ridge beta_k), in
 * log sigma_k^2 (1/N) sum w r [1 - (nu+1) e^2 / a] / 2, in log nu_k -(1/N) sum w r nu
 * d log f / d nu. Sums over row chunks: K x p coefficients, K log-scales, K log-nu.
 */
typedef struct gradient_pass {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    const double *digammas; /* K: psi((nu+1)/2) - psi(nu/2) */
} gradient_pass;

static size_t gradient_chunk(void *opaque, size_t start, size_t rows, double *sums,
                             double *workspace)
{
    const gradient_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    const moe_data *data = pass->data;
    size_t K = model->n_experts, p = model->n_inputs, R = moe_block_rows_for(rows);
    double *block = workspace, *scaled = block + R * p;
    double *coefficients = sums, *log_scales = sums + K * p, *log_degrees = log_scales + K;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset, count = rows - offset < R ? rows - offset : R;
        moe_data_load_block(data, first, count, block);
        moe_expert_linear(model, count, block, scaled);
        for (size_t i = 0; i < count; ++i) {
            double weight = moe_data_weight(data, first + i);
            const double *r = pass->resp + (first + i) * K;
            for (size_t k = 0; k < K; ++k) {
                double nu = model->degrees[k], v = model->variances[k];
                double e = data->y[first + i] - scaled[i * K + k], e2 = e * e, a = nu * v + e2;
                double share = weight * r[k];
                log_scales[k] += 0.5 * share * (1.0 - (nu + 1.0) * e2 / a);
                log_degrees[k] -= share * 0.5 * nu *
                                  (pass->digammas[k] - log1p(e2 / (nu * v)) + (e2 - v) / a);
                scaled[i * K + k] = -share * (nu + 1.0) * e / a;
            }
        }
        moe_product_atb_add(count, K, p, scaled, block, coefficients);
    }
    return 0;
}

/* One pass for every part; coefficients, log_scales and log_degrees may each be NULL. */
static moe_status t_gradient_parts(const struct moe_model *model, const moe_data *data,
                                   const double *resp, double ridge, double total_weight,
                                   size_t threads, double *coefficients, double *log_scales,
                                   double *log_degrees, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *sums = moe_alloc_array(K * p + 2 * K, 1, sizeof(double));
    double *digammas = moe_alloc_array(K, 1, sizeof(double));
    if (sums == NULL || digammas == NULL) {
        free(sums);
        free(digammas);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert gradient");
    }
    for (size_t k = 0; k < K; ++k)
        digammas[k] = moe_digamma(0.5 * (model->degrees[k] + 1.0)) - moe_digamma(0.5 * model->degrees[k]);
    gradient_pass pass = {model, data, resp, digammas};
    moe_chunk_job job = {data->n, K * p + 2 * K, moe_block_rows_for(data->n) * (p + K),
                         gradient_chunk, &pass};
    size_t ignored = 0;
    moe_status status = moe_run_chunks(&job, threads, sums, &ignored, message);
    double inverse = 1.0 / total_weight;
    for (size_t k = 0; status == MOE_OK && k < K; ++k) {
        for (size_t j = 0; coefficients != NULL && j < p; ++j) {
            double value = sums[k * p + j] * inverse;
            if (j >= (size_t)model->intercept)
                value += ridge * model->experts[k * p + j];
            coefficients[k * p + j] = value;
        }
        if (log_scales != NULL)
            log_scales[k] = sums[K * p + k] * inverse;
        if (log_degrees != NULL)
            log_degrees[k] = sums[K * p + K + k] * inverse;
    }
    free(sums);
    free(digammas);
    return status;
}

static moe_status t_gradient(const struct moe_model *model, const moe_data *data,
                             const double *resp, double ridge, double total_weight,
                             size_t threads, double *coefficients, double *log_variances,
                             char *message)
{
    return t_gradient_parts(model, data, resp, ridge, total_weight, threads, coefficients,
                            log_variances, NULL, message);
}

static moe_status t_degrees_gradient(const struct moe_model *model, const moe_data *data,
                                     const double *resp, double total_weight, size_t threads,
                                     double *log_degrees, char *message)
{
    return t_gradient_parts(model, data, resp, 0.0, total_weight, threads, NULL, NULL,
                            log_degrees, message);
}

/* The coefficient curvature of -log f is (nu+1)/sigma^2 (nu - z)/(nu + z)^2 x x' with
   z = e^2/sigma^2, at most (nu+1)/(nu sigma^2). */
static double t_curvature(const struct moe_model *model)
{
    double largest = 0.0;
    for (size_t k = 0; k < model->n_experts; ++k) {
        double nu = model->degrees[k];
        double value = (nu + 1.0) / (nu * model->variances[k]);
        if (value > largest)
            largest = value;
    }
    return largest;
}

/* The score in beta, v and nu and minus the Hessian (moe_student_t_row). */
static void t_information_terms(const struct moe_model *model, size_t k, size_t rows,
                                const double *columns, const double *linear, const double *y,
                                double *terms)
{
    (void)columns;
    moe_information_shape shape = moe_information_shape_of(model);
    const double *mean = linear + k * rows;
    double *a = terms + shape.a * rows, *b = terms + shape.b * rows;
    double *h = terms + shape.h * rows, *c = terms + shape.c * rows, *d = terms + shape.d * rows;
    for (size_t i = 0; i < rows; ++i) {
        moe_student_t_terms t;
        moe_student_t_row(y[i] - mean[i], model->degrees[k], model->variances[k], &t);
        a[i] = t.score_location;
        b[i] = t.score_scale;
        b[rows + i] = t.score_degrees;
        h[i] = t.location_location;
        c[i] = t.location_scale;
        c[rows + i] = t.location_degrees;
        d[i] = t.scale_scale;
        d[rows + i] = t.scale_degrees;
        d[2 * rows + i] = t.degrees_degrees;
    }
}

static double t_inverse_link(const struct moe_model *model, double eta)
{
    (void)model;
    return eta;
}

/* The search's starts beyond partitions (family.h): the normal (nu at the top of its range),
   and the heavy tail (nu = 1, Cauchy) on one expert with the others normal. */
#define HEAVY_TAIL_DEGREES 1.0

static void t_nested_start(struct moe_model *model)
{
    for (size_t k = 0; k < model->n_experts; ++k)
        model->degrees[k] = MOE_DEGREES_MAX;
}

static int t_start_variant(struct moe_model *model, size_t variant)
{
    if (variant >= model->n_experts)
        return 0;
    t_nested_start(model);
    model->degrees[variant] = HEAVY_TAIL_DEGREES;
    return 1;
}

const struct moe_family_ops moe_family_student_t = {
    .id = MOE_FAMILY_STUDENT_T,
    .name = "t",
    .description = "y real: regression with Student-t noise, robust to outliers",
    .alias = "student_t",
    .uses_classes = 0,
    .has_variance = 1,
    .has_degrees = 1,
    .default_degrees = MOE_DEGREES_DEFAULT,
    .numeric_response = 1,
    .scale_kind = MOE_SCALE_STUDENT,
    .information_terms = t_information_terms,
    .inverse_link = t_inverse_link,
    .supports_link = t_supports_link,
    .expert_free_params = t_expert_free_params,
    .normalize_experts = NULL,
    .check_response = t_check_response,
    .log_density = t_log_density_block,
    .prediction_width = t_prediction_width,
    .predict = t_predict,
    .m_step = t_m_step,
    .statistics_size = NULL,
    .accumulate_statistics = NULL,
    .normal_parts = NULL,
    .accumulate_normal_statistics = NULL,
    .solve_statistics = NULL,
    .gradient = t_gradient,
    .degrees_gradient = t_degrees_gradient,
    .curvature = t_curvature,
    .nested_family = MOE_FAMILY_GAUSSIAN,
    .nested_start = t_nested_start,
    .start_variant = t_start_variant,
};
