/* Public prediction, posterior, log-likelihood and information criteria. */
#include "model/family.h"
#include "pass/gate.h"
#include "pass/posterior.h"
#include "common/check.h"
#include "common/versioned.h"
#include "common/alloc.h"
#include "common/linalg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Validate a model, the output buffer (rows x width values, width 0 for none) and the data,
 * in that order, so that nothing is read before every size is known to be addressable;
 * returns a ready moe_data.
 */
static moe_status prepare(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                          const double *y, const double *weights, int need_y, const double *out,
                          size_t out_length, size_t width, moe_data *data)
{
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    moe_status status = MOE_OK;
    if (width != 0 && (status = moe_check_output(NULL, out, out_length, n, width)) != MOE_OK)
        return status;
    status = moe_check_design(NULL, n, X, ldx, model->n_features);
    if (status != MOE_OK)
        return status;
    if (need_y) {
        status = moe_check_response_values(NULL, n, y);
        if (status == MOE_OK)
            status = model->family_ops->check_response(model, n, X, ldx, y, NULL);
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

/*
 * Gate log-probabilities are NaN only where the logits overflowed (|w'x| above the largest
 * double with the largest +inf, or every logit -inf): the probabilities are then undefined.
 * A single -inf logit beside finite ones is a probability of exactly 0 and is fine.
 */
static moe_status check_gate_block(const double *log_proba, size_t rows, size_t K, size_t first)
{
    for (size_t i = 0; i < rows * K; ++i)
        if (isnan(log_proba[i]))
            return moe_fail(NULL, MOE_ERR_NUMERICAL,
                            "row %zu: the gate's logits overflow, its probabilities are "
                            "undefined",
                            first + i / K);
    return MOE_OK;
}

static moe_status check_prediction_block(const double *values, size_t rows, size_t width,
                                         size_t first)
{
    for (size_t i = 0; i < rows * width; ++i)
        if (!isfinite(values[i]))
            return moe_fail(NULL, MOE_ERR_NUMERICAL,
                            "row %zu: the prediction is %s (an expert's linear predictor "
                            "overflows)",
                            first + i / width, isnan(values[i]) ? "undefined" : "infinite");
    return MOE_OK;
}

moe_status moe_model_gate_proba(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                                double *out, size_t out_length)
{
    moe_data data;
    size_t K = model == NULL ? 1 : model->n_experts;
    moe_status status = prepare(model, n, X, ldx, NULL, NULL, 0, out, out_length, K, &data);
    if (status != MOE_OK)
        return status;
    double *block = moe_alloc_array(MOE_BLOCK_ROWS, model->n_inputs, sizeof(double));
    if (block == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a row block");
    for (size_t start = 0; start < n && status == MOE_OK; start += MOE_BLOCK_ROWS) {
        size_t rows = n - start < MOE_BLOCK_ROWS ? n - start : MOE_BLOCK_ROWS;
        moe_data_load_block(&data, start, rows, block);
        double *target = out + start * K;
        moe_gate_log_proba(model, rows, block, target);
        status = check_gate_block(target, rows, K, start);
        for (size_t i = 0; i < rows * K; ++i)
            target[i] = moe_exp(target[i]);
    }
    free(block);
    return status;
}

/* Row-block buffers of the mixture prediction. */
typedef struct prediction_buffers {
    double *block;   /* rows x p */
    double *proba;   /* rows x K gate probabilities */
    double *scratch; /* rows x K x expert_rows, for the family */
} prediction_buffers;

static void prediction_buffers_free(prediction_buffers *b)
{
    free(b->block);
    free(b->proba);
    free(b->scratch);
}

static moe_status prediction_buffers_allocate(const moe_model_t *model, prediction_buffers *b)
{
    size_t K = model->n_experts;
    b->block = moe_alloc_array(MOE_BLOCK_ROWS, model->n_inputs, sizeof(double));
    b->proba = moe_alloc_array(MOE_BLOCK_ROWS, K, sizeof(double));
    b->scratch = moe_alloc_array(MOE_BLOCK_ROWS * K, model->expert_rows, sizeof(double));
    if (b->block == NULL || b->proba == NULL || b->scratch == NULL) {
        prediction_buffers_free(b);
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate prediction buffers");
    }
    return MOE_OK;
}

/* The mixture prediction of rows [start, start + rows) into out (rows x prediction width);
   MOE_ERR_NUMERICAL where it is not a finite number. */
static moe_status predict_block(const moe_model_t *model, const moe_data *data, size_t start,
                                size_t rows, prediction_buffers *b, double *out)
{
    moe_data_load_block(data, start, rows, b->block);
    moe_gate_log_proba(model, rows, b->block, b->proba);
    moe_status status = check_gate_block(b->proba, rows, model->n_experts, start);
    if (status != MOE_OK)
        return status;
    for (size_t i = 0; i < rows * model->n_experts; ++i)
        b->proba[i] = moe_exp(b->proba[i]);
    model->family_ops->predict(model, rows, b->block, b->proba, out, b->scratch);
    return check_prediction_block(out, rows, model->family_ops->prediction_width(model), start);
}

moe_status moe_model_predict(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                             double *out, size_t out_length)
{
    moe_data data;
    size_t width = model == NULL ? 1 : model->family_ops->prediction_width(model);
    moe_status status = prepare(model, n, X, ldx, NULL, NULL, 0, out, out_length, width, &data);
    if (status != MOE_OK)
        return status;
    prediction_buffers buffers;
    if ((status = prediction_buffers_allocate(model, &buffers)) != MOE_OK)
        return status;
    for (size_t start = 0; start < n && status == MOE_OK; start += MOE_BLOCK_ROWS) {
        size_t rows = n - start < MOE_BLOCK_ROWS ? n - start : MOE_BLOCK_ROWS;
        status = predict_block(model, &data, start, rows, &buffers, out + start * width);
    }
    prediction_buffers_free(&buffers);
    return status;
}

moe_status moe_model_posterior(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                               const double *y, double *out, size_t out_length)
{
    moe_data data;
    size_t K = model == NULL ? 1 : model->n_experts;
    moe_status status = prepare(model, n, X, ldx, y, NULL, 1, out, out_length, K, &data);
    if (status != MOE_OK)
        return status;
    moe_posterior_result result;
    return moe_posterior_pass(model, &data, out, 1, &result, NULL);
}

moe_status moe_model_loglik(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                            const double *y, const double *weights, double *loglik)
{
    if (loglik == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "loglik is NULL");
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, y, weights, 1, NULL, 0, 0, &data);
    if (status != MOE_OK)
        return status;
    moe_posterior_result result;
    status = moe_posterior_pass(model, &data, NULL, 1, &result, NULL);
    if (status == MOE_OK)
        *loglik = result.loglik;
    return status;
}

/* moe_criteria's versions (common/versioned.h). */
static const moe_struct_layout criteria_layout = {"criteria", MOE_CRITERIA_VERSION,
                                                  {sizeof(moe_criteria)}};
_Static_assert(MOE_CRITERIA_VERSION == 1, "a new version appends its size to criteria_layout");

moe_status moe_criteria_init(moe_criteria *criteria, unsigned int version)
{
    if (criteria == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "criteria is NULL");
    moe_criteria zero = MOE_CRITERIA_INIT;
    return moe_struct_fill(criteria, version, &zero, &criteria_layout, NULL);
}

moe_status moe_model_criteria(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                              const double *y, const double *weights, moe_criteria *criteria)
{
    return moe_criteria_on_threads(model, n, X, ldx, y, weights, 1, criteria);
}

moe_status moe_criteria_on_threads(const struct moe_model *model, size_t n, const double *X,
                                   size_t ldx, const double *y, const double *weights,
                                   size_t threads, moe_criteria *criteria)
{
    if (criteria == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "criteria is NULL");
    moe_status status =
        moe_check_struct_version(NULL, "criteria", criteria->version, MOE_CRITERIA_VERSION);
    if (status != MOE_OK)
        return status;
    moe_data data;
    status = prepare(model, n, X, ldx, y, weights, 1, NULL, 0, 0, &data);
    if (status != MOE_OK)
        return status;
    moe_posterior_result result;
    status = moe_posterior_pass(model, &data, NULL, threads, &result, NULL);
    if (status != MOE_OK)
        return status;
    return moe_criteria_from_sums(model, result.loglik, result.entropy,
                                  moe_data_total_weight(&data), criteria);
}

moe_status moe_criteria_from_sums(const struct moe_model *model, double loglik, double entropy,
                                  double n_obs, moe_criteria *criteria)
{
    double n_params = (double)moe_model_n_free_params(model);
    double aic = -2.0 * loglik + 2.0 * n_params;
    double bic = -2.0 * loglik + n_params * log(n_obs);
    double icl = bic + 2.0 * entropy;
    if (!isfinite(aic) || !isfinite(bic) || !isfinite(icl))
        return moe_fail(NULL, MOE_ERR_NUMERICAL,
                        "the information criteria overflow (log-likelihood %g)", loglik);
    moe_criteria values = {MOE_CRITERIA_VERSION, loglik, n_params, n_obs, aic, bic, icl,
                           entropy};
    return moe_struct_copy_out(criteria, &values, &criteria_layout, NULL);
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
    /* The weights are valid: loglik checked them. */
    double mean = -loglik / moe_weight_sum(n, weights);
    if (!isfinite(mean))
        return moe_fail(NULL, MOE_ERR_NUMERICAL,
                        "the cross-entropy overflows (log-likelihood %g over a total weight %g)",
                        loglik, moe_weight_sum(n, weights));
    *cross_entropy = mean;
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

static int is_classification(const struct moe_model *model)
{
    return model->family == MOE_FAMILY_LOGISTIC || model->family == MOE_FAMILY_MULTINOMIAL;
}

/*
 * The most probable class of every row of valid data, block by block: into classes (when
 * not NULL), and with labels y (when not NULL) the weights of the rows it names rightly
 * (*correct) and of all rows (*total).
 */
static moe_status class_pass(const moe_model_t *model, const moe_data *data, size_t *classes,
                             const double *y, double *correct, double *total)
{
    size_t width = model->family_ops->prediction_width(model), n = data->n;
    prediction_buffers buffers;
    double *predicted = moe_alloc_array(MOE_BLOCK_ROWS, width, sizeof(double));
    if (predicted == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate prediction buffers");
    moe_status status = prediction_buffers_allocate(model, &buffers);
    if (status != MOE_OK) {
        free(predicted);
        return status;
    }
    *correct = *total = 0.0;
    for (size_t start = 0; start < n && status == MOE_OK; start += MOE_BLOCK_ROWS) {
        size_t rows = n - start < MOE_BLOCK_ROWS ? n - start : MOE_BLOCK_ROWS;
        status = predict_block(model, data, start, rows, &buffers, predicted);
        for (size_t i = 0; i < rows && status == MOE_OK; ++i) {
            size_t best = predicted_class(predicted + i * width, width);
            if (classes != NULL)
                classes[start + i] = best;
            if (y != NULL) {
                double weight = moe_data_weight(data, start + i);
                *total += weight;
                if ((double)best == y[start + i])
                    *correct += weight;
            }
        }
    }
    prediction_buffers_free(&buffers);
    free(predicted);
    return status;
}

moe_status moe_model_accuracy(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                              const double *y, const double *weights, double *accuracy)
{
    if (accuracy == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "accuracy is NULL");
    if (model != NULL && !is_classification(model))
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "accuracy needs a classification family, the model is %s",
                        model->family_ops->name);
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, y, weights, 1, NULL, 0, 0, &data);
    double correct = 0.0, total = 0.0;
    if (status == MOE_OK)
        status = class_pass(model, &data, NULL, y, &correct, &total);
    if (status == MOE_OK)
        *accuracy = correct / total;
    return status;
}

size_t moe_model_prediction_width(const moe_model_t *model)
{
    return model == NULL ? 0 : model->family_ops->prediction_width(model);
}

moe_status moe_model_classify(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                              size_t *classes, size_t length)
{
    if (classes == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "classes is NULL");
    if (model != NULL && !is_classification(model))
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "classes need a classification family, the model is %s",
                        model->family_ops->name);
    if (model != NULL && length < n)
        return moe_fail(NULL, MOE_ERR_DIMENSION, "classes holds %zu values, %zu rows need %zu",
                        length, n, n);
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, NULL, NULL, 0, NULL, 0, 0, &data);
    double correct = 0.0, total = 0.0;
    if (status == MOE_OK)
        status = class_pass(model, &data, classes, NULL, &correct, &total);
    return status;
}

