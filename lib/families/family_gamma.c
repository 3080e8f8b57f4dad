/*
 * Gamma experts with the log link: y > 0, mean mu = exp(eta), eta = beta_k' x~, shape
 * alpha_k (model->degrees, where t experts keep nu), variance mu^2 / alpha_k:
 *   log f_k(y | x) = alpha log alpha - alpha eta + (alpha - 1) log y - alpha y / mu
 *                    - lgamma(alpha).
 * The M-step is one ECM cycle per expert: the coefficients by the GLM engine
 * (families/glm_expert.h) at the current shape, the row loss alpha (eta + y e^-eta) convex with
 * curvature alpha y / mu (the observed one, so Newton's steps are exact); then the shape by
 * maximum likelihood given them (not flexmix's moment estimate), the root of
 *   log alpha - psi(alpha) = sum s (y/mu - log(y/mu) - 1) / sum s,
 * which exists and is unique when the right side is positive (Jensen: it is >= 0, zero
 * only for a perfect fit, whose shape is the range's top). Each half maximises the
 * objective over its own parameters, so the cycle never lowers it. gem and gd step log
 * alpha with the rest (gamma_degrees_gradient).
 */
#include "families/glm_expert.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "common/special.h"

#include <math.h>
#include <stdlib.h>

static int gamma_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY; /* the log link is part of the family */
}

static size_t gamma_expert_free_params(const struct moe_model *model)
{
    return moe_expert_free_inputs(model) + 1;
}

static moe_status gamma_check_response(const struct moe_model *model, size_t n,
                                       const double *X, size_t ldx, const double *y,
                                       char *message)
{
    (void)model;
    (void)X;
    (void)ldx;
    for (size_t i = 0; i < n; ++i)
        if (!(y[i] > 0.0))
            return moe_fail(message, isnan(y[i]) ? MOE_ERR_NON_FINITE : MOE_ERR_INVALID_LABEL,
                            "row %zu, response: %g is not positive: gamma experts need "
                            "responses above 0",
                            i, y[i]);
    return MOE_OK;
}

static double gamma_log_f(double alpha, double eta, double y, double log_y)
{
    return alpha * log(alpha) - alpha * eta + (alpha - 1.0) * log_y - alpha * y * exp(-eta) -
           lgamma(alpha);
}

static void gamma_log_density(const struct moe_model *model, size_t rows, const double *columns,
                              const double *linear, const double *y, double *out,
                              double *scratch)
{
    (void)columns;
    size_t K = model->n_experts;
    for (size_t i = 0; i < rows; ++i)
        scratch[i] = log(y[i]);
    for (size_t k = 0; k < K; ++k)
        for (size_t i = 0; i < rows; ++i)
            out[k * rows + i] =
                gamma_log_f(model->degrees[k], linear[k * rows + i], y[i], scratch[i]);
}

/* With ratio = y / mu and shape alpha: the score alpha (ratio - 1) x~ and
   log alpha + 1 - eta + log y - ratio - digamma(alpha); minus the Hessian alpha ratio x~ x~',
   (1 - ratio) x~ and trigamma(alpha) - 1 / alpha. */
static void gamma_information_terms(const struct moe_model *model, size_t k, size_t rows,
                                    const double *columns, const double *linear,
                                    const double *y, double *terms)
{
    (void)columns;
    moe_information_shape shape = moe_information_shape_of(model);
    const double *eta = linear + k * rows;
    double alpha = model->degrees[k];
    double constant = log(alpha) + 1.0 - moe_digamma(alpha);
    double curvature = moe_trigamma(alpha) - 1.0 / alpha;
    double *a = terms + shape.a * rows, *b = terms + shape.b * rows;
    double *h = terms + shape.h * rows, *c = terms + shape.c * rows, *d = terms + shape.d * rows;
    for (size_t i = 0; i < rows; ++i) {
        double ratio = y[i] * exp(-eta[i]);
        a[i] = alpha * (ratio - 1.0);
        b[i] = constant - eta[i] + log(y[i]) - ratio;
        h[i] = alpha * ratio;
        c[i] = 1.0 - ratio;
        d[i] = curvature;
    }
}

