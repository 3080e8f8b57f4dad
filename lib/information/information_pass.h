/*
 * The observed information's sum over the rows (information_pass.c) and the order of the
 * parameters it reports (docs/ARCHITECTURE.md, "Standard errors").
 */
#ifndef MOE_LIB_INFORMATION_PASS_H
#define MOE_LIB_INFORMATION_PASS_H

#include "common/data.h"
#include "model/model_impl.h"

#include <stddef.h>

/* The parameters: the gate's free rows ((K - 1) x p), the experts' free rows (K x R x p),
   then the family's variances and second parameters (t's nu, Gamma's shape), K of each it
   has. Offsets of each part, P in all. */
typedef struct moe_information_layout {
    size_t K, p, R, P;
    size_t experts, variances, degrees;
} moe_information_layout;

moe_information_layout moe_information_layout_of(const struct moe_model *model);

/* The summary's sums beside the information (moe_fitter_summarize): each expert's gate
   probabilities, the log-likelihood, the posterior's entropy -sum_k r_k log r_k and the
   total weight, all summed with the rows' weights; MOE_INFORMATION_EXTRAS(K) doubles. */
#define MOE_INFORMATION_EXTRAS(K) ((K) + 3)

/*
 * information (P x P, both triangles) = sum_i w_i (minus the Hessian of log p(y_i | x_i))
 * in the layout's parameters, over the data's rows in chunks on `threads` threads (the
 * same bits for any number); extras (NULL, or MOE_INFORMATION_EXTRAS(K) doubles) the
 * summary's sums from the same pass. information NULL: the extras alone, at the cost of a
 * pass. MOE_ERR_NUMERICAL with *failed_row when a row has zero likelihood under every
 * expert.
 */
moe_status moe_information_sum(const struct moe_model *model, const moe_data *data,
                               size_t threads, double *information, double *extras,
                               size_t *failed_row, char *message);

#endif
