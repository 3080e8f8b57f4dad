/*
 * Newton's method with step halving for a smooth convex objective: the one loop behind the
 * softmax regressions (the gate, logistic and multinomial experts: pass/softmax.c) and the
 * Poisson experts' weighted regressions (families/family_poisson.c). The caller owns the
 * unknowns and the passes over the data; the loop owns the solve (moe_solve_spd), the
 * stopping rule on the Newton decrement, the line search (the library's acceptance rule,
 * moe_step_accepted) and the counts. The objective never increases beyond rounding.
 */
#ifndef MOE_LIB_NEWTON_H
#define MOE_LIB_NEWTON_H

#include "moe/common.h"

#include <stddef.h>

typedef struct moe_newton_options {
    size_t max_steps;
    double tolerance; /* stop when the Newton decrement / 2 <= tolerance * (1 + |Q|) */
} moe_newton_options;

typedef struct moe_newton_report {
    size_t steps;
    size_t ridge_fallbacks;
    size_t line_search_failures;
    int separated; /* the data term reached zero without a penalty: the optimum is at infinity
                      (set by the softmax caller; the loop leaves it alone) */
} moe_newton_report;

/* Levels of an evaluation. */
enum {
    MOE_NEWTON_OBJECTIVE = 0,   /* the objective only */
    MOE_NEWTON_IF_CHEAP = 1,    /* and the gradient, if the pass gives it at little cost */
    MOE_NEWTON_DERIVATIVES = 2  /* and the gradient and the Hessian */
};

typedef struct moe_newton_problem {
    size_t unknowns;
    double *x;         /* the unknowns, changed in place */
    double *gradient;  /* unknowns: the mean-scale gradient at the last evaluation with it */
    double *hessian;   /* unknowns^2: the Hessian at the last evaluation with derivatives */
    double *direction; /* unknowns */
    double *saved;     /* unknowns */
    double *work;      /* unknowns (unknowns + 1): moe_solve_spd's */
    /*
     * The objective at x (+inf where it is not defined), and at `level` its derivatives into
     * gradient and hessian; *gradient_ready 1 when it filled the gradient. A failure ends
     * the minimisation with its status.
     */
    moe_status (*evaluate)(void *user, int level, double *objective, int *gradient_ready,
                           char *message);
    void *user;
    /*
     * NULL: the Newton direction from the Hessian (moe_solve_spd). Else the direction is
     * the caller's (a Hessian-free one, say): direction holds -gradient on entry and
     * receives the step; *solved 0 when there is none. The Hessian is then never read.
     */
    moe_status (*solve)(void *user, double *direction, int *solved, char *message);
} moe_newton_problem;

/*
 * Minimise from x: up to max_steps Newton steps, each halved until accepted; the first step
 * is always taken. A system that cannot be solved, or a step that finds no decrease, ends
 * it as a line-search failure with x at the best point. *objective receives the objective
 * at the final x (+inf without a step).
 */
moe_status moe_newton_minimise(const moe_newton_problem *problem,
                               const moe_newton_options *options, moe_newton_report *report,
                               double *objective, char *message);

/*
 * Halve from `step` along problem->direction until moe_step_accepted (from `current`, the
 * full step predicting the decrease `decrement`); the first trial asks MOE_NEWTON_IF_CHEAP.
 * *accepted 1 with *objective and *gradient_ready at the new x, else (or on a failure) x is
 * unchanged.
 */
moe_status moe_newton_line_search(const moe_newton_problem *problem, double current,
                                  double decrement, double step, double *objective,
                                  int *accepted, int *gradient_ready, char *message);

#endif
