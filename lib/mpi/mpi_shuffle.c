/*
 * moe_mpi_shuffle (moe/mpi.h): rows redistributed at random across the ranks, each row to a
 * rank drawn from the seed with its source rank as the stream, in two collective calls (the
 * sizes, then the rows).
 */
#include "mpi_internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows redistributed at random ---------------------------------------------------------- */

/* What moe_mpi_shuffle's ranks share: each row's rank, the counts each way. */
typedef struct shuffle_plan {
    MPI_Comm comm;
    int rank, size;
    size_t n, d;
    int *destinations;                         /* n: the rank each row goes to */
    unsigned long long *sent, *received;       /* size: rows to and from each rank */
    size_t rows_in;
    int *layout;                               /* 4 x size: counts, displacements each way */
    double *packed;                            /* n x max(d, 1): a block in ranks' order */
} shuffle_plan;

static void plan_free(shuffle_plan *plan)
{
    free(plan->destinations);
    free(plan->sent);
    free(plan->received);
    free(plan->layout);
    free(plan->packed);
}

/* Local checks and each row's rank, then the counts exchanged. */
static moe_status plan_shuffle(shuffle_plan *plan, uint64_t seed, const double *X, size_t ldx,
                               const double *y, size_t *rows_out)
{
    size_t n = plan->n, size = (size_t)plan->size;
    char message[MESSAGE_SIZE] = "";
    moe_status status = MOE_OK;
    plan->destinations = malloc((n > 0 ? n : 1) * sizeof(int));
    plan->sent = calloc(size, sizeof *plan->sent);
    plan->received = calloc(size, sizeof *plan->received);
    plan->layout = malloc(4 * size * sizeof(int));
    plan->packed = malloc((n > 0 ? n : 1) * (plan->d > 0 ? plan->d : 1) * sizeof(double));
    if (rows_out == NULL || (n > 0 && (y == NULL || (plan->d > 0 && X == NULL)))) {
        status = MOE_ERR_NULL_POINTER;
        snprintf(message, sizeof message, "rows_out, X or y is NULL");
    } else if (n > 0 && plan->d > 0 && ldx < plan->d) {
        status = MOE_ERR_DIMENSION;
        snprintf(message, sizeof message, "ldx %zu is below d %zu", ldx, plan->d);
    } else if (!plan->destinations || !plan->sent || !plan->received || !plan->layout ||
               !plan->packed) {
        status = MOE_ERR_OUT_OF_MEMORY;
        snprintf(message, sizeof message, "out of memory");
    }
    status = mpi_agree(plan->comm, plan->rank, status, message);
    if (status != MOE_OK)
        return status;
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0x73687566ULL + (uint64_t)plan->rank); /* "shuf" */
    for (size_t i = 0; i < n; ++i) {
        plan->destinations[i] = (int)moe_rng_below(&rng, size);
        ++plan->sent[plan->destinations[i]];
    }
    MPI_Alltoall(plan->sent, 1, MPI_UNSIGNED_LONG_LONG, plan->received, 1,
                 MPI_UNSIGNED_LONG_LONG, plan->comm);
    for (size_t r = 0; r < size; ++r)
        plan->rows_in += (size_t)plan->received[r];
    *rows_out = plan->rows_in;
    return MOE_OK;
}

/* The ranks agree on d, on asking for the size and on wanting weights; then on every rank's
   room for its rows. */
