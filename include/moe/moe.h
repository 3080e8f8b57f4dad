/*
 * libmoe: Mixture-of-Experts models in C. Umbrella header.
 *
 * Link with -lmoe (pkg-config moe, or CMake find_package(moe) and the
 * target moe::moe).
 */
#ifndef MOE_MOE_H
#define MOE_MOE_H

#include "common.h"
#include "model.h"
#include "fitter.h"
#include "rng.h"
#include "estimator.h"

#endif /* MOE_MOE_H */
