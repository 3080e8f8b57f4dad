#include "pass/newton.h"
#include "common/linalg.h"
#include "moe/kernels.h"

#include <math.h>
#include <string.h>

#define HALVINGS 40

moe_status moe_newton_line_search(const moe_newton_problem *problem, double current,
                                  double decrement, double step, double *objective,
                                  int *accepted, int *gradient_ready, char *message)
{
    size_t m = problem->unknowns;
    memcpy(problem->saved, problem->x, m * sizeof(double));
    *accepted = 0;
    *gradient_ready = 0;
    double full = step;
    for (int halving = 0; halving < HALVINGS && !*accepted; ++halving, step *= 0.5) {
        for (size_t a = 0; a < m; ++a)
            problem->x[a] = problem->saved[a] + step * problem->direction[a];
        double trial = INFINITY;
        int ready = 0;
        moe_status status =
            problem->evaluate(problem->user, halving == 0 ? MOE_NEWTON_IF_CHEAP
                                                          : MOE_NEWTON_OBJECTIVE,
                              &trial, &ready, message);
        if (status != MOE_OK) {
            memcpy(problem->x, problem->saved, m * sizeof(double));
            return status;
        }
        if (moe_step_accepted(current, trial, decrement, step / full)) {
            *accepted = 1;
            *objective = trial;
            *gradient_ready = ready;
        }
    }
    if (!*accepted)
        memcpy(problem->x, problem->saved, m * sizeof(double));
    return MOE_OK;
}

/* With the gradient of an accepted full step and the previous Hessian, an estimate of the
   Newton decrement at the new point: nonzero when it says the minimisation has converged. */
static int estimate_converged(const moe_newton_problem *problem, double current,
                              double tolerance)
{
    size_t m = problem->unknowns;
    if (problem->solve != NULL)
        return 0;
    memcpy(problem->direction, problem->gradient, m * sizeof(double));
    int ignored = 0;
    if (moe_solve_spd(m, problem->hessian, problem->direction, problem->work, &ignored) != 0)
        return 0;
    double estimate = moe_dot(m, problem->gradient, problem->direction);
    return !(estimate > 0.0) || 0.5 * estimate <= tolerance * (1.0 + fabs(current));
}

moe_status moe_newton_minimise(const moe_newton_problem *problem,
                               const moe_newton_options *options, moe_newton_report *report,
                               double *objective, char *message)
{
    size_t m = problem->unknowns;
    double current = INFINITY;
    moe_status status = MOE_OK;
    /* A pass that gives the gradient with the full step's objective saves the next step's
       Hessian when the estimate from that gradient and the previous Hessian says the
       minimisation has converged: the full step is almost always accepted, and the Hessian is
       the expensive part of a pass. */
    int have_gradient = 0;
    for (size_t step = 0; step < options->max_steps; ++step) {
        if (have_gradient && estimate_converged(problem, current, options->tolerance))
            break;
        int ready = 0;
        if ((status = problem->evaluate(problem->user, MOE_NEWTON_DERIVATIVES, &current,
                                        &ready, message)) != MOE_OK)
            break;
        have_gradient = 0;
        for (size_t a = 0; a < m; ++a)
            problem->direction[a] = -problem->gradient[a];
        int ridge_used = 0, solved = 1;
        if (problem->solve != NULL)
            status = problem->solve(problem->user, problem->direction, &solved, message);
        else
            solved = moe_solve_spd(m, problem->hessian, problem->direction, problem->work,
                                   &ridge_used) == 0;
        if (status != MOE_OK)
            break;
        if (!solved) {
            report->line_search_failures++;
            break;
        }
        if (ridge_used)
            report->ridge_fallbacks++;
        double decrement = -moe_dot(m, problem->gradient, problem->direction);
        /* The first step is always taken: a warm start already within the decrement
           tolerance would otherwise freeze the unknowns for the rest of a fit, because the
           objective-scale decrement of a flat direction allows parameter errors near the
           square root of the tolerance (pitfall P11b of the EM spec). */
        if (!(decrement > 0.0) ||
            (step > 0 && 0.5 * decrement <= options->tolerance * (1.0 + fabs(current))))
            break;
        int accepted = 0;
        if ((status = moe_newton_line_search(problem, current, decrement, 1.0, &current,
                                             &accepted, &have_gradient, message)) != MOE_OK)
            break;
        report->steps++;
        if (!accepted) {
            report->line_search_failures++;
            break;
        }
    }
    *objective = current;
    return status;
}
