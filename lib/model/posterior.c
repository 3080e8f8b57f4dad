#include "model/posterior.h"
#include "model/family.h"
#include "model/gate.h"
#include "common/linalg.h"

#include <math.h>
#include <stdlib.h>

moe_status moe_posterior_pass(const struct moe_model *model, const moe_data *data, double *resp,
                              moe_posterior_result *result, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs, rows_max = MOE_BLOCK_ROWS;
    double *block = malloc(rows_max * p * sizeof(double));
    double *log_proba = malloc(rows_max * K * sizeof(double));
    double *log_density = malloc(rows_max * K * sizeof(double));
    double *scratch = malloc(rows_max * K * model->expert_rows * sizeof(double));
    double *probability = malloc(K * sizeof(double)); /* one row's posterior without resp */
    if (block == NULL || log_proba == NULL || log_density == NULL || scratch == NULL ||
        probability == NULL) {
        free(block);
        free(log_proba);
        free(log_density);
        free(scratch);
        free(probability);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the E-step buffers");
    }
    double loglik = 0.0, entropy = 0.0;
    for (size_t start = 0; start < data->n; start += rows_max) {
        size_t rows = data->n - start < rows_max ? data->n - start : rows_max;
        moe_data_load_block(data, start, rows, block);
        moe_gate_log_proba(model, rows, block, log_proba);
        model->family_ops->log_density(model, rows, block, data->y + start, log_density, scratch);
        for (size_t i = 0; i < rows; ++i) {
            double *u = log_density + i * K;
            const double *log_pi = log_proba + i * K;
            for (size_t k = 0; k < K; ++k)
                u[k] += log_pi[k];
            double *r = resp != NULL ? resp + (start + i) * K : probability;
            double row_loglik = moe_softmax_with_log(u, K, r); /* u now holds log r */
            if (!isfinite(row_loglik)) {
                /* Every expert gives the row zero (or undefined) density: there is no
                   posterior to report, and NaN responsibilities would poison an M-step. */
                free(block);
                free(log_proba);
                free(log_density);
                free(scratch);
                free(probability);
                return moe_fail(message, MOE_ERR_NUMERICAL,
                                "row %zu has %s likelihood under every expert", start + i,
                                isnan(row_loglik) ? "undefined" : "zero or infinite");
            }
            double weight = moe_data_weight(data, start + i);
            loglik += weight * row_loglik;
            double row_entropy = 0.0;
            for (size_t k = 0; k < K; ++k)
                if (r[k] > 0.0)
                    row_entropy -= r[k] * u[k];
            entropy += weight * row_entropy;
        }
    }
    free(block);
    free(log_proba);
    free(log_density);
    free(scratch);
    free(probability);
    result->loglik = loglik;
    result->entropy = entropy;
    return MOE_OK;
}
