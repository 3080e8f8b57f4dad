/*
 * Binomial experts with the logit link: y successes out of n trials (the feature the
 * spec names trials_feature, else one trial a row), P(success | x, expert k) = sigma(eta),
 * eta = beta_k' x~:
 *   log f_k(y | x) = log C(n, y) + y log sigma(eta) + (n - y) log sigma(-eta),
 * the constant log C(n, y) included, as R's dbinom has it, so that log-likelihoods compare
 * with glm's and flexmix's. A row of zero trials has f = 1 under every expert: it
 * contributes nothing. Each expert's M-step is a weighted binomial regression by the GLM
 * engine (families/glm_expert.h): the row loss -(y log sigma + (n - y) log sigma(-eta)) is
 * convex, its curvature n sigma (1 - sigma) <= n / 4.
 */
#include "families/family_categorical.h"
#include "families/glm_expert.h"
#include "common/combine.h"
#include "common/error.h"
#include "common/linalg.h"

#include <float.h>
#include <math.h>

/* Counts above 2^53 are not all representable: integrality means nothing there. */
#define LARGEST_COUNT 9007199254740992.0

static double trials_of(const struct moe_model *model, const double *x)
{
    return model->trials_input < model->n_inputs ? x[model->trials_input] : 1.0;
}

static int binomial_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY; /* the logit link is part of the family */
}

static size_t binomial_expert_free_params(const struct moe_model *model)
{
    return moe_expert_free_inputs(model);
}

static int is_count(double value)
{
    return value >= 0.0 && value <= LARGEST_COUNT && value == floor(value);
}

static moe_status binomial_check_response(const struct moe_model *model, size_t n,
                                          const double *X, size_t ldx, const double *y,
                                          char *message)
{
    size_t column = model->intercept ? model->trials_input - 1 : model->trials_input;
    int with_trials = model->trials_input < model->n_inputs;
    for (size_t i = 0; i < n; ++i) {
        double trials = with_trials ? X[i * ldx + column] : 1.0;
        if (with_trials && !is_count(trials))
            return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                            "row %zu, trials (feature %zu): %g is not a count: binomial "
                            "experts need whole numbers of trials in {0, 1, ..., 2^53}",
                            i, column, trials);
        if (isnan(y[i]))
            return moe_fail(message, MOE_ERR_NON_FINITE,
                            "row %zu, response: the value is NaN: binomial experts need "
                            "counts of successes", i);
        if (!is_count(y[i]) || y[i] > trials)
            return moe_fail(message, MOE_ERR_INVALID_LABEL,
                            "row %zu, response: %g is not a count of successes among %g "
                            "trial%s: binomial experts need whole numbers in {0, ..., trials}",
                            i, y[i], trials, trials == 1.0 ? "" : "s");
    }
    return MOE_OK;
}

/* y log sigma(eta) + (n - y) log sigma(-eta), each term left out when its count is zero
   (0 times an underflowed log would be NaN). */
static double log_kernel(double trials, double y, double eta)
{
    double value = 0.0;
    if (y > 0.0)
        value += y * moe_log_sigmoid(eta);
    if (trials - y > 0.0)
        value += (trials - y) * moe_log_sigmoid(-eta);
    return value;
}

static double log_choose(double trials, double y)
{
    return lgamma(trials + 1.0) - lgamma(y + 1.0) - lgamma(trials - y + 1.0);
}

static void binomial_log_density(const struct moe_model *model, size_t rows,
                                 const double *columns, const double *linear, const double *y,
                                 double *out, double *scratch)
{
    size_t K = model->n_experts;
    int with_trials = model->trials_input < model->n_inputs;
    const double *trials = with_trials ? columns + model->trials_input * rows : NULL;
    for (size_t i = 0; i < rows; ++i)
        scratch[i] = with_trials ? log_choose(trials[i], y[i]) : 0.0;
    for (size_t k = 0; k < K; ++k)
        for (size_t i = 0; i < rows; ++i)
            out[k * rows + i] = scratch[i] + log_kernel(with_trials ? trials[i] : 1.0, y[i],
                                                        linear[k * rows + i]);
}

/* With n trials and success probability m: the score (y - n m) x~ and minus the Hessian
   n m (1 - m) x~ x~'. */
static void binomial_information_terms(const struct moe_model *model, size_t k, size_t rows,
                                       const double *columns, const double *linear,
                                       const double *y, double *terms)
{
    moe_information_shape shape = moe_information_shape_of(model);
    const double *eta = linear + k * rows;
    const double *trials =
        model->trials_input < model->n_inputs ? columns + model->trials_input * rows : NULL;
    double *a = terms + shape.a * rows, *h = terms + shape.h * rows;
    for (size_t i = 0; i < rows; ++i) {
        double count = trials != NULL ? trials[i] : 1.0;
        double probability = exp(moe_log_sigmoid(eta[i]));
        a[i] = y[i] - count * probability;
        h[i] = count * probability * (1.0 - probability);
    }
}

static size_t binomial_prediction_width(const struct moe_model *model)
{
    (void)model;
    return 1;
}

