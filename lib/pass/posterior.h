/*
 * The E-step kernel: posterior responsibilities and the log-likelihood in
 * one pass over row blocks, in log space. EM, the public posterior/loglik
 * functions and the information criteria all go through it.
 *
 * EM asks the same pass for what its M-step needs (moe_pass_request), so an
 * EM iteration reads X once: the gate's derivatives at the current gate for
 * the new responsibilities (the first Newton step of the gate M-step), the
 * previous responsibilities' gate objective and gradient at the current gate
 * (to accept or continue the previous gate step), and the experts' sufficient
 * statistics.
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
 * infinite or undefined under the model is MOE_ERR_NUMERICAL. threads as the
 * fitter option (results do not depend on it).
 */
moe_status moe_posterior_pass(const struct moe_model *model, const moe_data *data, double *resp,
                              size_t threads, moe_posterior_result *result, char *message);

typedef struct moe_pass_request {
    size_t threads;
    int gate;     /* gate derivatives at the model's gate, targets the new responsibilities */
    int previous; /* also with the responsibilities resp holds on entry as targets */
    int experts;  /* the family's sufficient statistics (if moe_family_has_statistics) */
} moe_pass_request;

/*
 * What a pass sums (sum scale, weights included; J = K - 1, m = J p). With
 * D(r) = sum_i w_i sum_k r_ik (-log pi_ik) the gate M-step's data term:
 *   gate_data, gate_gradient (J x p), gate_hessian_parts (moe_softmax_hessian_parts):
 *       D and the derivative parts of moe_softmax_block_derivatives, new targets
 *   previous_gate_data, previous_gate_gradient: D and its gradient, previous targets
 *   experts: the family's statistics
 * Arrays not requested are NULL.
 */
typedef struct moe_pass_sums {
    moe_posterior_result posterior;
    double gate_data, previous_gate_data, weight;
    double *gate_gradient, *previous_gate_gradient, *gate_hessian_parts, *experts;
    double *memory;
    size_t size;
} moe_pass_sums;

moe_status moe_pass_sums_allocate(const struct moe_model *model, const moe_pass_request *request,
                                  moe_pass_sums *sums, char *message);
void moe_pass_sums_free(moe_pass_sums *sums);

/* The E-step at the model (resp must not be NULL when request->previous) plus what
   `request` asks for, into sums (allocated for the same request, or the same with
   previous set). */
moe_status moe_pass_run(const struct moe_model *model, const moe_data *data, double *resp,
                        const moe_pass_request *request, moe_pass_sums *sums, char *message);

/* moe_model_criteria on `threads` threads (the same bits for any number; pass/predict.c). */
moe_status moe_criteria_on_threads(const struct moe_model *model, size_t n, const double *X,
                                   size_t ldx, const double *y, const double *weights,
                                   size_t threads, moe_criteria *criteria);

/* *criteria (its caller's version) from a pass's log-likelihood, entropy and total weight:
   what moe_model_criteria reports. */
moe_status moe_criteria_from_sums(const struct moe_model *model, double loglik, double entropy,
                                  double n_obs, moe_criteria *criteria);

#endif
