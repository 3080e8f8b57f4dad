/*
 * The observed information of a model's free parameters on data, and its inverse
 * (docs/ARCHITECTURE.md, "Standard errors"). The sum over the rows is information_pass.c's
 * (Louis' identity row by row, exact); here the checks, the penalised variants, which add
 * the fitters' quadratic penalty, whose Hessian is constant (add_penalty), and the inverse.
 * Coefficients of inputs a part does not see are computed with the rest and dropped at
 * the end (kept_parameters): the held parameters are not estimated, and the information of
 * the others is the same submatrix whatever the held values are.
 */
#include "information/information.h"
#include "model/family.h"
#include "common/alloc.h"
#include "common/check.h"
#include "common/linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef moe_information_layout layout;

/*
 * The parameters the information reports: the layout's, less the coefficients of inputs a
 * part does not see (held, not estimated). Their indices in the layout go to kept (when
 * not NULL); returns how many.
 */
static size_t kept_parameters(const struct moe_model *model, const layout *l, size_t *kept)
{
    size_t count = 0, p = l->p;
    for (size_t index = 0; index < l->P; ++index) {
        int keep = 1;
        if (index < l->experts)
            keep = moe_input_free(model->gate_inputs, index % p);
        else if (index < l->variances)
            keep = moe_input_free(model->expert_inputs, (index - l->experts) % p);
        if (keep && kept != NULL)
            kept[count] = index;
        count += (size_t)keep;
    }
    return count;
}

/* The information over the kept parameters, from the layout's P x P. */
static moe_status compress_information(const struct moe_model *model, const layout *l,
                                       const double *information, double *out)
{
    size_t P = l->P, Q = kept_parameters(model, l, NULL);
    if (Q == P) {
        memcpy(out, information, P * P * sizeof(double));
        return MOE_OK;
    }
    size_t *kept = moe_alloc_array(Q + 1, 1, sizeof(size_t));
    if (kept == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the information");
    kept_parameters(model, l, kept);
    for (size_t a = 0; a < Q; ++a)
        for (size_t b = 0; b < Q; ++b)
            out[a * Q + b] = information[kept[a] * P + kept[b]];
    free(kept);
    return MOE_OK;
}

/* A penalty weight as the fitter's options take it: finite and not negative. */
static moe_status check_penalty(const char *name, double value)
{
    if (!isfinite(value) || value < 0.0)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "%s is %g; a penalty must be finite and at least 0", name, value);
    return MOE_OK;
}

static moe_status check_penalties(double gate_l2, double expert_ridge)
{
    moe_status status = check_penalty("gate_l2", gate_l2);
    return status == MOE_OK ? check_penalty("expert_ridge", expert_ridge) : status;
}

/*
 * information += N times the Hessian of the fitters' penalty (include/moe/fitter.h, "The
 * objective"), N the total weight. Per non-intercept input j the gate penalty is
 * (l2/2) [sum_{a<K} w_aj^2 - (sum_{a<K} w_aj)^2 / K] with the reference row w_Kj = 0 fixed,
 * so its Hessian over the K - 1 free rows is l2 (I - 11'/K). Multinomial experts are
 * penalised the same way over their classes (reference class fixed at 0): ridge (I - 11'/C)
 * over the C - 1 free rows; Gaussian, logistic, Poisson and t experts have one row, ridge I.
 * Variances and intercepts carry no penalty. A zero weight adds nothing, so no entry changes
 * (not even the sign of a zero).
 */
static moe_status add_penalty(const struct moe_model *model, const layout *l, double total,
                              double gate_l2, double expert_ridge, double *information)
{
    size_t K = l->K, p = l->p, R = l->R, P = l->P;
    size_t first = (size_t)model->intercept;
    double gate = gate_l2 * total, ridge = expert_ridge * total;
    if (!isfinite(gate) || !isfinite(ridge))
        return moe_fail(NULL, MOE_ERR_NUMERICAL,
                        "the penalty times the total weight %g overflows", total);
    if (gate_l2 != 0.0)
        for (size_t j = first; j < p; ++j)
            for (size_t a = 0; a + 1 < K; ++a)
                for (size_t b = 0; b + 1 < K; ++b)
                    information[(a * p + j) * P + b * p + j] +=
                        gate * ((a == b ? 1.0 : 0.0) - 1.0 / (double)K);
    if (expert_ridge != 0.0) {
        /* One free row (R = 1) has no reference class to centre against. */
        double classes = model->family_ops->uses_classes ? (double)(R + 1) : INFINITY;
        for (size_t k = 0; k < K; ++k)
            for (size_t j = first; j < p; ++j)
                for (size_t q1 = 0; q1 < R; ++q1)
                    for (size_t q2 = 0; q2 < R; ++q2)
                        information[(l->experts + (k * R + q1) * p + j) * P + l->experts +
                                    (k * R + q2) * p + j] +=
                            ridge * ((q1 == q2 ? 1.0 : 0.0) - 1.0 / classes);
    }
    for (size_t i = 0; i < P * P; ++i)
        if (!isfinite(information[i]))
            return moe_fail(NULL, MOE_ERR_NUMERICAL, "the penalised information is not finite");
    return MOE_OK;
}