static size_t gamma_prediction_width(const struct moe_model *model)
{
    (void)model;
    return 1;
}

static double log_mean(double eta)
{
    return eta; /* the log link */
}

/* E[y | x] = sum_k pi_k(x) exp(beta_k' x~) */
static void gamma_predict(const struct moe_model *model, size_t rows, const double *block,
                          const double *gate_proba, double *out, double *scratch)
{
    moe_expert_mixture_mean(model, rows, block, gate_proba, log_mean, out, scratch);
}

static double gamma_inverse_link(const struct moe_model *model, double eta)
{
    (void)model;
    return exp(eta);
}

/* ---- The M-step ---------------------------------------------------------------------------- */

static void gamma_row(const struct moe_model *model, size_t k, const double *x, double y,
                      double eta, moe_glm_row *out)
{
    (void)x;
    double alpha = model->degrees[k], ratio = y * exp(-eta);
    out->loss = alpha * (eta + ratio);
    out->slope = alpha * (1.0 - ratio);
    out->curvature = alpha * ratio;
}

static const moe_glm_family gamma_glm = {
    gamma_row, NULL, NULL,
    "its mean's inverse overflows (a linear predictor below -709) at the coefficients the "
    "M-step starts from; the fit has diverged",
    "a response over its mean exceeds the doubles' range"};

typedef struct shape_pass {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
} shape_pass;

/* Per expert: [sum s, sum s (y/mu - log(y/mu) - 1)]. */
static size_t shape_chunk(void *opaque, size_t start, size_t rows, double *sums,
                          double *workspace)
{
    const shape_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    size_t K = model->n_experts, p = model->n_inputs;
    for (size_t i = start; i < start + rows; ++i) {
        moe_data_load_block(pass->data, i, 1, workspace);
        double weight = moe_data_weight(pass->data, i), y = pass->data->y[i];
        for (size_t k = 0; k < K; ++k) {
            double share = weight * pass->resp[i * K + k];
            if (share == 0.0)
                continue;
            double eta = moe_dot(p, workspace, model->experts + k * p);
            double ratio = y * exp(-eta);
            sums[2 * k] += share;
            sums[2 * k + 1] += share * (ratio - (log(y) - eta) - 1.0);
        }
    }
    return 0;
}

