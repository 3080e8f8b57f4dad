/*
 * Workers in threads that fit their own rows in lockstep through moe_fitter_set_combine:
 * the smallest engine of sums that travel, and a reference for the protocol an engine
 * follows (moe/fitter.h): every worker's request is read, the first failing worker's
 * outcome (its row counted in all rows) goes to all, else the sums are added in worker
 * order and every worker receives the same bits.
 */
#ifndef MOE_TESTS_LOCKSTEP_H
#define MOE_TESTS_LOCKSTEP_H

#include <moe/moe.h>
#include <stddef.h>

#define LOCKSTEP_MAX_WORKERS 8

typedef struct lockstep_worker {
    /* in */
    size_t n;
    const double *X; /* n x ldx */
    size_t ldx;
    const double *y;
    const double *weights; /* may be NULL */
    moe_fitter_t *fitter;  /* its options set; the combine function is set by the run */
    moe_model_t *model;    /* the start (init = model), the fit on return */
    /* out */
    moe_status status;
    char message[256];
    size_t requests;     /* combine requests it made */
    size_t values_sent;  /* doubles it handed over */
} lockstep_worker;

/* Run the workers' fits in threads to the end; 0, or -1 when a thread could not start. */
int lockstep_fit(size_t count, lockstep_worker *workers);

#endif
