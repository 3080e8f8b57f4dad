/*
 * libmoe: Mixture-of-Experts models in C. Umbrella header.
 *
 * Link with -lmoe (pkg-config moe, or CMake find_package(moe) and the
 * target moe::moe). Writing an estimator of your own: moe/estimator.h (the
 * contract) and moe/kernels.h (the built-in estimators' parts,
 * experimental); docs/API.md says what is stable.
 */
#ifndef MOE_MOE_H
#define MOE_MOE_H

#include "common.h"
#include "model.h"
#include "fitter.h"
#include "rng.h"

#endif /* MOE_MOE_H */
