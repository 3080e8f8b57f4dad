/*
 * Sums that travel (moe_fitter_set_combine in moe/fitter.h): the combiner of the fitter
 * call running on this thread, and the requests every sum over the fit's rows makes.
 *
 * The fitter puts a combiner in place for the estimator's run (moe_combiner_enter, as it
 * does its scratch); without one, every function here leaves the sums and the outcome as
 * they are, so a fit without a combine function is the one-process fit bit for bit.
 * moe_run_chunks combines every pass it runs; the few sums over the fit's rows made
 * outside it (a total weight, a count of an expert's responses) call moe_combine_sums.
 */
#ifndef MOE_LIB_COMBINE_H
#define MOE_LIB_COMBINE_H

#include "common/error.h"
#include "common/data.h"
#include "moe/fitter.h"

#include <stddef.h>

_Static_assert(MOE_MESSAGE_SIZE == MOE_COMBINE_MESSAGE_SIZE, "one message size");

typedef struct moe_combiner {
    moe_combine_fn function;
    void *user;
    int finished;     /* a final failure was agreed: no further requests */
    moe_status agreed; /* and what it was */
    char agreed_message[MOE_MESSAGE_SIZE];
    size_t requests;
    /* the fit's rows on this worker, and the total weight of all workers' rows */
    const double *X, *y, *weights;
    size_t n;
    double total_weight;
} moe_combiner;

/* Make `combiner` the calling thread's; returns the one it replaces (for moe_combiner_leave). */
moe_combiner *moe_combiner_enter(moe_combiner *combiner);
void moe_combiner_leave(moe_combiner *outer);

/* Whether sums over the fit's rows are combined on this thread. */
int moe_combining(void);

/*
 * A pass's sums and outcome. local is this worker's status; a row failure has has_row set
 * and its row in *failed_row. Returns the outcome every worker shares: a row failure with
 * *failed_row in all workers' numbering (the message left to the caller, as from
 * moe_run_chunks), another failure with its message in `message`, or MOE_OK with `values`
 * holding the sums over all workers.
 */
moe_status moe_combine_pass(double *values, size_t count, moe_status local, int has_row,
                            size_t *failed_row, char *message);

/* Sums that cannot fail locally. */
moe_status moe_combine_sums(double *values, size_t count, char *message);

/* The call's last request: the outcome every worker returns, its message in `message`. */
moe_status moe_combine_final(moe_status local, char *message);

#endif
