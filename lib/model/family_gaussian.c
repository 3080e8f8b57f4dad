/*
 * Gaussian regression experts: y | x, expert k ~ N(beta_k' x~, sigma_k^2).
 * The M-step is weighted least squares per expert followed by the weighted
 * residual variance, both exact maximisers of the EM surrogate. With a ridge
 * penalty the two are a conditional maximisation (ECM): the coefficients at
 * the current variance, then the variance at the new coefficients, so the
 * penalised surrogate still never decreases.
 */
#include "model/family.h"
#include "common/alloc.h"
#include "common/linalg.h"
#include "common/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double log_two_pi = 1.8378770664093454835606594728112;

static int gaussian_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY;
}

static size_t gaussian_expert_free_params(const struct moe_model *model)
{
    return model->n_inputs + 1; /* coefficients and the variance */
}

static moe_status gaussian_check_response(const struct moe_model *model, size_t n,
                                          const double *y, char *message)
{
    (void)model;
    (void)n;
    (void)y;
    (void)message;
    return MOE_OK; /* any finite value; finiteness is checked for every family */
}

static void gaussian_log_density(const struct moe_model *model, size_t rows, const double *means,
                                 const double *y, double *out, double *scratch)
{
    (void)scratch;
    size_t K = model->n_experts;
    for (size_t k = 0; k < K; ++k) {
        double variance = model->variances[k];
        double constant = -0.5 * (log_two_pi + log(variance));
        double inverse = 1.0 / variance;
        for (size_t i = 0; i < rows; ++i) {
            double residual = y[i] - means[i * K + k];
            out[i * K + k] = constant - 0.5 * residual * residual * inverse;
        }
    }
}

static size_t gaussian_prediction_width(const struct moe_model *model)
{
    (void)model;
    return 1;
}

static void gaussian_predict(const struct moe_model *model, size_t rows, const double *block,
                             const double *gate_proba, double *out, double *scratch)
{
    size_t K = model->n_experts;
    moe_expert_linear(model, rows, block, scratch);
    for (size_t i = 0; i < rows; ++i)
        out[i] = moe_dot(K, gate_proba + i * K, scratch + i * K);
}

/*
 * Sufficient statistics of the M-step, per expert k, with the residuals e = y - x'beta_k at
 * the current coefficients: the weighted Gram matrix G_k (upper triangle), rhs_k =
 * sum w r x e, the total weight and sum w r e^2. The update is then beta + delta with
 * (G + shrink) delta = rhs - shrink beta, and the new residual sum of squares follows
 * without a second pass (see gaussian_solve_statistics).
 * Layout: K grams (p x p), K rhs (p), K totals, K squares.
 */
static size_t gaussian_statistics_size(const struct moe_model *model)
{
    size_t K = model->n_experts, p = model->n_inputs;
    return K * (p * p + p + 2);
}

static void gaussian_accumulate_statistics(const struct moe_model *model, size_t rows,
                                           const double *block, const double *y,
                                           const double *weights, const double *means,
                                           double *work, double *statistics)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *grams = statistics, *rhs = grams + K * p * p, *totals = rhs + K * p;
    double *squares = totals + K;
    double *scaled = work, *scratch = work + rows * K; /* w r e, rows x K */
    for (size_t i = 0; i < rows; ++i)
        for (size_t k = 0; k < K; ++k) {
            double weight = weights[i * K + k], residual = y[i] - means[i * K + k];
            totals[k] += weight;
            squares[k] += weight * residual * residual;
            scaled[i * K + k] = weight * residual;
        }
    moe_weighted_grams_add(rows, p, K, block, weights, scratch, grams);
    moe_product_atb_add(rows, K, p, scaled, block, rhs);
}

typedef struct gaussian_pass {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    int residuals_only; /* sum w r e^2 at the model's coefficients into the squares slots */
} gaussian_pass;

static size_t gaussian_chunk(void *opaque, size_t start, size_t rows, double *statistics,
                             double *workspace)
{
    const gaussian_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    const moe_data *data = pass->data;
    size_t K = model->n_experts, p = model->n_inputs;
    double *block = workspace, *means = block + MOE_BLOCK_ROWS * p;
    double *weights = means + MOE_BLOCK_ROWS * K, *work = weights + MOE_BLOCK_ROWS * K;
    double *squares = statistics + K * (p * p + p + 1);
    for (size_t offset = 0; offset < rows; offset += MOE_BLOCK_ROWS) {
        size_t first = start + offset;
        size_t count = rows - offset < MOE_BLOCK_ROWS ? rows - offset : MOE_BLOCK_ROWS;
        moe_data_load_block(data, first, count, block);
        moe_expert_linear(model, count, block, means);
        for (size_t i = 0; i < count; ++i) {
            double weight = moe_data_weight(data, first + i);
            for (size_t k = 0; k < K; ++k)
                weights[i * K + k] = weight * pass->resp[(first + i) * K + k];
        }
        if (!pass->residuals_only) {
            gaussian_accumulate_statistics(model, count, block, data->y + first, weights, means,
                                           work, statistics);
            continue;
        }
        for (size_t i = 0; i < count; ++i)
            for (size_t k = 0; k < K; ++k) {
                double residual = data->y[first + i] - means[i * K + k];
                squares[k] += weights[i * K + k] * residual * residual;
            }
    }
    return 0;
}