/* Every expert's shape by maximum likelihood at its coefficients. */
static moe_status update_shapes(struct moe_model *model, const moe_data *data,
                                const double *resp, const moe_expert_mstep_options *options,
                                char *message)
{
    size_t K = model->n_experts;
    double *sums = moe_alloc_array(2 * K, 1, sizeof(double));
    if (sums == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the shapes' sums");
    shape_pass pass = {model, data, resp};
    moe_chunk_job job = {data->n, 2 * K, model->n_inputs + 1, shape_chunk, &pass};
    size_t failed = 0;
    moe_status status = moe_run_chunks(&job, options->threads, sums, &failed, message);
    for (size_t k = 0; status == MOE_OK && k < K; ++k) {
        if (!(sums[2 * k] > options->min_weight))
            continue;
        double spread = sums[2 * k + 1] / sums[2 * k];
        if (!isfinite(spread))
            continue; /* a mean that overflowed: the coefficients' step already failed */
        model->degrees[k] =
            spread > 0.0 ? moe_log_minus_digamma_root(1.0, -spread, MOE_DEGREES_MIN,
                                                      MOE_DEGREES_MAX)
                         : MOE_DEGREES_MAX;
    }
    free(sums);
    return status;
}

static moe_status gamma_m_step(struct moe_model *model, const moe_data *data,
                               const double *resp, const moe_expert_mstep_options *options,
                               moe_expert_mstep_report *report, char *message)
{
    moe_status status = moe_glm_m_step(&gamma_glm, model, data, resp, options, report, message);
    if (status == MOE_OK && options->update_degrees)
        status = update_shapes(model, data, resp, options, message);
    return status;
}

static moe_status gamma_gradient(const struct moe_model *model, const moe_data *data,
                                 const double *resp, double ridge, double total_weight,
                                 size_t threads, double *coefficients, double *log_variances,
                                 char *message)
{
    (void)log_variances;
    return moe_glm_gradient(&gamma_glm, model, data, resp, ridge, total_weight, threads,
                            coefficients, message);
}

/* Per expert: sum s alpha (log alpha + 1 - psi(alpha) + log(y/mu) - y/mu), the derivative
   of the summed log f in log alpha. */
static size_t shape_gradient_chunk(void *opaque, size_t start, size_t rows, double *sums,
                                   double *workspace)
{
    const shape_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    size_t K = model->n_experts, p = model->n_inputs;
    for (size_t i = start; i < start + rows; ++i) {
        moe_data_load_block(pass->data, i, 1, workspace);
        double weight = moe_data_weight(pass->data, i), y = pass->data->y[i];
        for (size_t k = 0; k < K; ++k) {
            double share = weight * pass->resp[i * K + k];
            if (share == 0.0)
                continue;
            double alpha = model->degrees[k];
            double eta = moe_dot(p, workspace, model->experts + k * p), ratio = y * exp(-eta);
            sums[k] += share * alpha *
                       (log(alpha) + 1.0 - moe_digamma(alpha) + log(y) - eta - ratio);
        }
    }
    return 0;
}

static moe_status gamma_degrees_gradient(const struct moe_model *model, const moe_data *data,
                                         const double *resp, double total_weight,
                                         size_t threads, double *log_degrees, char *message)
{
    size_t K = model->n_experts;
    shape_pass pass = {model, data, resp};
    moe_chunk_job job = {data->n, K, model->n_inputs + 1, shape_gradient_chunk, &pass};
    size_t failed = 0;
    moe_status status = moe_run_chunks(&job, threads, log_degrees, &failed, message);
    for (size_t k = 0; status == MOE_OK && k < K; ++k) {
        log_degrees[k] = -log_degrees[k] / total_weight;
        if (!isfinite(log_degrees[k]))
            status = moe_fail(message, MOE_ERR_NUMERICAL,
                              "the gamma experts' shape gradient is not finite");
    }
    return status;
}

/* Without data no bound exists (the curvature alpha y / mu grows as the mean falls below
   the responses); data_curvature gives the one the safe steps use. */
static double gamma_curvature(const struct moe_model *model)
{
    (void)model;
    return 1.0;
}

static double gamma_data_curvature(const struct moe_model *model, const moe_data *data)
{
    return moe_glm_data_curvature(&gamma_glm, model, data);
}

const struct moe_family_ops moe_family_gamma = {
    .id = MOE_FAMILY_GAMMA,
    .name = "gamma",
    .description = "y > 0: Gamma regression, log link, a shape per expert",
    .has_degrees = 1,
    .default_degrees = 1.0,
    .numeric_response = 1,
    .scale_kind = MOE_SCALE_SHAPE,
    .supports_link = gamma_supports_link,
    .expert_free_params = gamma_expert_free_params,
    .check_response = gamma_check_response,
    .log_density = gamma_log_density,
    .information_terms = gamma_information_terms,
    .inverse_link = gamma_inverse_link,
    .prediction_width = gamma_prediction_width,
    .predict = gamma_predict,
    .m_step = gamma_m_step,
    .gradient = gamma_gradient,
    .degrees_gradient = gamma_degrees_gradient,
    .curvature = gamma_curvature,
    .data_curvature = gamma_data_curvature,
};
