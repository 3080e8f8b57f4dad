/* Public prediction, posterior, log-likelihood and information criteria. */
#include "model/family.h"
#include "model/gate.h"
#include "model/posterior.h"
#include "common/check.h"
#include "common/alloc.h"
#include "common/linalg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Validate a model plus its design matrix; returns a ready moe_data. */
static moe_status prepare(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                          const double *y, const double *weights, int need_y, moe_data *data)
{
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    moe_status status = moe_check_design(NULL, n, X, ldx, model->n_features);
    if (status != MOE_OK)
        return status;
    if (need_y) {
        status = moe_check_response_values(NULL, n, y);
        if (status == MOE_OK)
            status = model->family_ops->check_response(model, n, y, NULL);
        if (status != MOE_OK)
            return status;
    }
    status = moe_check_weights(NULL, n, weights);
    if (status != MOE_OK)
        return status;
    data->n = n;
    data->n_features = model->n_features;
    data->ldx = model->n_features == 0 ? 0 : ldx;
    data->intercept = model->intercept;
    data->X = X;
    data->y = y;
    data->weights = weights;
    return MOE_OK;
}

moe_status moe_model_gate_proba(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                                double *out, size_t out_length)
{
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, NULL, NULL, 0, &data);
    if (status != MOE_OK)
        return status;
    size_t K = model->n_experts;
    if (n > SIZE_MAX / K)
        return moe_fail(NULL, MOE_ERR_DIMENSION, "n * n_experts overflows");
    status = moe_check_output(NULL, out, out_length, n * K);
    if (status != MOE_OK)
        return status;
    double *block = malloc(MOE_BLOCK_ROWS * model->n_inputs * sizeof(double));
    if (block == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a row block");
    for (size_t start = 0; start < n; start += MOE_BLOCK_ROWS) {
        size_t rows = n - start < MOE_BLOCK_ROWS ? n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(&data, start, rows, block);
        double *target = out + start * K;
        moe_gate_log_proba(model, rows, block, target);
        for (size_t i = 0; i < rows * K; ++i)
            target[i] = moe_exp(target[i]);
    }
    free(block);
    return MOE_OK;
}

moe_status moe_model_predict(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                             double *out, size_t out_length)
{
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, NULL, NULL, 0, &data);
    if (status != MOE_OK)
        return status;
    size_t K = model->n_experts, width = model->family_ops->prediction_width(model);
    if (n > SIZE_MAX / width)
        return moe_fail(NULL, MOE_ERR_DIMENSION, "n * prediction width overflows");
    status = moe_check_output(NULL, out, out_length, n * width);
    if (status != MOE_OK)
        return status;
    size_t rows_max = MOE_BLOCK_ROWS;
    double *block = malloc(rows_max * model->n_inputs * sizeof(double));
    double *proba = malloc(rows_max * K * sizeof(double));
    double *scratch = malloc(rows_max * K * model->expert_rows * sizeof(double));
    if (block == NULL || proba == NULL || scratch == NULL) {
        free(block);
        free(proba);
        free(scratch);
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate prediction buffers");
    }
    for (size_t start = 0; start < n; start += rows_max) {
        size_t rows = n - start < rows_max ? n - start : rows_max;
        moe_data_load_block(&data, start, rows, block);
        moe_gate_log_proba(model, rows, block, proba);
        for (size_t i = 0; i < rows * K; ++i)
            proba[i] = moe_exp(proba[i]);
        model->family_ops->predict(model, rows, block, proba, out + start * width, scratch);
    }
    free(block);
    free(proba);
    free(scratch);
    return MOE_OK;
}

moe_status moe_model_posterior(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                               const double *y, double *out, size_t out_length)
{
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, y, NULL, 1, &data);
    if (status != MOE_OK)
        return status;
    if (n > SIZE_MAX / model->n_experts)
        return moe_fail(NULL, MOE_ERR_DIMENSION, "n * n_experts overflows");
    status = moe_check_output(NULL, out, out_length, n * model->n_experts);
    if (status != MOE_OK)
        return status;
    moe_posterior_result result;
    return moe_posterior_pass(model, &data, out, &result, NULL);
}

