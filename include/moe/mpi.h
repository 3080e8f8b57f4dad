/*
 * libmoe_mpi: fitting a mixture of experts on rows spread over the ranks of an MPI
 * communicator (docs/ARCHITECTURE.md, "Distributed learning"). A separate library
 * (libmoe_mpi.so, pkg-config moe-mpi, CMake moe::mpi) over libmoe's public API, built when
 * MPI is found; this header is not part of <moe/moe.h>.
 *
 * Every rank calls moe_mpi_fit with its own rows (uneven across ranks). The fitter's
 * estimator chooses the method.
 *
 * An "em" fitter (since 1.2; what moe-mpi runs by default): the exact em of every rank's
 * rows, the model one process would fit on all of them, whatever the split.
 *   0. the agreement of step 0 below (the ranks must also agree on every pinned option of
 *      the fitter, threads aside);
 *   1. the start: with init = model and n_init = 1, root's model; with init = custom, each
 *      rank's start function (which must not read the rows); otherwise a sample drawn from
 *      every rank by its share of the rows (moe_mpi_support_rows from the seed; `support`
 *      rows, 0: 20000, at most all rows) goes to every rank, each rank fits it with
 *      `fitter` with 1 / ranks of the start search (search_shards, unless the fitter sets
 *      it) from its own seed (seed + 7919 rank), and the best fit on the sample is every
 *      rank's start (with one rank: the fitter's own fit of the sample);
 *   2. every rank runs `fitter` from that start on its own rows, with every pass's sums
 *      added over the ranks (moe_fitter_set_combine: a reduce at rank 0 and a broadcast, so
 *      that every rank holds the same bits); the messages travelled are O(K p^2) a pass
 *      whatever the rows. A failure on any rank (a bad value, a row no expert explains, an
 *      empty rank) is every rank's status and message, rows counted among all ranks' rows
 *      in rank order. `fitter`'s report is the fit's (over all rows); its init and n_init
 *      are restored after the call.
 *
 * An "ot" fitter: the seed's one-shot reduction of local fits, for when communication is
 * dear (one exchange of models instead of one per pass):
 *   0. the ranks agree on the call before anything else: if any rank's arguments are
 *      unusable (a NULL fitter or model, a fitter neither "em" nor "ot"), or the ranks
 *      differ in the model's structure (d, K, family, classes, intercept, link), support,
 *      root or the fitter's pinned options (threads aside), every rank returns the same
 *      status and message;
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
 * With one rank the result is the local fit. After a fit, moe_mpi_get_report says how well
 * the result explains every rank's rows (and whether the ranks' rows look like samples of
 * different distributions); moe_mpi_criteria, moe_mpi_information and moe_mpi_vcov give the
 * criteria and standard errors of a model over every rank's rows.
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

/* The collective fit described above. fitter is an "em" fitter (exact em) or an "ot"
   fitter (the one-shot reduction; its reduction options apply at root); model gives the
   structure (and with init = model, root's start) and receives the result on every rank.
   Collective: every rank of comm calls it, with the same root, support, model structure
   and fitter options (step 0 refuses a call where they differ). */
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

/*
 * What the last successful moe_mpi_fit on this thread measured, the same on every rank
 * (sums and maxima over the ranks, one allreduce each):
 *   n_obs          the rows (the sum of the weights) of every rank;
 *   loglik         the result's log-likelihood on every rank's rows (NaN if some row has
 *                  no likelihood under it);
 *   local_loglik   each rank's local fit (step 1) on its own rows, summed over the ranks;
 *   worst_gap      a rank's gap: (its local fit's - the result's log-likelihood) on its
 *                  rows, per row (nats); the gap of worst_rank, the rank whose gap most
 *                  exceeds its allowance;
 *   allowance      that rank's allowance, MOE_MPI_SHARD_GAP + P / n_r (P the free
 *                  parameters, n_r its rows): a local fit explains its own rows better than
 *                  any other model does by about P / 2 nats, more on few rows;
 *   shards_differ  1 when worst_gap exceeds the allowance: the result explains some rank's
 *                  rows much worse than that rank's own fit does, the sign of shards that
 *                  are not random samples of one distribution (rows sorted by a covariate,
 *                  split in blocks): shuffle the rows across the ranks first. Measured on
 *                  two-regime data (133 and 600 rows, 6 seeds each, 2 to 4 ranks, K = 2):
 *                  random shards' gaps were at most 0.52 times their allowance, blocks of
 *                  the rows sorted by the covariate at least 1.5 times it;
 *   seconds        the wall time of the fit (MPI_Wtime), the slowest rank's, from the
 *                  ranks' first agreement (step 0), where every rank has arrived, to the end.
 * With one rank, or after an exact em (method MOE_MPI_METHOD_EM, which has no local
 * fits), loglik = local_loglik and worst_gap = 0. report->version must be set
 * (MOE_MPI_REPORT_INIT); MOE_ERR_INVALID_ARGUMENT when no fit succeeded on this thread.
 */
