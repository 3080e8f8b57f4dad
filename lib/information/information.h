/*
 * The summary's entry into the information (moe_fitter_summarize, fitter/fitter_summary.c):
 * one pass for the summary's sums and the covariance.
 */
#ifndef MOE_LIB_INFORMATION_H
#define MOE_LIB_INFORMATION_H

#include "information/information_pass.h"

/*
 * extras (MOE_INFORMATION_EXTRAS(K) doubles, information_pass.h) and, when covariance is
 * not NULL (length values), the covariance of the reported parameters under the penalties
 * (as moe_model_vcov_penalized), from one pass on `threads` threads. A covariance that
 * does not exist (MOE_ERR_UNSUPPORTED: no information for the model; MOE_ERR_NUMERICAL:
 * not positive definite) leaves the return MOE_OK and sets *covariance_status, with the
 * reason as the thread's last error; the return is the pass's status (bad data, a row of
 * zero likelihood, memory).
 */
moe_status moe_information_summary(const struct moe_model *model, size_t n, const double *X,
                                   size_t ldx, const double *y, const double *weights,
                                   double gate_l2, double expert_ridge, size_t threads,
                                   double *extras, double *covariance, size_t length,
                                   moe_status *covariance_status);

#endif
