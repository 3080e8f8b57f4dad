/*
 * Around the transport reduction (ot_reduce.c): the paper's baselines W (the component-wise
 * weighted average of canonically ordered models) and Mid (the local model closest to all
 * the others), the checks of what the reduction takes (the target's K, the families it is
 * derived for), and the screen that leaves out local models far below the best on the
 * support rows.
 */
#include "estimators/ot/ot_pool.h"
#include "common/inputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The baselines ---------------------------------------------------------------------- */

moe_status ot_same_k(moe_fit_context *context, const moe_model_t *target, size_t count,
                     const moe_model_t *const *models)
{
    for (size_t m = 0; m < count; ++m)
        if (moe_model_n_experts(models[m]) != moe_model_n_experts(target))
            return moe_context_fail(context, MOE_ERR_UNSUPPORTED,
                        "the middle and average reductions need local models with the reduced "
                        "model's number of experts");
    return MOE_OK;
}

/* W: canonical order aligns the labels, then every parameter is averaged with the weights. */
moe_status ot_average(moe_fit_context *context, moe_model_t *target, size_t count,
                      const moe_model_t *const *models, const double *weights)
{
    moe_status status = ot_same_k(context, target, count, models);
    if (status != MOE_OK)
        return status;
    size_t K = moe_model_n_experts(target), p = moe_model_n_inputs(target);
    int variances = moe_model_family(target) == MOE_FAMILY_GAUSSIAN; /* Poisson: none */
    double *sum = calloc(2 * K * p + K, sizeof(double)), *part = calloc(2 * K * p + K, sizeof(double));
    if (sum == NULL || part == NULL)
        status = moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t m = 0; m < count && status == MOE_OK; ++m) {
        moe_model_t *ordered = NULL;
        status = moe_model_clone(&ordered, models[m]);
        if (status == MOE_OK)
            status = moe_model_canonicalize(ordered);
        if (status == MOE_OK)
            status = moe_model_get_gate(ordered, part, K * p);
        if (status == MOE_OK)
            status = moe_model_get_experts(ordered, part + K * p, K * p);
        if (status == MOE_OK && variances)
            status = moe_model_get_variances(ordered, part + 2 * K * p, K);
        for (size_t i = 0; status == MOE_OK && i < 2 * K * p + K; ++i)
            sum[i] += weights[m] * part[i];
        moe_model_free(ordered);
    }
    /* An average of held values is that value up to rounding: put it back exactly. */
    unsigned char *inputs = malloc(p + 1);
    if (status == MOE_OK && inputs == NULL)
        status = moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == MOE_OK) {
        moe_model_get_inputs(target, MOE_PART_GATE, inputs, p);
        moe_inputs_hold(K, p, moe_inputs_or_every(p, inputs), sum);
        moe_model_get_inputs(target, MOE_PART_EXPERTS, inputs, p);
        moe_inputs_hold(K, p, moe_inputs_or_every(p, inputs), sum + K * p);
    }
    free(inputs);
    if (status == MOE_OK)
        status = moe_model_set_gate(target, sum, K * p);
    if (status == MOE_OK)
        status = moe_model_set_experts(target, sum + K * p, K * p);
    if (status == MOE_OK && variances)
        status = moe_model_set_variances(target, sum + 2 * K * p, K);
    free(sum);
    free(part);
    if (status == MOE_OK)
        status = moe_context_iteration(context, 0, 0, 0.0);
    return status;
}

/*
 * The local models worth reducing: with the support rows' responses, a model whose
 * log-likelihood per support row is more than `gap` below the best model's is left out, and
 * the others' weights are renormalised. The shards are random samples of the same rows, so
 * their fits differ by sampling noise (hundredths of a nat per row); a local em that ended in
 * a poorer optimum (an expert split across two regimes) is tenths of a nat below, and its
 * components, pooled with the others', pulled the reduced experts towards it
 * (bench/RESULTS.md). Without responses, or with gap 0, every model is kept.
 */
