#include "model/gate.h"
#include "common/alloc.h"
#include "common/linalg.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void moe_gate_logits(const struct moe_model *model, size_t rows, const double *block,
                     double *logits)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)model->n_experts,
                (int)model->n_inputs, 1.0, block, (int)model->n_inputs, model->gate,
                (int)model->n_inputs, 0.0, logits, (int)model->n_experts);
}

void moe_gate_log_proba(const struct moe_model *model, size_t rows, const double *block,
                        double *log_proba)
{
    size_t K = model->n_experts;
    moe_gate_logits(model, rows, block, log_proba);
    for (size_t i = 0; i < rows; ++i)
        moe_log_softmax(log_proba + i * K, K);
}

/*
 * The penalty is on the gate rows centred over experts, (l2/2) sum_k ||w_k - mean_w||^2,
 * rather than on the stored rows: the stored rows are relative to the last expert, so a
 * plain ||w||^2 would depend on which expert happens to be the reference. With the
 * reference row at zero it equals (l2/2) (sum_{k<K} ||w_k||^2 - K ||mean_w||^2).
 */
double moe_gate_penalty(const struct moe_model *model, double l2)
{
    if (l2 == 0.0)
        return 0.0;
    size_t p = model->n_inputs, K = model->n_experts;
    double sum = 0.0;
    for (size_t j = (size_t)model->intercept; j < p; ++j) {
        double column = 0.0, squares = 0.0;
        for (size_t k = 0; k + 1 < K; ++k) {
            double value = model->gate[k * p + j];
            column += value;
            squares += value * value;
        }
        sum += squares - column * column / (double)K;
    }
    return 0.5 * l2 * sum;
}

typedef struct gate_workspace {
    size_t free_params;  /* m = (K - 1) p */
    double *block;       /* rows x p */
    double *log_proba;   /* rows x K */
    double *coefficients;/* rows x (K - 1) */
    double *scaled;      /* rows x m */
    double *scratch;     /* rows x p */
    double *weights;     /* rows */
    double *diagonal;    /* (K - 1) x p x p */
    double *hessian;     /* m x m */
    double *gradient;    /* m */
    double *direction;   /* m */
    double *work;        /* m x (m + 1) */
    double *saved;       /* m */
} gate_workspace;

static void gate_workspace_free(gate_workspace *w)
{
    free(w->block);
    free(w->log_proba);
    free(w->coefficients);
    free(w->scaled);
    free(w->scratch);
    free(w->weights);
    free(w->diagonal);
    free(w->hessian);
    free(w->gradient);
    free(w->direction);
    free(w->work);
    free(w->saved);
}

static int gate_workspace_allocate(gate_workspace *w, size_t K, size_t p)
{
    size_t rows = MOE_BLOCK_ROWS, m = (K - 1) * p;
    memset(w, 0, sizeof *w);
    w->free_params = m;
    w->block = malloc(rows * p * sizeof(double));
    w->log_proba = malloc(rows * K * sizeof(double));
    w->coefficients = malloc(rows * (K - 1) * sizeof(double));
    w->scaled = moe_alloc_array(rows, m, sizeof(double));
    w->scratch = malloc(rows * p * sizeof(double));
    w->weights = malloc(rows * sizeof(double));
    w->diagonal = moe_alloc_array((K - 1) * p, p, sizeof(double));
    w->hessian = moe_alloc_array(m, m, sizeof(double));
    w->gradient = malloc(m * sizeof(double));
    w->direction = malloc(m * sizeof(double));
    w->work = moe_alloc_array(m, m + 1, sizeof(double));
    w->saved = malloc(m * sizeof(double));
    return w->block && w->log_proba && w->coefficients && w->scaled && w->scratch && w->weights &&
           w->diagonal && w->hessian && w->gradient && w->direction && w->work && w->saved;
}

static double total_weight(const moe_data *data)
{
    if (data->weights == NULL)
        return (double)data->n;
    double total = 0.0;
    for (size_t i = 0; i < data->n; ++i)
        total += data->weights[i];
    return total;
}

/* Q at the model's gate. Per row, LSE - sum_k r_k logit_k = -sum_k r_k log pi_k. */
static double gate_objective(const struct moe_model *model, const moe_data *data,
                             const double *resp, double l2, double total, gate_workspace *w)
{
    size_t K = model->n_experts;
    double sum = 0.0;
    for (size_t start = 0; start < data->n; start += MOE_BLOCK_ROWS) {
        size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(data, start, rows, w->block);
        moe_gate_log_proba(model, rows, w->block, w->log_proba);
        for (size_t i = 0; i < rows; ++i) {
            const double *r = resp + (start + i) * K;
            double row = 0.0;
            for (size_t k = 0; k < K; ++k)
                if (r[k] > 0.0)
                    row -= r[k] * w->log_proba[i * K + k];
            sum += moe_data_weight(data, start + i) * row;
        }
    }
    return sum / total + moe_gate_penalty(model, l2);
}

/*
 * Gradient and Hessian of Q over the free rows, and Q itself.
 * Hessian block (j, l) = (1/N) sum_i w_i pi_ij (delta_jl - pi_il) x_i x_i'
 *   = diag blocks X' diag(w pi_j) X  minus  S'S, with S_i = sqrt(w_i) [pi_i1 x_i, ...].
 */
