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

#include <cblas.h>
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

static void gaussian_log_density(const struct moe_model *model, size_t rows, const double *block,
                                 const double *y, double *out, double *scratch)
{
    (void)scratch;
    size_t K = model->n_experts;
    moe_expert_linear(model, rows, block, out);
    for (size_t k = 0; k < K; ++k) {
        double variance = model->variances[k];
        double constant = -0.5 * (log_two_pi + log(variance));
        double inverse = 1.0 / variance;
        for (size_t i = 0; i < rows; ++i) {
            double residual = y[i] - out[i * K + k];
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

typedef struct gaussian_workspace {
    double *grams;   /* K x p x p */
    double *rhs;     /* K x p */
    double *totals;  /* K */
    double *rss;     /* K */
    double *squares; /* K: sum w r e^2 at the current coefficients */
    double *block;   /* rows x p */
    double *scratch; /* rows x p */
    double *weights; /* rows */
    double *means;   /* rows x K */
    double *work;    /* p x (p + 1) */
    unsigned char *active; /* K */
} gaussian_workspace;

static void workspace_free(gaussian_workspace *w)
{
    free(w->grams);
    free(w->rhs);
    free(w->totals);
    free(w->rss);
    free(w->squares);
    free(w->block);
    free(w->scratch);
    free(w->weights);
    free(w->means);
    free(w->work);
    free(w->active);
}

static int workspace_allocate(gaussian_workspace *w, size_t K, size_t p)
{
    memset(w, 0, sizeof *w);
    w->grams = moe_calloc_array(K * p, p, sizeof(double));
    w->rhs = calloc(K * p, sizeof(double));
    w->totals = calloc(K, sizeof(double));
    w->rss = calloc(K, sizeof(double));
    w->squares = calloc(K, sizeof(double));
    w->block = malloc(MOE_BLOCK_ROWS * p * sizeof(double));
    w->scratch = malloc(MOE_BLOCK_ROWS * p * sizeof(double));
    w->weights = malloc(MOE_BLOCK_ROWS * sizeof(double));
    w->means = malloc(MOE_BLOCK_ROWS * K * sizeof(double));
    w->work = moe_alloc_array(p, p + 1, sizeof(double));
    w->active = calloc(K, 1);
    return w->grams && w->rhs && w->totals && w->rss && w->squares && w->block && w->scratch && w->weights &&
           w->means && w->work && w->active;
}

/*
 * One pass: per expert, the weighted Gram matrix G, the total weight, and the statistics of
 * the residuals e = y - x'beta at the current coefficients: rhs = sum w r x e and
 * sum w r e^2. The update is then beta + delta with (G + shrink) delta = rhs - shrink beta,
 * and the new residual sum of squares follows without a second pass (see below).
 */
static void accumulate_statistics(const struct moe_model *model, const moe_data *data,
                                  const double *resp, gaussian_workspace *w)
{
    size_t K = model->n_experts, p = model->n_inputs;
    for (size_t start = 0; start < data->n; start += MOE_BLOCK_ROWS) {
        size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(data, start, rows, w->block);
        moe_expert_linear(model, rows, w->block, w->means);
        for (size_t k = 0; k < K; ++k) {
            double total = 0.0, squares = 0.0;
            for (size_t i = 0; i < rows; ++i) {
                double weight = moe_data_weight(data, start + i) * resp[(start + i) * K + k];
                double residual = data->y[start + i] - w->means[i * K + k];
                w->weights[i] = weight;
                total += weight;
                squares += weight * residual * residual;
            }
            w->totals[k] += total;
            w->squares[k] += squares;
            moe_weighted_gram_add(rows, p, w->block, w->weights, w->scratch, w->grams + k * p * p);
            for (size_t i = 0; i < rows; ++i)
                w->weights[i] *= data->y[start + i] - w->means[i * K + k];
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)rows, (int)p, 1.0, w->block, (int)p,
                        w->weights, 1, 1.0, w->rhs + k * p, 1);
        }
    }
}

/* Weighted residual sum of squares of each expert at its (new) coefficients: the second
   pass, needed only when the one-pass formula cancels. */
static void accumulate_residuals(const struct moe_model *model, const moe_data *data,
                                 const double *resp, gaussian_workspace *w)
{
    size_t K = model->n_experts;
    memset(w->rss, 0, K * sizeof(double));
    for (size_t start = 0; start < data->n; start += MOE_BLOCK_ROWS) {
        size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(data, start, rows, w->block);
        moe_expert_linear(model, rows, w->block, w->means);
        for (size_t i = 0; i < rows; ++i) {
            double weight = moe_data_weight(data, start + i);
            const double *r = resp + (start + i) * K;
            for (size_t k = 0; k < K; ++k) {
                double residual = data->y[start + i] - w->means[i * K + k];
                w->rss[k] += weight * r[k] * residual * residual;
            }
        }
    }
}

/* Below this share of the old residual sum of squares, the one-pass value of the new one is
   mostly rounding error of the subtraction, and the residuals are summed again. */
#define CANCELLATION_SHARE 1e-6

static moe_status gaussian_m_step(struct moe_model *model, const moe_data *data,
                                  const double *resp, const moe_expert_mstep_options *options,
                                  moe_expert_mstep_report *report, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    gaussian_workspace w;
    if (!workspace_allocate(&w, K, p)) {
        workspace_free(&w);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    }
    accumulate_statistics(model, data, resp, &w);
    int second_pass = 0;
    for (size_t k = 0; k < K; ++k) {
        if (!(w.totals[k] > options->min_weight)) {
            report->degenerate_experts++;
            continue;
        }
        double *gram = w.grams + k * p * p, *beta = model->experts + k * p;
        double *delta = w.scratch; /* p values */
        moe_symmetrize_upper(p, gram);
        /* Penalty N*ridge/2 ||beta||^2 against RSS / (2 sigma^2): in the normal equations
           it is N * ridge * sigma^2 on the diagonal. */
        double shrink = options->ridge * options->total_weight * model->variances[k];
        for (size_t j = 0; j < p; ++j)
            delta[j] = w.rhs[k * p + j] - (j >= (size_t)model->intercept ? shrink * beta[j] : 0.0);
        for (size_t j = (size_t)model->intercept; j < p; ++j)
            gram[j * p + j] += shrink;
        int ridge_used = 0;
        if (moe_solve_spd(p, gram, delta, w.work, &ridge_used) != 0) {
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
        w.rss[k] = w.squares[k] - 2.0 * moe_dot(p, delta, w.rhs + k * p) + quadratic;
        if (!(w.rss[k] > CANCELLATION_SHARE * w.squares[k]))
            second_pass = 1;
        for (size_t j = 0; j < p; ++j)
            beta[j] += delta[j];
        w.active[k] = 1;
    }
    if (!options->update_variance) {
        workspace_free(&w);
        return MOE_OK;
    }
    if (second_pass)
        accumulate_residuals(model, data, resp, &w);
    for (size_t k = 0; k < K; ++k) {
        if (!w.active[k])
            continue;
        double variance = w.rss[k] / w.totals[k];
        if (!(variance >= options->variance_floor)) {
            variance = options->variance_floor;
            report->floored_variances++;
        }
        model->variances[k] = variance;
    }
    workspace_free(&w);
    return MOE_OK;
}

/*
 * d/dbeta_k  = (1/N) sum_i w_i r_ik (mu_ik - y_i) x_i / sigma_k^2 + ridge beta_k
 * d/dlog s_k = (1/N) sum_i w_i r_ik (1 - (y_i - mu_ik)^2 / sigma_k^2) / 2
 */
static moe_status gaussian_gradient(const struct moe_model *model, const moe_data *data,
                                    const double *resp, double ridge, double total_weight,
                                    double *coefficients, double *log_variances, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *block = moe_alloc_array(MOE_BLOCK_ROWS, p, sizeof(double));
    double *scaled = moe_alloc_array(MOE_BLOCK_ROWS, K, sizeof(double));
    double *precision = moe_alloc_array(K, 1, sizeof(double));
    if (block == NULL || scaled == NULL || precision == NULL) {
        free(block);
        free(scaled);
        free(precision);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert gradient");
    }
    for (size_t k = 0; k < K; ++k)
        precision[k] = 1.0 / model->variances[k];
    memset(coefficients, 0, K * p * sizeof(double));
    if (log_variances != NULL)
        memset(log_variances, 0, K * sizeof(double));
    for (size_t start = 0; start < data->n; start += MOE_BLOCK_ROWS) {
        size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(data, start, rows, block);
        moe_expert_linear(model, rows, block, scaled);
        for (size_t i = 0; i < rows; ++i) {
            double weight = moe_data_weight(data, start + i);
            const double *r = resp + (start + i) * K;
            for (size_t k = 0; k < K; ++k) {
                double residual = data->y[start + i] - scaled[i * K + k];
                double share = weight * r[k];
                if (log_variances != NULL)
                    log_variances[k] += 0.5 * share * (1.0 - residual * residual * precision[k]);
                scaled[i * K + k] = -share * residual * precision[k];
            }
        }
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)p, (int)rows, 1.0,
                    scaled, (int)K, block, (int)p, 1.0, coefficients, (int)p);
    }
    double inverse = 1.0 / total_weight;
    for (size_t k = 0; k < K; ++k) {
        for (size_t j = 0; j < p; ++j) {
            coefficients[k * p + j] *= inverse;
            if (j >= (size_t)model->intercept)
                coefficients[k * p + j] += ridge * model->experts[k * p + j];
        }
        if (log_variances != NULL)
            log_variances[k] *= inverse;
    }
    free(block);
    free(scaled);
    free(precision);
    return MOE_OK;
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
    .gradient = gaussian_gradient,
    .curvature = gaussian_curvature,
};