moe_status ot_screen(moe_fit_context *context, size_t count, const moe_model_t *const *models,
                     const double *weights, const moe_rows *support, double gap,
                     const moe_model_t **kept, double *kept_weights, size_t *n_kept)
{
    double *score = malloc((count > 0 ? count : 1) * sizeof(double));
    if (score == NULL)
        return moe_context_fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the reduction");
    int judged = gap > 0.0 && support != NULL && support->y != NULL && support->n > 0;
    double best = -INFINITY, total = 0.0;
    for (size_t m = 0; m < count; ++m) {
        score[m] = 0.0;
        if (judged && weights[m] > 0.0) {
            double loglik = -INFINITY;
            if (moe_model_loglik(models[m], support->n, support->X, support->ldx, support->y,
                                 support->weights, &loglik) != MOE_OK || !isfinite(loglik))
                loglik = -INFINITY;
            score[m] = loglik / (double)support->n;
            best = score[m] > best ? score[m] : best;
        }
    }
    /* The screen assumes the shards are random samples, so that most fits agree: when less
       than half the weight passes, the shards differ (a split by x, say), every model is
       pooled, and moe-mpi's report says that they differ. */
    double passing = 0.0;
    for (size_t m = 0; judged && isfinite(best) && m < count; ++m)
        passing += weights[m] > 0.0 && score[m] >= best - gap ? weights[m] : 0.0;
    if (passing < 0.5)
        judged = 0;
    *n_kept = 0;
    for (size_t m = 0; m < count; ++m)
        if (!judged || !isfinite(best) || (weights[m] > 0.0 && score[m] >= best - gap)) {
            kept[*n_kept] = models[m];
            kept_weights[(*n_kept)++] = weights[m];
            total += weights[m];
        }
    free(score);
    if (*n_kept == 0 || !(total > 0.0))
        return moe_context_fail(context, MOE_ERR_INVALID_ARGUMENT,
                                "no local model has a positive weight");
    for (size_t m = 0; m < *n_kept; ++m)
        kept_weights[m] /= total;
    return MOE_OK;
}


/* Mid: the local model m* minimising sum_m lambda_m R(fhat_m -> fhat_m*) on the support. */
moe_status ot_middle(moe_fit_context *context, moe_model_t *target, size_t count,
                     const moe_model_t *const *models, const double *weights, const pool *pl)
{
    moe_status status = ot_same_k(context, target, count, models);
    if (status != MOE_OK)
        return status;
    if (pl->S == 0)
        return moe_context_fail(context, MOE_ERR_EMPTY_INPUT,
                                "the middle reduction needs support rows");
    size_t K = pl->K, S = pl->S;
    double best = INFINITY;
    size_t chosen = 0;
    for (size_t target_m = 0; target_m < count; ++target_m) {
        double total = 0.0;
        for (size_t m = 0; m < count; ++m) {
            if (m == target_m || weights[m] == 0.0)
                continue;
            /* source weights pi_k^(m)(x) (mass / lambda_m), each to its cheapest target */
            for (size_t k = 0; k < K; ++k) {
                size_t l = m * K + k;
                for (size_t s = 0; s < S; ++s) {
                    double cheapest = INFINITY;
                    for (size_t j = 0; j < K; ++j) {
                        size_t t = target_m * K + j;
                        double cost = ot_divergence(pl, pl->local_mean[l * S + s],
                                                 pl->variance_hat[l], pl->local_mean[t * S + s],
                                                 pl->variance_hat[t]);
                        cheapest = cost < cheapest ? cost : cheapest;
                    }
                    total += pl->mass[l * S + s] * cheapest;
                }
            }
        }
        if (total < best) {
            best = total;
            chosen = target_m;
        }
    }
    status = moe_model_copy_parameters(target, models[chosen]);
    if (status == MOE_OK)
        status = moe_context_iteration(context, 0, 0, -best);
    return status;
}

moe_status ot_check_family(moe_fit_context *context, const moe_model_t *model)
{
    moe_family family = moe_model_family(model);
    if ((family == MOE_FAMILY_GAUSSIAN && moe_model_link(model) == MOE_LINK_IDENTITY) ||
        family == MOE_FAMILY_POISSON)
        return MOE_OK;
    /* Why, by family: a user of t or logistic experts asks what to do instead. */
    const char *why =
        family == MOE_FAMILY_LOGISTIC || family == MOE_FAMILY_MULTINOMIAL
            ? "the paper's logistic update is not an exact minimiser of the transport cost"
        : family == MOE_FAMILY_STUDENT_T
            ? "the transport cost between t experts has no closed-form minimiser"
        : family == MOE_FAMILY_GAUSSIAN
            ? "the transport cost's expert update is derived for the identity link"
            : "the transport cost's expert update is derived for those two families only";
    char kind[64], text[320];
    if (family == MOE_FAMILY_GAUSSIAN)
        snprintf(kind, sizeof kind, "gaussian experts with the %s link",
                 moe_link_name(moe_model_link(model)));
    else
        snprintf(kind, sizeof kind, "%s experts", moe_family_name(family));
    snprintf(text, sizeof text,
             "ot reduces gaussian experts with the identity link and poisson experts, not %s: "
             "%s; fit them with em",
             kind, why);
    return moe_context_fail(context, MOE_ERR_UNSUPPORTED, text);
}