static moe_status gaussian_run(const struct moe_model *model, const moe_data *data,
                               const double *resp, int residuals_only, size_t threads,
                               double *statistics, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    gaussian_pass pass = {model, data, resp, residuals_only};
    moe_chunk_job job = {data->n, gaussian_statistics_size(model),
                         MOE_BLOCK_ROWS * (p + 2 * K) +
                             moe_family_statistics_work(model, MOE_BLOCK_ROWS),
                         gaussian_chunk, &pass};
    size_t ignored = 0;
    return moe_run_chunks(&job, threads, statistics, &ignored, message);
}

/* Below this share of the old residual sum of squares, the one-pass value of the new one is
   mostly rounding error of the subtraction, and the residuals are summed again. */
#define CANCELLATION_SHARE 1e-6

static moe_status gaussian_solve_statistics(struct moe_model *model, const moe_data *data,
                                            const double *resp, double *statistics,
                                            const moe_expert_mstep_options *options,
                                            moe_expert_mstep_report *report, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *grams = statistics, *rhs = grams + K * p * p, *totals = rhs + K * p;
    double *squares = totals + K;
    double *work = moe_alloc_array(p + 2, p + 1, sizeof(double));
    double *rss = moe_alloc_array(K, 1, sizeof(double));
    unsigned char *active = calloc(K, 1);
    if (work == NULL || rss == NULL || active == NULL) {
        free(work);
        free(rss);
        free(active);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    }
    double *delta = work + p * (p + 1);
    int second_pass = 0;
    for (size_t k = 0; k < K; ++k) {
        if (!(totals[k] > options->min_weight)) {
            report->degenerate_experts++;
            continue;
        }
        double *gram = grams + k * p * p, *beta = model->experts + k * p;
        moe_symmetrize_upper(p, gram);
        /* Penalty N*ridge/2 ||beta||^2 against RSS / (2 sigma^2): in the normal equations
           it is N * ridge * sigma^2 on the diagonal. */
        double shrink = options->ridge * options->total_weight * model->variances[k];
        for (size_t j = 0; j < p; ++j)
            delta[j] = rhs[k * p + j] - (j >= (size_t)model->intercept ? shrink * beta[j] : 0.0);
        for (size_t j = (size_t)model->intercept; j < p; ++j)
            gram[j * p + j] += shrink;
        int ridge_used = 0;
        if (moe_solve_spd(p, gram, delta, work, &ridge_used) != 0) {
            report->degenerate_experts++;
            continue;
        }
        if (ridge_used)
            report->ridge_fallbacks++;
        for (size_t j = (size_t)model->intercept; j < p; ++j)
            gram[j * p + j] -= shrink;
        /* sum w r (e - x'delta)^2 = sum w r e^2 - 2 delta'rhs + delta'G delta */
        double quadratic = 0.0;
        for (size_t a = 0; a < p; ++a)
            quadratic += delta[a] * moe_dot(p, gram + a * p, delta);
        rss[k] = squares[k] - 2.0 * moe_dot(p, delta, rhs + k * p) + quadratic;
        if (!(rss[k] > CANCELLATION_SHARE * squares[k]))
            second_pass = 1;
        for (size_t j = 0; j < p; ++j)
            beta[j] += delta[j];
        active[k] = 1;
    }
    moe_status status = MOE_OK;
    if (options->update_variance && second_pass) {
        size_t size = gaussian_statistics_size(model);
        double *again = moe_alloc_array(size, 1, sizeof(double));
        status = again == NULL
                     ? moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step")
                     : gaussian_run(model, data, resp, 1, options->threads, again, message);
        for (size_t k = 0; status == MOE_OK && k < K; ++k)
            rss[k] = again[size - K + k];
        free(again);
    }
    for (size_t k = 0; status == MOE_OK && options->update_variance && k < K; ++k) {
        if (!active[k])
            continue;
        double variance = rss[k] / totals[k];
        if (!(variance >= options->variance_floor)) {
            variance = options->variance_floor;
            report->floored_variances++;
        }
        model->variances[k] = variance;
    }
    free(work);
    free(rss);
    free(active);
    return status;
}