moe_status moe_model_loglik(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                            const double *y, const double *weights, double *loglik)
{
    if (loglik == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "loglik is NULL");
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, y, weights, 1, &data);
    if (status != MOE_OK)
        return status;
    moe_posterior_result result;
    status = moe_posterior_pass(model, &data, NULL, &result, NULL);
    if (status == MOE_OK)
        *loglik = result.loglik;
    return status;
}

moe_status moe_model_criteria(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                              const double *y, const double *weights, moe_criteria *criteria)
{
    if (criteria == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "criteria is NULL");
    if (criteria->version < 1 || criteria->version > MOE_CRITERIA_VERSION)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "criteria version %u is not supported (set MOE_CRITERIA_VERSION)",
                        criteria->version);
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, y, weights, 1, &data);
    if (status != MOE_OK)
        return status;
    moe_posterior_result result;
    status = moe_posterior_pass(model, &data, NULL, &result, NULL);
    if (status != MOE_OK)
        return status;
    double n_obs = 0.0;
    for (size_t i = 0; i < n; ++i)
        n_obs += moe_data_weight(&data, i);
    double n_params = (double)moe_model_n_free_params(model);
    criteria->loglik = result.loglik;
    criteria->n_params = n_params;
    criteria->n_obs = n_obs;
    criteria->aic = -2.0 * result.loglik + 2.0 * n_params;
    criteria->bic = -2.0 * result.loglik + n_params * log(n_obs);
    criteria->entropy = result.entropy;
    criteria->icl = criteria->bic + 2.0 * result.entropy;
    return MOE_OK;
}

moe_status moe_model_cross_entropy(const moe_model_t *model, size_t n, const double *X,
                                   size_t ldx, const double *y, const double *weights,
                                   double *cross_entropy)
{
    if (cross_entropy == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "cross_entropy is NULL");
    double loglik = 0.0;
    moe_status status = moe_model_loglik(model, n, X, ldx, y, weights, &loglik);
    if (status != MOE_OK)
        return status;
    double total = 0.0; /* weights are valid: loglik checked them */
    for (size_t i = 0; i < n; ++i)
        total += weights == NULL ? 1.0 : weights[i];
    *cross_entropy = -loglik / total;
    return MOE_OK;
}

/* The most probable class of one prediction row (ties go to the lower class). */
static size_t predicted_class(const double *row, size_t width)
{
    if (width == 1)
        return row[0] > 0.5 ? 1 : 0;
    size_t best = 0;
    for (size_t c = 1; c < width; ++c)
        if (row[c] > row[best])
            best = c;
    return best;
}

moe_status moe_model_accuracy(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                              const double *y, const double *weights, double *accuracy)
{
    if (accuracy == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "accuracy is NULL");
    if (model != NULL && model->family == MOE_FAMILY_GAUSSIAN)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "accuracy needs a classification family, the model is gaussian");
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, y, weights, 1, &data);
    if (status != MOE_OK)
        return status;
    size_t K = model->n_experts, width = model->family_ops->prediction_width(model);
    double *block = moe_alloc_array(MOE_BLOCK_ROWS, model->n_inputs, sizeof(double));
    double *proba = moe_alloc_array(MOE_BLOCK_ROWS, K, sizeof(double));
    double *scratch = moe_alloc_array(MOE_BLOCK_ROWS * K, model->expert_rows, sizeof(double));
    double *predicted = moe_alloc_array(MOE_BLOCK_ROWS, width, sizeof(double));
    if (block == NULL || proba == NULL || scratch == NULL || predicted == NULL) {
        free(block);
        free(proba);
        free(scratch);
        free(predicted);
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate prediction buffers");
    }
    double correct = 0.0, total = 0.0;
    for (size_t start = 0; start < n; start += MOE_BLOCK_ROWS) {
        size_t rows = n - start < MOE_BLOCK_ROWS ? n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(&data, start, rows, block);
        moe_gate_log_proba(model, rows, block, proba);
        for (size_t i = 0; i < rows * K; ++i)
            proba[i] = moe_exp(proba[i]);
        model->family_ops->predict(model, rows, block, proba, predicted, scratch);
        for (size_t i = 0; i < rows; ++i) {
            double weight = moe_data_weight(&data, start + i);
            total += weight;
            if ((double)predicted_class(predicted + i * width, width) == y[start + i])
                correct += weight;
        }
    }
    free(block);
    free(proba);
    free(scratch);
    free(predicted);
    *accuracy = correct / total;
    return MOE_OK;
}