static double gate_gradient_hessian(const struct moe_model *model, const moe_data *data,
                                    const double *resp, double l2, double total,
                                    gate_workspace *w)
{
    size_t K = model->n_experts, p = model->n_inputs, m = w->free_params, J = K - 1;
    double sum = 0.0;
    memset(w->gradient, 0, m * sizeof(double));
    memset(w->hessian, 0, m * m * sizeof(double));
    memset(w->diagonal, 0, J * p * p * sizeof(double));
    for (size_t start = 0; start < data->n; start += MOE_BLOCK_ROWS) {
        size_t rows = data->n - start < MOE_BLOCK_ROWS ? data->n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(data, start, rows, w->block);
        moe_gate_log_proba(model, rows, w->block, w->log_proba);
        for (size_t i = 0; i < rows; ++i) {
            double weight = moe_data_weight(data, start + i);
            double root = sqrt(weight);
            const double *r = resp + (start + i) * K;
            double *log_pi = w->log_proba + i * K;
            double row = 0.0;
            for (size_t k = 0; k < K; ++k) {
                if (r[k] > 0.0)
                    row -= r[k] * log_pi[k];
                log_pi[k] = exp(log_pi[k]); /* now pi */
            }
            sum += weight * row;
            const double *x = w->block + i * p;
            for (size_t j = 0; j < J; ++j) {
                w->coefficients[i * J + j] = weight * (log_pi[j] - r[j]);
                double scale = root * log_pi[j];
                double *target = w->scaled + i * m + j * p;
                for (size_t a = 0; a < p; ++a)
                    target[a] = scale * x[a];
            }
        }
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)J, (int)p, (int)rows, 1.0,
                    w->coefficients, (int)J, w->block, (int)p, 1.0, w->gradient, (int)p);
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)m, (int)rows, -1.0, w->scaled,
                    (int)m, 1.0, w->hessian, (int)m);
        for (size_t j = 0; j < J; ++j) {
            for (size_t i = 0; i < rows; ++i)
                w->weights[i] = moe_data_weight(data, start + i) * w->log_proba[i * K + j];
            moe_weighted_gram_add(rows, p, w->block, w->weights, w->scratch,
                                  w->diagonal + j * p * p);
        }
    }
    for (size_t j = 0; j < J; ++j)
        for (size_t a = 0; a < p; ++a)
            for (size_t b = a; b < p; ++b)
                w->hessian[(j * p + a) * m + j * p + b] += w->diagonal[j * p * p + a * p + b];
    double inverse = 1.0 / total;
    for (size_t a = 0; a < m; ++a) {
        w->gradient[a] *= inverse;
        for (size_t b = a; b < m; ++b)
            w->hessian[a * m + b] *= inverse;
    }
    moe_symmetrize_upper(m, w->hessian);
    /* Penalty derivatives: gradient l2 (w_j - mean_w), Hessian l2 (I - 11'/K) per input. */
    if (l2 > 0.0)
        for (size_t a = (size_t)model->intercept; a < p; ++a) {
            double mean = 0.0;
            for (size_t j = 0; j < J; ++j)
                mean += model->gate[j * p + a];
            mean /= (double)K;
            for (size_t j = 0; j < J; ++j) {
                w->gradient[j * p + a] += l2 * (model->gate[j * p + a] - mean);
                for (size_t l = 0; l < J; ++l)
                    w->hessian[(j * p + a) * m + l * p + a] +=
                        l2 * ((j == l ? 1.0 : 0.0) - 1.0 / (double)K);
            }
        }
    return sum / total + moe_gate_penalty(model, l2);
}

moe_status moe_gate_newton(struct moe_model *model, const moe_data *data, const double *resp,
                           const moe_gate_options *options, moe_gate_report *report,
                           char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    if (K == 1)
        return MOE_OK;
    gate_workspace w;
    if (!gate_workspace_allocate(&w, K, p)) {
        gate_workspace_free(&w);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the gate M-step");
    }
    size_t m = w.free_params;
    double total = total_weight(data);
    double *free_rows = model->gate; /* rows 0..K-2 are contiguous: m values */
    for (size_t step = 0; step < options->max_newton; ++step) {
        double current = gate_gradient_hessian(model, data, resp, options->l2, total, &w);
        for (size_t a = 0; a < m; ++a)
            w.direction[a] = -w.gradient[a];
        int ridge_used = 0;
        if (moe_solve_spd(m, w.hessian, w.direction, w.work, &ridge_used) != 0) {
            report->line_search_failures++;
            break;
        }
        if (ridge_used)
            report->ridge_fallbacks++;
        double decrement = -moe_dot(m, w.gradient, w.direction);
        if (!(decrement > 0.0) || 0.5 * decrement <= options->tolerance * (1.0 + fabs(current)))
            break;
        memcpy(w.saved, free_rows, m * sizeof(double));
        /* Near the optimum Q cannot resolve the remaining decrease (pitfall P11b of the
           EM spec): there a step within rounding of Q is accepted. */
        double resolution = 16.0 * DBL_EPSILON * (1.0 + fabs(current));
        int near_optimum = 0.5 * decrement <= 1e-8 * (1.0 + fabs(current));
        double t = 1.0;
        int accepted = 0;
        for (int halving = 0; halving < 40; ++halving) {
            for (size_t a = 0; a < m; ++a)
                free_rows[a] = w.saved[a] + t * w.direction[a];
            double trial = gate_objective(model, data, resp, options->l2, total, &w);
            if (trial <= current - 1e-4 * t * decrement ||
                (near_optimum && trial <= current + resolution)) {
                accepted = 1;
                break;
            }
            t *= 0.5;
        }
        report->newton_steps++;
        if (!accepted) {
            memcpy(free_rows, w.saved, m * sizeof(double));
            report->line_search_failures++;
            break;
        }
    }
    gate_workspace_free(&w);
    return MOE_OK;
}