static moe_status gaussian_m_step(struct moe_model *model, const moe_data *data,
                                  const double *resp, const moe_expert_mstep_options *options,
                                  moe_expert_mstep_report *report, char *message)
{
    double *statistics = moe_alloc_array(gaussian_statistics_size(model), 1, sizeof(double));
    if (statistics == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    moe_status status =
        gaussian_run(model, data, resp, 0, options->threads, statistics, message);
    if (status == MOE_OK)
        status = gaussian_solve_statistics(model, data, resp, statistics, options, report,
                                           message);
    free(statistics);
    return status;
}

/*
 * d/dbeta_k  = (1/N) sum_i w_i r_ik (mu_ik - y_i) x_i / sigma_k^2 + ridge beta_k
 * d/dlog s_k = (1/N) sum_i w_i r_ik (1 - (y_i - mu_ik)^2 / sigma_k^2) / 2
 * The sums run over row chunks (common/parallel.h): K x p coefficient sums, then K
 * log-variance sums.
 */
typedef struct gradient_pass {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    const double *precision; /* K */
} gradient_pass;

static size_t gradient_chunk(void *opaque, size_t start, size_t rows, double *sums,
                             double *workspace)
{
    const gradient_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    const moe_data *data = pass->data;
    size_t K = model->n_experts, p = model->n_inputs;
    double *block = workspace, *scaled = block + MOE_BLOCK_ROWS * p;
    double *coefficients = sums, *log_variances = sums + K * p;
    for (size_t offset = 0; offset < rows; offset += MOE_BLOCK_ROWS) {
        size_t first = start + offset;
        size_t count = rows - offset < MOE_BLOCK_ROWS ? rows - offset : MOE_BLOCK_ROWS;
        moe_data_load_block(data, first, count, block);
        moe_expert_linear(model, count, block, scaled);
        for (size_t i = 0; i < count; ++i) {
            double weight = moe_data_weight(data, first + i);
            const double *r = pass->resp + (first + i) * K;
            for (size_t k = 0; k < K; ++k) {
                double residual = data->y[first + i] - scaled[i * K + k];
                double share = weight * r[k];
                log_variances[k] += 0.5 * share * (1.0 - residual * residual * pass->precision[k]);
                scaled[i * K + k] = -share * residual * pass->precision[k];
            }
        }
        moe_product_atb_add(count, K, p, scaled, block, coefficients);
    }
    return 0;
}

static moe_status gaussian_gradient(const struct moe_model *model, const moe_data *data,
                                    const double *resp, double ridge, double total_weight,
                                    size_t threads, double *coefficients, double *log_variances,
                                    char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *sums = moe_alloc_array(K * p + K, 1, sizeof(double));
    double *precision = moe_alloc_array(K, 1, sizeof(double));
    if (sums == NULL || precision == NULL) {
        free(sums);
        free(precision);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert gradient");
    }
    for (size_t k = 0; k < K; ++k)
        precision[k] = 1.0 / model->variances[k];
    gradient_pass pass = {model, data, resp, precision};
    moe_chunk_job job = {data->n, K * p + K, MOE_BLOCK_ROWS * (p + K), gradient_chunk, &pass};
    size_t ignored = 0;
    moe_status status = moe_run_chunks(&job, threads, sums, &ignored, message);
    if (status == MOE_OK) {
        double inverse = 1.0 / total_weight;
        for (size_t k = 0; k < K; ++k) {
            for (size_t j = 0; j < p; ++j) {
                double value = sums[k * p + j] * inverse;
                if (j >= (size_t)model->intercept)
                    value += ridge * model->experts[k * p + j];
                coefficients[k * p + j] = value;
            }
            if (log_variances != NULL)
                log_variances[k] = sums[K * p + k] * inverse;
        }
    }
    free(sums);
    free(precision);
    return status;
}

static double gaussian_curvature(const struct moe_model *model)
{
    double smallest = model->variances[0];
    for (size_t k = 1; k < model->n_experts; ++k)
        if (model->variances[k] < smallest)
            smallest = model->variances[k];
    return 1.0 / smallest;
}

const struct moe_family_ops moe_family_gaussian = {
    .id = MOE_FAMILY_GAUSSIAN,
    .name = "gaussian",
    .uses_classes = 0,
    .has_variance = 1,
    .supports_link = gaussian_supports_link,
    .expert_free_params = gaussian_expert_free_params,
    .normalize_experts = NULL,
    .check_response = gaussian_check_response,
    .log_density = gaussian_log_density,
    .prediction_width = gaussian_prediction_width,
    .predict = gaussian_predict,
    .m_step = gaussian_m_step,
    .statistics_size = gaussian_statistics_size,
    .accumulate_statistics = gaussian_accumulate_statistics,
    .solve_statistics = gaussian_solve_statistics,
    .gradient = gaussian_gradient,
    .curvature = gaussian_curvature,
};
