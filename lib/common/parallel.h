/*
 * Row chunks in parallel with a reduction that does not depend on the number
 * of threads.
 *
 * The rows are cut into chunks of a fixed size (MOE_CHUNK_ROWS, never a
 * function of the thread count). Each chunk sums into its own zeroed partial
 * accumulator, and the partials are added to the total in chunk order. The
 * floating-point operations are then the same for 1 thread or 16, so a fit
 * gives bit-identical results whatever `threads` is. Threads take chunks
 * round-robin; only the short ordered addition of a partial is serial.
 */
#ifndef MOE_LIB_PARALLEL_H
#define MOE_LIB_PARALLEL_H

#include "common/data.h"
#include "moe/common.h"

#include <stddef.h>

/* 16 blocks: large enough that adding a partial (up to ~10^5 doubles) is
   negligible next to computing it, small enough to balance two threads at n = 10^4. */
#define MOE_CHUNK_ROWS (16 * MOE_BLOCK_ROWS)

typedef struct moe_chunk_job {
    size_t n;                /* rows */
    size_t accumulator_size; /* doubles summed over chunks (may be 0) */
    size_t workspace_size;   /* doubles of scratch per thread */
    /*
     * Process rows [start, start + rows) into `accumulator` (zeroed for each chunk),
     * using `workspace`. Returns 0, or 1 + the index of the row that failed (the run
     * then reports the failure with the lowest row).
     */
    size_t (*run)(void *context, size_t start, size_t rows, double *accumulator,
                  double *workspace);
    void *context;
} moe_chunk_job;

/*
 * Run `job` on `threads` threads (0: as many as OpenMP offers; always at most one per
 * chunk; 1 without OpenMP). total (accumulator_size doubles) receives the sum. On a
 * failing row, returns MOE_ERR_NUMERICAL with *failed_row set and the message left to
 * the caller; MOE_ERR_OUT_OF_MEMORY with a message if a workspace cannot be allocated.
 */
moe_status moe_run_chunks(const moe_chunk_job *job, size_t threads, double *total,
                          size_t *failed_row, char *message);

/*
 * Scratch for the thread workspaces of the runs inside one fitter call. A fit makes
 * hundreds of passes that each want the same hundreds of kilobytes; allocated afresh every
 * time, such a block is mapped, faulted in page by page and unmapped again (by the C
 * library past its mapping threshold, by AddressSanitizer's allocator always). The fitter
 * (fitter/fitter_run.c) puts a scratch of its call's own in place on the calling
 * thread with moe_scratch_enter, takes it away with moe_scratch_leave and frees it with
 * moe_scratch_free before returning: nothing outlives the call, nothing is shared between
 * threads. Runs outside a fitter call allocate as before.
 */
typedef struct moe_scratch {
    double *memory;
    size_t capacity; /* doubles */
    int busy;        /* a run on this thread is using it */
} moe_scratch;

#define MOE_SCRATCH_INIT {NULL, 0, 0}

/* Make `scratch` the calling thread's; returns the one it replaces (for moe_scratch_leave). */
moe_scratch *moe_scratch_enter(moe_scratch *scratch);
void moe_scratch_leave(moe_scratch *outer);
void moe_scratch_free(moe_scratch *scratch);

/* The rows of a block of a pass over `rows` rows cut into blocks of MOE_BLOCK_ROWS, at
   most: a pass over a few rows (a mini-batch, a row of a stream) carves its scratch for
   those only, not for a whole block, which costs a page-faulting allocation per call. */
static inline size_t moe_block_rows_for(size_t rows)
{
    return rows == 0 ? 1 : rows < MOE_BLOCK_ROWS ? rows : MOE_BLOCK_ROWS;
}

/* The thread count `threads` (0: automatic) resolves to on this machine. */
size_t moe_resolve_threads(size_t threads);

#endif