/* The expert of largest probability in each of `rows` rows of K values (ties: the lower). */
static void largest_per_row(const double *values, size_t rows, size_t K, size_t *out)
{
    for (size_t i = 0; i < rows; ++i) {
        const double *row = values + i * K;
        size_t best = 0;
        for (size_t k = 1; k < K; ++k)
            if (row[k] > row[best])
                best = k;
        out[i] = best;
    }
}

moe_status moe_model_cluster(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                             const double *y, size_t *experts, size_t length)
{
    if (experts == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "experts is NULL");
    if (model != NULL && length < n)
        return moe_fail(NULL, MOE_ERR_DIMENSION, "experts holds %zu values, %zu rows need %zu",
                        length, n, n);
    moe_data data;
    moe_status status = prepare(model, n, X, ldx, y, NULL, y != NULL, NULL, 0, 0, &data);
    if (status != MOE_OK)
        return status;
    size_t K = model->n_experts;
    double *proba = moe_alloc_array(MOE_BLOCK_ROWS, K, sizeof(double));
    if (proba == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a row block");
    /* Blocks through the public passes: the data is valid, so a failure is numerical, and
       its row (counted from the block's first) is renumbered to count from X's first. */
    for (size_t start = 0; start < n && status == MOE_OK; start += MOE_BLOCK_ROWS) {
        size_t rows = n - start < MOE_BLOCK_ROWS ? n - start : MOE_BLOCK_ROWS;
        const double *block_X = model->n_features == 0 ? X : X + start * ldx;
        if (y != NULL)
            status = moe_model_posterior(model, rows, block_X, ldx, y + start, proba, rows * K);
        else
            status = moe_model_gate_proba(model, rows, block_X, ldx, proba, rows * K);
        if (status != MOE_OK)
            status = moe_fail_rebase_row(NULL, status, start);
        else
            largest_per_row(proba, rows, K, experts + start);
    }
    free(proba);
    return status;
}