/* The success probability sum_k pi_k(x) sigma(beta_k' x~). */
static void binomial_predict(const struct moe_model *model, size_t rows, const double *block,
                             const double *gate_proba, double *out, double *scratch)
{
    moe_expert_mixture_mean(model, rows, block, gate_proba, moe_log_sigmoid, out, scratch);
}

static double binomial_inverse_link(const struct moe_model *model, double eta)
{
    (void)model;
    return exp(moe_log_sigmoid(eta));
}

/* ---- The GLM engine's callbacks ---------------------------------------------------------- */

static void binomial_row(const struct moe_model *model, size_t k, const double *x, double y,
                         double eta, moe_glm_row *out)
{
    (void)k;
    double trials = trials_of(model, x), probability = exp(moe_log_sigmoid(eta));
    out->loss = -log_kernel(trials, y, eta);
    out->slope = trials * probability - y;
    out->curvature = trials * probability * (1.0 - probability);
}

/* Weighted successes and trials of expert k: [successes, trials]. */
static void expert_totals(const moe_glm_expert *s, double totals[2], char *message)
{
    size_t K = s->model->n_experts;
    int with_trials = s->model->trials_input < s->p;
    totals[0] = totals[1] = 0.0;
    for (size_t i = 0; i < s->data->n; ++i) {
        double share = moe_data_weight(s->data, i) * s->resp[i * K + s->k];
        double trials =
            with_trials ? moe_data_design_value(s->data, i, s->model->trials_input) : 1.0;
        totals[0] += share * s->data->y[i];
        totals[1] += share * trials;
    }
    moe_combine_sums(totals, 2, message);
}

/* The constant success probability, the pooled proportion: the free slopes at zero, the
   intercept its logit. 0 when there is no free intercept or the proportion is 0 or 1. */
static int constant_probability_start(moe_glm_expert *s, char *message)
{
    const struct moe_model *model = s->model;
    if (!model->intercept || !moe_input_free(model->expert_inputs, 0))
        return 0;
    double totals[2];
    expert_totals(s, totals, message);
    if (!(totals[0] > 0.0 && totals[0] < totals[1]))
        return 0;
    for (size_t a = 0; a < s->p; ++a)
        s->beta[a] = moe_input_free(model->expert_inputs, a)
                         ? 0.0
                         : moe_input_held_value(model->expert_inputs, a);
    s->beta[0] = log(totals[0]) - log(totals[1] - totals[0]);
    return isfinite(s->beta[0]);
}

/* Every success or every failure under the expert, with no penalty: the probability's
   optimum is 0 or 1, the intercept's at infinity. */
static int all_one_outcome(const moe_glm_expert *s)
{
    if (s->options->ridge != 0.0)
        return 0;
    double totals[2];
    char ignored[MOE_MESSAGE_SIZE]; /* a failed request fails the fit's next one */
    expert_totals(s, totals, ignored);
    return totals[0] <= 1e-9 * totals[1] || totals[1] - totals[0] <= 1e-9 * totals[1];
}

static const moe_glm_family binomial_glm = {
    binomial_row, constant_probability_start, all_one_outcome,
    "its log-likelihood overflows at the coefficients the M-step starts from; the fit has "
    "diverged",
    "a linear predictor exceeds the doubles' range"};

static moe_status binomial_m_step(struct moe_model *model, const moe_data *data,
                                  const double *resp, const moe_expert_mstep_options *options,
                                  moe_expert_mstep_report *report, char *message)
{
    return moe_glm_m_step(&binomial_glm, model, data, resp, options, report, message);
}

static moe_status binomial_gradient(const struct moe_model *model, const moe_data *data,
                                    const double *resp, double ridge, double total_weight,
                                    size_t threads, double *coefficients,
                                    double *log_variances, char *message)
{
    (void)log_variances;
    return moe_glm_gradient(&binomial_glm, model, data, resp, ridge, total_weight, threads,
                            coefficients, message);
}

/* 1/4 per trial (the logistic bound). */
static double binomial_curvature(const struct moe_model *model)
{
    (void)model;
    return 0.25;
}

/* 1/4 of the largest number of trials. */
static double binomial_data_curvature(const struct moe_model *model, const moe_data *data)
{
    if (model->trials_input >= model->n_inputs)
        return 0.25;
    double largest = 0.0;
    for (size_t i = 0; i < data->n; ++i) {
        double trials = moe_data_design_value(data, i, model->trials_input);
        if (trials > largest)
            largest = trials;
    }
    return largest > 0.0 ? 0.25 * largest : DBL_MIN;
}

const struct moe_family_ops moe_family_binomial = {
    .id = MOE_FAMILY_BINOMIAL,
    .name = "binomial",
    .description = "successes out of trials (a column): binomial regression, logit link",
    .numeric_response = 0,
    .takes_trials = 1,
    .scale_kind = MOE_SCALE_NONE,
    .supports_link = binomial_supports_link,
    .expert_free_params = binomial_expert_free_params,
    .check_response = binomial_check_response,
    .log_density = binomial_log_density,
    .information_terms = binomial_information_terms,
    .inverse_link = binomial_inverse_link,
    .prediction_width = binomial_prediction_width,
    .predict = binomial_predict,
    .m_step = binomial_m_step,
    .gradient = binomial_gradient,
    .curvature = binomial_curvature,
    .data_curvature = binomial_data_curvature,
};
