#define _POSIX_C_SOURCE 200809L
#include "support/lockstep.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lockstep {
    size_t count;
    lockstep_worker *workers;
    pthread_barrier_t barrier;
    moe_combine_request *requests[LOCKSTEP_MAX_WORKERS];
    /* the outcome of the round */
    moe_status status;
    int has_row, final;
    size_t row;
    char message[MOE_COMBINE_MESSAGE_SIZE];
    double *sums;
    size_t capacity;
} lockstep;

typedef struct link {
    lockstep *shared;
    size_t index;
} link;

static void decide(lockstep *l)
{
    l->status = MOE_OK;
    l->has_row = l->final = 0;
    l->message[0] = '\0';
    size_t offset = 0, count = l->requests[0]->count;
    int finals = 0, differ = 0;
    for (size_t w = 0; w < l->count; ++w) {
        const moe_combine_request *r = l->requests[w];
        finals += r->final != 0;
        differ |= r->count != count;
        if (r->status != MOE_OK && l->status == MOE_OK) {
            l->status = r->status;
            l->has_row = r->has_row;
            l->row = offset + r->failed_row;
            snprintf(l->message, sizeof l->message, "%s", r->message);
        }
        offset += l->workers[w].n;
    }
    if (l->status != MOE_OK) {
        l->final = finals > 0;
        return;
    }
    if (finals > 0 && finals < (int)l->count) {
        l->status = MOE_ERR_INTERNAL;
        snprintf(l->message, sizeof l->message, "the workers are out of step");
        l->final = 1;
        return;
    }
    l->final = finals > 0;
    if (differ) {
        l->status = MOE_ERR_INTERNAL;
        l->final = 1;
        snprintf(l->message, sizeof l->message, "the workers sum different things");
        return;
    }
    if (count > l->capacity) {
        free(l->sums);
        l->sums = malloc(count * sizeof(double));
        l->capacity = l->sums == NULL ? 0 : count;
        if (l->sums == NULL) {
            l->status = MOE_ERR_OUT_OF_MEMORY;
            l->final = 1;
            snprintf(l->message, sizeof l->message, "no memory for the sums");
            return;
        }
    }
    for (size_t a = 0; a < count; ++a) {
        double sum = 0.0;
        for (size_t w = 0; w < l->count; ++w)
            sum += l->requests[w]->values[a];
        l->sums[a] = sum;
    }
}

static moe_status combine(void *user, moe_combine_request *request)
{
    link *me = user;
    lockstep *l = me->shared;
    lockstep_worker *worker = &l->workers[me->index];
    worker->requests++;
    worker->values_sent += request->count;
    l->requests[me->index] = request;
    pthread_barrier_wait(&l->barrier);
    if (me->index == 0)
        decide(l);
    pthread_barrier_wait(&l->barrier);
    request->status = l->status;
    request->has_row = l->has_row;
    request->failed_row = l->row;
    request->final = l->final;
    memcpy(request->message, l->message, MOE_COMBINE_MESSAGE_SIZE);
    if (l->status == MOE_OK && request->count > 0)
        memcpy(request->values, l->sums, request->count * sizeof(double));
    /* the next round's decision must not overwrite this one before all have read it */
    pthread_barrier_wait(&l->barrier);
    return MOE_OK;
}

typedef struct job {
    link me;
} job;

static void *run(void *argument)
{
    job *work = argument;
    lockstep_worker *worker = &work->me.shared->workers[work->me.index];
    worker->status = moe_fitter_set_combine(worker->fitter, combine, &work->me);
    if (worker->status == MOE_OK)
        worker->status = moe_fitter_fit(worker->fitter, worker->model, worker->n, worker->X,
                                        worker->ldx, worker->y, worker->weights);
    snprintf(worker->message, sizeof worker->message, "%s",
             worker->status == MOE_OK ? "" : moe_last_error());
    return NULL;
}

int lockstep_fit(size_t count, lockstep_worker *workers)
{
    if (count == 0 || count > LOCKSTEP_MAX_WORKERS)
        return -1;
    lockstep shared;
    memset(&shared, 0, sizeof shared);
    shared.count = count;
    shared.workers = workers;
    pthread_barrier_init(&shared.barrier, NULL, (unsigned)count);
    job jobs[LOCKSTEP_MAX_WORKERS];
    pthread_t threads[LOCKSTEP_MAX_WORKERS];
    for (size_t w = 0; w < count; ++w) {
        workers[w].requests = workers[w].values_sent = 0;
        jobs[w].me.shared = &shared;
        jobs[w].me.index = w;
        if (pthread_create(&threads[w], NULL, run, &jobs[w]) != 0)
            abort(); /* the others would wait for it forever */
    }
    for (size_t w = 0; w < count; ++w)
        pthread_join(threads[w], NULL);
    pthread_barrier_destroy(&shared.barrier);
    free(shared.sums);
    return 0;
}
