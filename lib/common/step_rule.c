/*
 * The library's one step-acceptance rule (moe_step_accepted in moe/estimator.h): the gate's
 * and the classification experts' Newton line searches, em's one-step gate check and gd's
 * backtracking all use it.
 */
#include "moe/kernels.h"

#include <float.h>
#include <math.h>

/* Armijo's sufficient-decrease fraction of the predicted decrease. */
#define SUFFICIENT_DECREASE 1e-4
/* Below this relative decrement the objective cannot resolve the decrease that is left
   (docs/ARCHITECTURE.md, "Gate Newton"): a step within rounding of the objective is then
   accepted instead of refused. */
#define NEAR_OPTIMUM 1e-8
#define ROUNDING (16.0 * DBL_EPSILON)

int moe_step_accepted(double before, double after, double decrement, double fraction)
{
    double scale = 1.0 + fabs(before);
    if (after <= before - SUFFICIENT_DECREASE * fraction * decrement)
        return 1;
    return 0.5 * decrement <= NEAR_OPTIMUM * scale && after <= before + ROUNDING * scale;
}
