/*
 * The E-step kernel: posterior responsibilities and the log-likelihood in
 * one pass over row blocks, in log space. EM, the public posterior/loglik
 * functions and the information criteria all go through it.
 */
#ifndef MOE_LIB_POSTERIOR_H
#define MOE_LIB_POSTERIOR_H

#include "common/data.h"
#include "model/model_impl.h"

typedef struct moe_posterior_result {
    double loglik;  /* sum_i w_i log p(y_i | x_i) */
    double entropy; /* -sum_i w_i sum_k r_ik log r_ik */
} moe_posterior_result;

/*
 * resp (n x K) receives the responsibilities; it may be NULL when only the
 * sums are wanted. data->y must be set. A row whose likelihood is zero,
 * infinite or undefined under the model is MOE_ERR_NUMERICAL.
 */
moe_status moe_posterior_pass(const struct moe_model *model, const moe_data *data, double *resp,
                              moe_posterior_result *result, char *message);

#endif
