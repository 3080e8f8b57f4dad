/*
 * The family's start variants, tried from the start search's best end point.
 *
 * Some families have optima that differ in a parameter no partition of the rows reaches:
 * with t experts and gross outliers, one optimum gives the heavy tail (nu near 1) to one
 * regime's expert and another to the other's, and EM does not move a tail from one expert
 * to another, because the expert that holds it explains the outliers and the other's
 * regime stays clean. Starts drawn from partitions all begin at the same nu, so the search
 * finds whichever tail the partition's first iterations favour (on generated two-regime
 * data of 2000 rows with 5% outliers, 6 of 10 default fits ended 5 to 17 nats below the
 * best of ten seeds; bench/t_defaults). The family names its variants (family op
 * start_variant); each runs EM to convergence from the best end point, and the likelihood
 * judges.
 */
#include "kernels/start_search.h"
#include "kernels/kernels.h"
#include "model/family.h"

#include <math.h>
#include <string.h>

/* EM iterations of one variant's run, at most (the survivors' cap in the search). */
#define VARIANT_ITERATIONS 100
/* End points whose objectives differ by less than this per unit weight are one optimum. */
#define DISTINCT_OBJECTIVE 1e-7

moe_status moe_start_variant_search(moe_fit_context *context, const moe_fit_settings *settings,
                                    struct moe_model **best, double *objective,
                                    const moe_data *sample, double *resp, double budget)
{
    const struct moe_family_ops *ops = (*best)->family_ops;
    if (ops->start_variant == NULL || !isfinite(*objective))
        return MOE_OK;
    char *message = context->message;
    double total = moe_data_total_weight(sample);
    /* A failed variant leaves its message; the fit's is the one from before. */
    char kept_message[MOE_MESSAGE_SIZE];
    memcpy(kept_message, message, MOE_MESSAGE_SIZE);
    struct moe_model *trial = NULL;
    moe_status status = moe_model_clone(&trial, *best);
    if (status != MOE_OK)
        return moe_fail_propagate(message, status);
    double iterations_left = budget / (double)(sample->n > 0 ? sample->n : 1);
    int improved = 1;
    while (status == MOE_OK && improved && iterations_left >= 1.0) {
        improved = 0;
        for (size_t v = 0; !improved && status == MOE_OK && iterations_left >= 1.0; ++v) {
            moe_model_copy_parameters(trial, *best);
            if (!ops->start_variant(trial, v))
                break;
            double reached = -INFINITY;
            size_t used = 0;
            moe_status run = moe_search_em(context, settings, trial, sample, resp,
                                           VARIANT_ITERATIONS, settings->tolerance, &reached,
                                           &used);
            iterations_left -= (double)(used > 0 ? used : 1);
            if (run == MOE_ERR_OUT_OF_MEMORY) {
                status = run;
                break;
            }
            if (run != MOE_OK || !isfinite(reached) ||
                !(reached - *objective > DISTINCT_OBJECTIVE * (total + fabs(*objective))) ||
                moe_search_collapsed(trial, settings, sample, resp))
                continue;
            struct moe_model *swap = *best;
            *best = trial;
            trial = swap;
            *objective = reached;
            improved = 1;
        }
    }
    moe_model_free(trial);
    if (status == MOE_OK)
        memcpy(message, kept_message, MOE_MESSAGE_SIZE);
    return status;
}
