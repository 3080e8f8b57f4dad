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
