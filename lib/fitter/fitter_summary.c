/*
 * moe_fitter_summarize (moe/fitter.h): a fit's summary from the observed information's pass
 * over its rows (information/information.h) and the E-step's for the criteria, on the
 * fitter's threads and under its penalties.
 */
#include "fitter/fitter_impl.h"
#include "information/information.h"
#include "pass/posterior.h"
#include "common/check.h"

#include <stdlib.h>

/* The arguments the pass does not check itself. */
static moe_status check_summary_arguments(moe_fitter_t *fitter, const moe_model_t *model,
                                          const moe_criteria *criteria,
                                          const double *mean_gate, size_t mean_gate_length,
                                          const double *covariance,
                                          const moe_status *covariance_status)
{
    if (model == NULL)
        return moe_fail(fitter->message, MOE_ERR_NULL_POINTER, "model is NULL");
    if (criteria != NULL) {
        moe_status status = moe_check_struct_version(fitter->message, "criteria",
                                                     criteria->version, MOE_CRITERIA_VERSION);
        if (status != MOE_OK)
            return status;
    }
    if (mean_gate != NULL && mean_gate_length < model->n_experts)
        return moe_fail(fitter->message, MOE_ERR_DIMENSION,
                        "mean_gate holds %zu values, %zu needed", mean_gate_length,
                        model->n_experts);
    if (covariance != NULL && covariance_status == NULL)
        return moe_fail(fitter->message, MOE_ERR_NULL_POINTER,
                        "covariance_status is NULL (it says whether the covariance exists)");
    return MOE_OK;
}

moe_status moe_fitter_summarize(moe_fitter_t *fitter, const moe_model_t *model, size_t n,
                                const double *X, size_t ldx, const double *y,
                                const double *weights, moe_criteria *criteria,
                                double *mean_gate, size_t mean_gate_length, double *covariance,
                                size_t covariance_length, moe_status *covariance_status)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    moe_status status = check_summary_arguments(fitter, model, criteria, mean_gate,
                                                mean_gate_length, covariance, covariance_status);
    if (status != MOE_OK)
        return status;
    long long threads = 1;
    double gate_l2 = 0.0, expert_ridge = 0.0;
    if (moe_fitter_get_int(fitter, MOE_OPT_THREADS, &threads) != MOE_OK || threads < 0)
        threads = 1;
    if (moe_fitter_get_double(fitter, MOE_OPT_GATE_L2, &gate_l2) != MOE_OK ||
        moe_fitter_get_double(fitter, MOE_OPT_EXPERT_RIDGE, &expert_ridge) != MOE_OK)
        gate_l2 = expert_ridge = 0.0; /* an estimator without penalties */
    size_t K = model->n_experts;
    double *extras = malloc(MOE_INFORMATION_EXTRAS(K) * sizeof(double));
    if (extras == NULL)
        return moe_fail(fitter->message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the summary");
    moe_status covariance_result = MOE_OK;
    status = moe_information_summary(model, n, X, ldx, y, weights, gate_l2, expert_ridge,
                                     (size_t)threads, extras, covariance, covariance_length,
                                     &covariance_result);
    if (status == MOE_OK && covariance_result != MOE_OK)
        moe_fail_propagate(fitter->message, covariance_result); /* why there is none */
    /* The criteria from the E-step's own pass rather than the information's sums: one pass
       more (about a fifth of the information's cost), for the same bits as
       moe_model_criteria and moe_model_loglik, which a user compares them with. */
    double total_weight = extras[K + 2];
    if (status == MOE_OK && criteria != NULL)
        status = moe_criteria_on_threads(model, n, X, ldx, y, weights, (size_t)threads,
                                         criteria);
    if (status == MOE_OK && mean_gate != NULL)
        for (size_t k = 0; k < K; ++k)
            mean_gate[k] = extras[k] / total_weight;
    if (status == MOE_OK && covariance_status != NULL)
        *covariance_status = covariance_result;
    free(extras);
    return status == MOE_OK ? MOE_OK : moe_fail_propagate(fitter->message, status);
}
