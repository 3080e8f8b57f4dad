/*
 * libmoe_mpi: fitting a mixture of experts on rows spread over the ranks of an MPI
 * communicator (docs/ARCHITECTURE.md, "Distributed learning"). A separate library
 * (libmoe_mpi.so, pkg-config moe-mpi, CMake moe::mpi) over libmoe's public API, built when
 * MPI is found; this header is not part of <moe/moe.h>.
 *
 * Every rank calls moe_mpi_fit with its own rows (any number, uneven across ranks):
 *   0. the ranks agree on the call before anything else: if any rank's arguments are
 *      unusable (a NULL fitter or model, a fitter not "ot"), or the ranks differ in the
 *      model's structure (d, K, family, classes, intercept, link), support, root or em's
 *      pinned options (threads aside), every rank returns the same status and message;
 *   1. each rank fits its rows with em, with the pinned options of `fitter` (an "ot" fitter:
 *      n_init, max_iter, tol, seed, init, penalties, ...), from the structure of `model`;
 *   2. the ranks agree on the outcome before anything is gathered: if any rank failed (bad
 *      rows, a failed fit), every rank returns that status, and moe_mpi_last_error names
 *      the rank and its message; no rank hangs or aborts;
 *   3. the local models travel to `root` as bytes of the model file format, with the
 *      support sample: `support` rows in all (0: N / ranks), each rank giving a share
 *      proportional to its rows, chosen by moe_mpi_support_rows;
 *   4. root reduces them with moe_fitter_aggregate(fitter, ...) (weights: the ranks' shares
 *      of the rows) and broadcasts the result; every rank returns the same model.
 * With one rank the result is the local fit.
 */
#ifndef MOE_MPI_H
#define MOE_MPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "moe.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define MOE_MPI_API __attribute__((visibility("default")))
#else
#define MOE_MPI_API
#endif

/* The collective fit described above. fitter must be an "ot" fitter (its reduction
   options apply at root); model gives the structure and receives the result on every
   rank. Collective: every rank of comm calls it, with the same root, support, model
   structure and fitter options (step 0 refuses a call where they differ). */
MOE_MPI_API moe_status moe_mpi_fit(MPI_Comm comm, int root, moe_fitter_t *fitter,
                                   moe_model_t *model, size_t n, const double *X, size_t ldx,
                                   const double *y, const double *weights, size_t support);

/* How many of the support rows each of `ranks` ranks gives: counts[r] = floor(S c_(r+1) /
   N) - floor(S c_r / N), c_r the rows of ranks before r, N the total: they sum to S. */
MOE_MPI_API moe_status moe_mpi_support_counts(size_t ranks, const size_t *rows,
                                              size_t support, size_t *counts);

/* Which of a rank's n rows it gives: `count` ascending indices by selection sampling from
   the seed with the rank as the stream, so anyone can replay the sample. */
MOE_MPI_API moe_status moe_mpi_support_rows(uint64_t seed, int rank, size_t n, size_t count,
                                            size_t *indices);

/* The message of the last failing moe_mpi_* call on this thread ("" if none). */
MOE_MPI_API const char *moe_mpi_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* MOE_MPI_H */
