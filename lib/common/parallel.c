#include "common/parallel.h"
#include "common/error.h"

#include <stdatomic.h>
#include <stddef.h>
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

/*
 * The threads' workspaces of the last finished run, kept for the next. A fit makes
 * hundreds of passes, each wanting the same hundreds of kilobytes; allocated afresh, such
 * a block is mapped, zero-filled page by page and unmapped every time (by the C library
 * past its mapping threshold, by AddressSanitizer's allocator always: there a default fit
 * of 600 rows took 1.07 s, 0.39 s with this). One spare at a time, taken and given back by
 * atomic exchange, so that concurrent runs never share one: a run that finds none (or a
 * small one) allocates its own, and of two given back the later one stays. Spares above
 * SPARE_LIMIT doubles are freed at once, and the library's unloading frees the last.
 */
#define SPARE_LIMIT ((size_t)1 << 21) /* 16 MiB */

typedef struct spare {
    size_t capacity; /* doubles in values */
    size_t padding;  /* values 16-byte aligned, as malloc's */
    double values[];
} spare;

static _Atomic(spare *) kept_spare;

static double *take_workspace(size_t threads, size_t per_thread)
{
    if (per_thread > (SIZE_MAX / sizeof(double) - sizeof(spare)) / threads)
        return NULL;
    size_t doubles = threads * per_thread;
    spare *found = atomic_exchange(&kept_spare, NULL);
    if (found != NULL && found->capacity >= doubles)
        return found->values;
    free(found);
    found = malloc(sizeof(spare) + doubles * sizeof(double));
    if (found == NULL)
        return NULL;
    found->capacity = doubles;
    return found->values;
}

static void give_workspace(double *values)
{
    spare *given = (spare *)((char *)values - offsetof(spare, values));
    if (given->capacity > SPARE_LIMIT) {
        free(given);
        return;
    }
    free(atomic_exchange(&kept_spare, given));
}

__attribute__((destructor)) static void free_kept_spare(void)
{
    free(atomic_exchange(&kept_spare, NULL));
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
    double *memory = take_workspace(threads, per_thread > 0 ? per_thread : 1);
    if (memory == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate %zu thread workspaces of %zu values", threads,
                        per_thread);
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
    give_workspace(memory);
    if (failure != 0) {
        *failed_row = failure - 1;
        return MOE_ERR_NUMERICAL;
    }
    return MOE_OK;
}
