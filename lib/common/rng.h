/* The library's PRNG is public (moe/rng.h): estimators outside libmoe use the same streams. */
#ifndef MOE_LIB_RNG_H
#define MOE_LIB_RNG_H

#include "moe/rng.h"

#endif
