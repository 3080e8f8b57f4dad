/*
 * Parameter copies between two models of the same shape through the public getters and
 * setters only, for the built-in estimators written against moe/estimator.h alone (cqt, ot),
 * which do not see the model's internals.
 */
#ifndef MOE_LIB_MODEL_COPY_H
#define MOE_LIB_MODEL_COPY_H

#include "moe/model.h"

/* Gate, experts and (Gaussian) variances of `from` into `to`; shapes must match. */
moe_status moe_estimator_copy_parameters(moe_model_t *to, const moe_model_t *from);

#endif