/* The model's information is defined here (the identity link) and within the sizes the
   pass takes. */
static moe_status check_information_exists(const struct moe_model *model)
{
    if (model->link != MOE_LINK_IDENTITY)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "the information is derived for the identity link only");
    if (model->n_experts > 64 || (model->family_ops->uses_classes &&
                                  model->n_classes > 256))
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "the information takes at most 64 experts and 256 classes");
    return MOE_OK;
}

/* The checks of the data every entry point makes; data receives the rows. */
static moe_status check_data(const struct moe_model *model, size_t n, const double *X,
                             size_t ldx, const double *y, const double *weights, moe_data *data)
{
    moe_status status = moe_check_design(NULL, n, X, ldx, model->n_features);
    if (status == MOE_OK)
        status = moe_check_response_values(NULL, n, y);
    if (status == MOE_OK)
        status = model->family_ops->check_response(model, n, X, ldx, y, NULL);
    if (status == MOE_OK)
        status = moe_check_weights(NULL, n, weights);
    if (status != MOE_OK)
        return status;
    if (n == 0)
        return moe_fail(NULL, MOE_ERR_EMPTY_INPUT, "no rows");
    moe_data rows = {n, model->n_features, model->n_features == 0 ? 0 : ldx, model->intercept,
                     X, y, weights};
    *data = rows;
    return MOE_OK;
}

/*
 * The pass over the checked data: the penalised information of the reported parameters
 * into out (NULL: none; else length values, checked by the caller) and the summary's
 * extras (NULL: none).
 */