static moe_status agree_on_shuffle(const shuffle_plan *plan, int query, int weighted,
                                   size_t capacity, int has_outputs)
{
    unsigned long long values[6] = {plan->d, (unsigned long long)query,
                                    (unsigned long long)weighted};
    for (int i = 0; i < 3; ++i)
        values[3 + i] = ~values[i];
    MPI_Allreduce(MPI_IN_PLACE, values, 6, MPI_UNSIGNED_LONG_LONG, MPI_MAX, plan->comm);
    static const char *const what[3] = {"d", "asking for the size (X_out NULL, capacity 0)",
                                        "passing weights_out"};
    for (int i = 0; i < 3; ++i)
        if (values[i] != ~values[3 + i])
            return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "the ranks differ in %s (%llu and %llu)",
                        what[i], ~values[3 + i], values[i]);
    if (query)
        return MOE_OK;
    char message[MESSAGE_SIZE] = "";
    moe_status status = MOE_OK;
    size_t width = plan->d + 1 + (weighted ? 1 : 0);
    if (!has_outputs) {
        status = MOE_ERR_NULL_POINTER;
        snprintf(message, sizeof message, "X_out or y_out is NULL");
    } else if (capacity < plan->rows_in) {
        status = MOE_ERR_BUFFER_TOO_SMALL;
        snprintf(message, sizeof message, "room for %zu rows, %zu needed", capacity,
                 plan->rows_in);
    } else if (plan->rows_in > INT_MAX / width || plan->n > INT_MAX / width) {
        status = MOE_ERR_UNSUPPORTED;
        snprintf(message, sizeof message, "more than 2^31 values to send or receive");
    }
    return mpi_agree(plan->comm, plan->rank, status, message);
}

/* One column block (width values a row; rows NULL: ones) of every rank's rows to their
   ranks. */
static void send_rows(const shuffle_plan *plan, size_t width, const double *rows, size_t ld,
                      double *out)
{
    size_t size = (size_t)plan->size;
    int *counts = plan->layout, *displacements = counts + size, *in_counts = counts + 2 * size,
        *in_displacements = counts + 3 * size;
    size_t at = 0, in_at = 0;
    for (size_t r = 0; r < size; ++r) {
        counts[r] = (int)(plan->sent[r] * width);
        displacements[r] = (int)at;
        in_counts[r] = (int)(plan->received[r] * width);
        in_displacements[r] = (int)in_at;
        at += (size_t)counts[r];
        in_at += (size_t)in_counts[r];
    }
    /* Row by row into its rank's block, in index order. */
    for (size_t i = 0; i < plan->n; ++i) {
        int r = plan->destinations[i];
        for (size_t j = 0; j < width; ++j)
            plan->packed[displacements[r] + (int)j] = rows != NULL ? rows[i * ld + j] : 1.0;
        displacements[r] += (int)width;
    }
    for (size_t r = 0; r < size; ++r)
        displacements[r] -= counts[r];
    MPI_Alltoallv(plan->packed, counts, displacements, MPI_DOUBLE, out, in_counts,
                  in_displacements, MPI_DOUBLE, plan->comm);
}

moe_status moe_mpi_shuffle(MPI_Comm comm, uint64_t seed, size_t n, size_t d, const double *X,
                           size_t ldx, const double *y, const double *weights, size_t capacity,
                           double *X_out, double *y_out, double *weights_out, size_t *rows_out)
{
    mpi_clear_error();
    shuffle_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.comm = comm;
    plan.n = n;
    plan.d = d;
    if (comm == MPI_COMM_NULL || MPI_Comm_rank(comm, &plan.rank) != MPI_SUCCESS ||
        MPI_Comm_size(comm, &plan.size) != MPI_SUCCESS)
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "not a usable communicator");
    moe_status status = plan_shuffle(&plan, seed, X, ldx, y, rows_out);
    int query = X_out == NULL && y_out == NULL && capacity == 0;
    if (status == MOE_OK)
        status = agree_on_shuffle(&plan, query, weights_out != NULL, capacity,
                                  y_out != NULL && (X_out != NULL || d == 0));
    if (status == MOE_OK && !query) {
        if (d > 0)
            send_rows(&plan, d, X, ldx, X_out);
        send_rows(&plan, 1, y, 1, y_out);
        if (weights_out != NULL)
            send_rows(&plan, 1, weights, 1, weights_out);
    }
    plan_free(&plan);
    return status;
}
