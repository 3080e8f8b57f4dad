/*
 * Poisson experts with the log link: y in {0, 1, 2, ...},
 *   log f_k(y | x) = y eta - exp(eta) - log y!,   eta = beta_k' x~,  E[y | x, k] = exp(eta).
 * One stored row per expert, no variance. Each expert's M-step is a weighted Poisson
 * regression by the GLM engine (families/glm_expert.h) with the row loss exp(eta) - y eta,
 * convex, its curvature exp(eta).
 */
#include "model/family.h"
#include "families/glm_expert.h"
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
                                         const double *X, size_t ldx, const double *y,
                                         char *message)
{
    (void)X;
    (void)ldx;
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

static void poisson_log_density(const struct moe_model *model, size_t rows,
    const double *columns, const double *linear,
                                const double *y, double *out, double *scratch)
{
    (void)columns;
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

/* ---- The row loss and the GLM engine's callbacks ------------------------------------------ */

static void poisson_row(const struct moe_model *model, size_t k, const double *x, double y,
                        double eta, moe_glm_row *out)
{
    (void)model;
    (void)k;
    (void)x;
    double mu = moe_exp(eta);
    /* y = 0 would make 0 * (-inf) of an underflowed rate: its term is just mu. */
    out->loss = mu - (y == 0.0 ? 0.0 : y * eta);
    out->slope = mu - y;
    out->curvature = mu;
}

/*
 * The start a GLM fit takes (a constant rate, the weighted mean count): the free slopes at
 * zero, the held coefficients at their values, the intercept solving its own equation,
 * log(sum s y / sum s exp(eta without it)). Into s->beta; 0 when there is none (no free
 * intercept, or no counts).
 */
static int constant_rate_start(moe_glm_expert *s, char *message)
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
    if (!(counts > 0.0) || moe_glm_evaluate(s, 1, &failed, &objective, message) != MOE_OK)
        return 0;
    /* the intercept's gradient, mean scale: (sum s mu - sum s y) / N */
    double rates = s->sums[1] * s->options->total_weight + counts;
    s->beta[0] = log(counts) - log(rates);
    return rates > 0.0 && isfinite(s->beta[0]);
}

/* Weighted counts of zero under the expert with no penalty: the rate's optimum is 0, the
   intercept's at minus infinity. */
static int expert_without_counts(const moe_glm_expert *s)
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

static const moe_glm_family poisson_glm = {
    poisson_row, constant_rate_start, expert_without_counts,
    "its expected counts overflow (a linear predictor above 709) at the coefficients the "
    "M-step starts from; the fit has diverged",
    "an expected count exceeds the doubles' range"};

static moe_status poisson_m_step(struct moe_model *model, const moe_data *data, const double *resp,
                                 const moe_expert_mstep_options *options,
                                 moe_expert_mstep_report *report, char *message)
{
    return moe_glm_m_step(&poisson_glm, model, data, resp, options, report, message);
}

static moe_status poisson_gradient(const struct moe_model *model, const moe_data *data,
                                   const double *resp, double ridge, double total_weight,
                                   size_t threads, double *coefficients, double *log_variances,
                                   char *message)
{
    (void)log_variances;
    return moe_glm_gradient(&poisson_glm, model, data, resp, ridge, total_weight, threads,
                            coefficients, message);
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
    return moe_glm_data_curvature(&poisson_glm, model, data);
}

/* The score (y - mu) x~ and minus the Hessian mu x~ x~'. */
static void poisson_information_terms(const struct moe_model *model, size_t k, size_t rows,
                                      const double *columns, const double *linear,
                                      const double *y, double *terms)
{
    (void)columns;
    moe_information_shape shape = moe_information_shape_of(model);
    const double *eta = linear + k * rows;
    double *a = terms + shape.a * rows, *h = terms + shape.h * rows;
    for (size_t i = 0; i < rows; ++i) {
        double mu = moe_exp(eta[i]);
        a[i] = y[i] - mu;
        h[i] = mu;
    }
}

static double poisson_inverse_link(const struct moe_model *model, double eta)
{
    (void)model;
    return exp(eta);
}

const struct moe_family_ops moe_family_poisson = {
    .id = MOE_FAMILY_POISSON,
    .name = "poisson",
    .description = "counts: Poisson regression, log link (an offset for exposure)",
    .uses_classes = 0,
    .has_variance = 0,
    .numeric_response = 1,
    .supports_link = poisson_supports_link,
    .information_terms = poisson_information_terms,
    .inverse_link = poisson_inverse_link,
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
