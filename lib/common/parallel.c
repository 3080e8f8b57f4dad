#include "common/parallel.h"
#include "common/combine.h"
#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

size_t moe_resolve_threads(size_t threads)
{
#ifdef _OPENMP
    if (threads == 0) {
        int available = omp_get_max_threads();
        return available > 0 ? (size_t)available : 1;
    }
    return threads;
#else
    (void)threads;
    return 1;
#endif
}

/* One chunk into its partial, then the partial into the total; returns 0 or 1 + row. */
static size_t run_chunk(const moe_chunk_job *job, size_t chunk, double *partial,
                        double *workspace)
{
    size_t start = chunk * MOE_CHUNK_ROWS;
    size_t rows = job->n - start < MOE_CHUNK_ROWS ? job->n - start : MOE_CHUNK_ROWS;
    if (job->accumulator_size > 0)
        memset(partial, 0, job->accumulator_size * sizeof(double));
    return job->run(job->context, start, rows, partial, workspace);
}

/* The scratch of the fitter call running on this thread, if any (moe_scratch_enter). */
static _Thread_local moe_scratch *current_scratch;

moe_scratch *moe_scratch_enter(moe_scratch *scratch)
{
    moe_scratch *outer = current_scratch;
    current_scratch = scratch;
    return outer;
}

void moe_scratch_leave(moe_scratch *outer)
{
    current_scratch = outer;
}

void moe_scratch_free(moe_scratch *scratch)
{
    free(scratch->memory);
    *scratch = (moe_scratch)MOE_SCRATCH_INIT;
}

/* The threads' workspaces: the call's scratch when there is one and no run on this thread
   holds it (a chunk that runs chunks of its own gets fresh memory), else fresh memory. */
static double *take_workspace(moe_scratch *scratch, size_t threads, size_t per_thread)
{
    if (per_thread > SIZE_MAX / sizeof(double) / threads)
        return NULL;
    size_t doubles = threads * per_thread;
    if (scratch == NULL || scratch->busy)
        return malloc(doubles * sizeof(double));
    if (scratch->capacity < doubles) {
        free(scratch->memory);
        scratch->capacity = 0;
        scratch->memory = malloc(doubles * sizeof(double));
        if (scratch->memory == NULL)
            return NULL;
        scratch->capacity = doubles;
    }
    scratch->busy = 1;
    return scratch->memory;
}

static void give_workspace(moe_scratch *scratch, double *memory)
{
    if (scratch != NULL && memory == scratch->memory)
        scratch->busy = 0;
    else
        free(memory);
}

static void add_partial(const moe_chunk_job *job, const double *partial, double *total)
{
    for (size_t a = 0; a < job->accumulator_size; ++a)
        total[a] += partial[a];
}

moe_status moe_run_chunks(const moe_chunk_job *job, size_t threads, double *total,
                          size_t *failed_row, char *message)
{
    size_t chunks = (job->n + MOE_CHUNK_ROWS - 1) / MOE_CHUNK_ROWS;
    threads = moe_resolve_threads(threads);
    if (threads > chunks)
        threads = chunks > 0 ? chunks : 1;
    size_t per_thread = job->accumulator_size + job->workspace_size;
    moe_scratch *scratch = current_scratch;
    double *memory = take_workspace(scratch, threads, per_thread > 0 ? per_thread : 1);
    if (memory == NULL) {
        moe_status status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                                     "cannot allocate %zu thread workspaces of %zu values",
                                     threads, per_thread);
        return moe_combine_pass(total, job->accumulator_size, status, 0, failed_row, message);
    }
    if (job->accumulator_size > 0)
        memset(total, 0, job->accumulator_size * sizeof(double));
    /* The lowest failing chunk; chunks after a known failure are skipped, chunks before it
       always run, so the row reported does not depend on timing. */
    size_t failed_chunk = chunks, failure = 0;
#ifdef _OPENMP
    if (threads > 1) {
#pragma omp parallel num_threads((int)threads)
        {
            double *partial = memory + (size_t)omp_get_thread_num() * per_thread;
            double *workspace = partial + job->accumulator_size;
#pragma omp for ordered schedule(static, 1)
            for (size_t chunk = 0; chunk < chunks; ++chunk) {
                size_t skip;
#pragma omp atomic read
                skip = failed_chunk;
                size_t outcome = skip < chunk ? 0 : run_chunk(job, chunk, partial, workspace);
#pragma omp ordered
                {
                    if (outcome != 0 && chunk < failed_chunk) {
#pragma omp atomic write
                        failed_chunk = chunk;
                        failure = outcome;
                    }
                    if (failed_chunk == chunks)
                        add_partial(job, partial, total);
                }
            }
        }
    } else
#endif
    {
        (void)failed_chunk;
        for (size_t chunk = 0; chunk < chunks && failure == 0; ++chunk) {
            failure = run_chunk(job, chunk, memory, memory + job->accumulator_size);
            if (failure == 0)
                add_partial(job, memory, total);
        }
    }
    give_workspace(scratch, memory);
    if (failure != 0)
        *failed_row = failure - 1;
    /* A combined fit (common/combine.h): every worker's sums, every worker's outcome. */
    return moe_combine_pass(total, job->accumulator_size,
                            failure != 0 ? MOE_ERR_NUMERICAL : MOE_OK, failure != 0,
                            failed_row, message);
}