static moe_status information_pass(const struct moe_model *model, const moe_data *data,
                                   double gate_l2, double expert_ridge, size_t threads,
                                   double *extras, double *out)
{
    layout l = moe_information_layout_of(model);
    size_t P = l.P, failed_row = 0;
    double *information = NULL;
    if (out != NULL && (information = moe_alloc_array(P, P, sizeof(double))) == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the information");
    moe_status status =
        moe_information_sum(model, data, threads, information, extras, &failed_row, NULL);
    if (status == MOE_ERR_NUMERICAL)
        status = moe_fail(NULL, MOE_ERR_NUMERICAL,
                          "row %zu has zero likelihood under every expert", failed_row);
    if (out != NULL && status == MOE_OK && (gate_l2 != 0.0 || expert_ridge != 0.0))
        status = add_penalty(model, &l, moe_data_total_weight(data), gate_l2, expert_ridge,
                             information);
    if (out != NULL && status == MOE_OK)
        status = compress_information(model, &l, information, out);
    free(information);
    return status;
}

/* Room for the reported information in out (NULL: none asked for). */
static moe_status check_room(const struct moe_model *model, const double *out, size_t length)
{
    if (out == NULL)
        return MOE_OK;
    layout l = moe_information_layout_of(model);
    size_t reported = kept_parameters(model, &l, NULL);
    if (reported > 0 && (length / reported < reported))
        return moe_fail(NULL, MOE_ERR_DIMENSION, "the output holds %zu values, %zu x %zu needed",
                        length, reported, reported);
    return MOE_OK;
}

static moe_status information_of(const moe_model_t *model, size_t n, const double *X,
                                 size_t ldx, const double *y, const double *weights,
                                 double gate_l2, double expert_ridge, double *out,
                                 size_t length)
{
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    moe_status status = check_penalties(gate_l2, expert_ridge);
    if (status == MOE_OK)
        status = check_information_exists(model);
    if (status == MOE_OK && out == NULL)
        status = moe_fail(NULL, MOE_ERR_NULL_POINTER, "the output is NULL");
    if (status == MOE_OK)
        status = check_room(model, out, length);
    moe_data data;
    if (status == MOE_OK)
        status = check_data(model, n, X, ldx, y, weights, &data);
    return status == MOE_OK
               ? information_pass(model, &data, gate_l2, expert_ridge, 1, NULL, out)
               : status;
}

moe_status moe_model_information(const moe_model_t *model, size_t n, const double *X,
                                 size_t ldx, const double *y, const double *weights,
                                 double *information, size_t length)
{
    return information_of(model, n, X, ldx, y, weights, 0.0, 0.0, information, length);
}

moe_status moe_model_information_penalized(const moe_model_t *model, size_t n, const double *X,
                                           size_t ldx, const double *y, const double *weights,
                                           double gate_l2, double expert_ridge,
                                           double *information, size_t length)
{
    return information_of(model, n, X, ldx, y, weights, gate_l2, expert_ridge, information,
                          length);
}

/* covariance holds an information matrix of P x P: replaced by its inverse. */
static moe_status invert_information(size_t P, double *covariance)
{
    if (P == 0)
        return MOE_OK;
    /* The information of a fit that is not a maximum, or of a degenerate one, need not be
       positive definite: then there is no covariance to report. */
    double *copy = malloc(P * P * sizeof(double));
    if (copy == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(copy, covariance, P * P * sizeof(double));
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)P, copy, (lapack_int)P);
    if (info == 0)
        info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'U', (lapack_int)P, copy, (lapack_int)P);
    if (info != 0) {
        free(copy);
        return moe_fail(NULL, MOE_ERR_NUMERICAL,
                        "the observed information is not positive definite (parameter %d): "
                        "an expert without data, separation, or a point that is not a "
                        "maximum; standard errors are not defined",
                        (int)info);
    }
    for (size_t a = 0; a < P; ++a)
        for (size_t b = 0; b < P; ++b)
            covariance[a * P + b] = a <= b ? copy[a * P + b] : copy[b * P + a];
    free(copy);
    for (size_t i = 0; i < P * P; ++i)
        if (!isfinite(covariance[i]))
            return moe_fail(NULL, MOE_ERR_NUMERICAL, "the covariance is not finite");
    return MOE_OK;
}

moe_status moe_model_vcov(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                          const double *y, const double *weights, double *covariance,
                          size_t length)
{
    moe_status status = information_of(model, n, X, ldx, y, weights, 0.0, 0.0, covariance,
                                       length);
    return status == MOE_OK ? invert_information(moe_model_n_free_params(model), covariance)
                            : status;
}

moe_status moe_model_vcov_penalized(const moe_model_t *model, size_t n, const double *X,
                                    size_t ldx, const double *y, const double *weights,
                                    double gate_l2, double expert_ridge, double *covariance,
                                    size_t length)
{
    moe_status status = information_of(model, n, X, ldx, y, weights, gate_l2, expert_ridge,
                                       covariance, length);
    return status == MOE_OK ? invert_information(moe_model_n_free_params(model), covariance)
                            : status;
}

moe_status moe_information_summary(const struct moe_model *model, size_t n, const double *X,
                                   size_t ldx, const double *y, const double *weights,
                                   double gate_l2, double expert_ridge, size_t threads,
                                   double *extras, double *covariance, size_t length,
                                   moe_status *covariance_status)
{
    *covariance_status = MOE_OK;
    moe_status status = check_penalties(gate_l2, expert_ridge);
    if (status == MOE_OK)
        status = check_room(model, covariance, length);
    moe_data data;
    if (status == MOE_OK)
        status = check_data(model, n, X, ldx, y, weights, &data);
    if (status != MOE_OK)
        return status;
    char reason[MOE_MESSAGE_SIZE] = "";
    if (covariance != NULL && (*covariance_status = check_information_exists(model)) != MOE_OK) {
        memcpy(reason, moe_last_error(), sizeof reason);
        covariance = NULL; /* the summary's other numbers all the same */
    }
    status = information_pass(model, &data, gate_l2, expert_ridge, threads, extras, covariance);
    if (status == MOE_OK && covariance != NULL) {
        *covariance_status = invert_information(moe_model_n_free_params(model), covariance);
        if (*covariance_status != MOE_OK)
            memcpy(reason, moe_last_error(), sizeof reason);
    }
    if (status == MOE_OK && *covariance_status != MOE_OK)
        moe_fail(NULL, *covariance_status, "%s", reason); /* the reason stays readable */
    return status;
}