#define MOE_MPI_SHARD_GAP 0.25
#define MOE_MPI_METHOD_OT 0 /* the one-shot reduction of local fits */
#define MOE_MPI_METHOD_EM 1 /* the exact em of every rank's rows */
#define MOE_MPI_REPORT_VERSION 2
typedef struct moe_mpi_report {
    unsigned int version; /* set to MOE_MPI_REPORT_VERSION before the call */
    int ranks;
    double n_obs;
    double loglik;
    double local_loglik;
    double worst_gap;
    double allowance;
    int worst_rank;
    int shards_differ;
    double seconds;
    /* Since version 2 (libmoe 1.2). */
    int method;          /* MOE_MPI_METHOD_* */
    size_t iterations;   /* exact em: the fit's iterations (0 for ot) */
    size_t passes;       /* exact em: the sums the ranks combined (passes over the rows) */
    double bytes;        /* exact em: the most bytes a rank sent and received to combine
                            them: O(K p^2) a pass whatever the rows (0 for ot) */
} moe_mpi_report;

#define MOE_MPI_REPORT_INIT                                                                  \
    { MOE_MPI_REPORT_VERSION, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0.0, 0, 0, 0, 0.0 }
/* *report zeroed with the given version (1 .. MOE_MPI_REPORT_VERSION), for bindings that
   cannot use the macro. */
MOE_MPI_API moe_status moe_mpi_report_init(moe_mpi_report *report, unsigned int version);

MOE_MPI_API moe_status moe_mpi_get_report(moe_mpi_report *report);

/*
 * Statistics of one model over the rows of every rank: collective, every rank passes the
 * same model (structure and parameters) and its own rows (any number, 0 included), and
 * every rank returns the same status (a failing rank's, named in moe_mpi_last_error) and
 * the same values, which are those of the single-process function on all the rows:
 *   moe_mpi_criteria     moe_model_criteria (log-likelihood, entropy and n_obs summed over
 *                        the ranks by one allreduce; n_obs is the total of every rank);
 *   moe_mpi_information  moe_model_information_penalized (the observed information is a sum
 *                        over rows, and so is N times the penalty: one allreduce of P x P);
 *   moe_mpi_vcov         its inverse (moe_model_vcov_penalized), inverted at rank 0 and
 *                        broadcast; MOE_ERR_NUMERICAL on every rank when it is not positive
 *                        definite.
 * Zero penalties give moe_model_information / moe_model_vcov. MOE_ERR_INVALID_ARGUMENT when
 * the ranks' models differ in their number of free parameters.
 */
MOE_MPI_API moe_status moe_mpi_criteria(MPI_Comm comm, const moe_model_t *model, size_t n,
                                        const double *X, size_t ldx, const double *y,
                                        const double *weights, moe_criteria *criteria);
MOE_MPI_API moe_status moe_mpi_information(MPI_Comm comm, const moe_model_t *model, size_t n,
                                           const double *X, size_t ldx, const double *y,
                                           const double *weights, double gate_l2,
                                           double expert_ridge, double *information,
                                           size_t length);
MOE_MPI_API moe_status moe_mpi_vcov(MPI_Comm comm, const moe_model_t *model, size_t n,
                                    const double *X, size_t ldx, const double *y,
                                    const double *weights, double gate_l2, double expert_ridge,
                                    double *covariance, size_t length);

/*
 * Rows redistributed at random across the ranks, before moe_mpi_fit, so that every rank's
 * rows are a random sample of all of them (rows sorted by a covariate and split in blocks
 * are not: see moe_mpi_report.shards_differ). Each of a rank's n rows (d values each, X with
 * leading dimension ldx, y, weights or NULL for ones) goes to a rank drawn uniformly from
 * the seed with the rank as the stream; a rank receives its rows in the order of their
 * source rank, then of their index there: the same seed and number of ranks give the same
 * rows everywhere. Collective, two calls as the buffer convention of moe/common.h: X_out
 * NULL and capacity 0 on every rank store in *rows_out the rows this rank will receive;
 * then X_out (capacity rows of d values, leading dimension d), y_out (capacity values) and
 * weights_out (capacity values, or NULL on every rank: weights not wanted) receive them.
 * Every rank returns the same status: MOE_ERR_BUFFER_TOO_SMALL (with *rows_out stored) when
 * some rank's capacity is short, MOE_ERR_INVALID_ARGUMENT when the ranks differ in d, in
 * asking for the size or in passing weights_out; a failing rank's status and message
 * otherwise (NULL pointers, ldx < d, more than 2^31 values to send).
 */
MOE_MPI_API moe_status moe_mpi_shuffle(MPI_Comm comm, uint64_t seed, size_t n, size_t d,
                                       const double *X, size_t ldx, const double *y,
                                       const double *weights, size_t capacity, double *X_out,
                                       double *y_out, double *weights_out, size_t *rows_out);

/* The message of the last failing moe_mpi_* call on this thread ("" if none). */
MOE_MPI_API const char *moe_mpi_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* MOE_MPI_H */
