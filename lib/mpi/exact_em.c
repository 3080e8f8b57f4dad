/*
 * moe_mpi_fit with an "em" fitter: the exact em of all ranks' rows, each rank running the
 * fitter on its own rows with its sums combined over the ranks every pass
 * (moe_fitter_set_combine in moe/fitter.h).
 *
 * Order of the collectives: the start (root's fit of a sample every rank contributes to
 * by its share of the rows, or root's model with init = model), broadcast as model bytes;
 * then the fit, whose every combine request is one allgather of the ranks' headers (their
 * outcome, the size of their sums) followed, when all succeeded and agree, by a reduce of
 * the sums at rank 0 and its broadcast. The broadcast gives every rank the same bits, which
 * an allreduce need not. A failing rank's header reaches every rank at the request where the
 * others are, so that all return its status and message and none waits forever.
 */
#include "mpi_internal.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start sample's rows when the call's support is 0: enough that the restarts on it
   rank the optima as on all rows, few enough that root fits it in a fraction of a pass. */
#define DEFAULT_START_ROWS 20000

enum { HEADER_STATUS, HEADER_HAS_ROW, HEADER_ROW, HEADER_FINAL, HEADER_COUNT, HEADER_SIZE };

typedef struct rank_combine {
    MPI_Comm comm;
    int rank, size;
    unsigned long long *offsets;  /* every rank's first row among all rows */
    unsigned long long *headers;  /* size x HEADER_SIZE */
    double *reduced;
    size_t capacity;
    size_t requests;
    double bytes; /* this rank's: sent and received by the requests */
} rank_combine;

/* "row N..." of the failing rank's message counted among all ranks' rows. */
static void rebase_row(char *message, unsigned long long offset)
{
    unsigned long long row = 0;
    int used = 0;
    if (offset == 0 || sscanf(message, "row %llu%n", &row, &used) != 1)
        return;
    char rest[MOE_COMBINE_MESSAGE_SIZE], number[32];
    snprintf(rest, sizeof rest, "%s", message + used);
    int length = snprintf(number, sizeof number, "row %llu", row + offset);
    memcpy(message, number, (size_t)length);
    snprintf(message + length, MOE_COMBINE_MESSAGE_SIZE - (size_t)length, "%.200s", rest);
}

/* The outcome the headers give (the same on every rank): 1 when the request ends here. */
static int decide(rank_combine *c, moe_combine_request *request)
{
    const unsigned long long *h = c->headers;
    int failing = -1, finals = 0, differ = 0;
    for (int r = 0; r < c->size; ++r) {
        const unsigned long long *mine = h + (size_t)r * HEADER_SIZE;
        finals += mine[HEADER_FINAL] != 0;
        differ |= mine[HEADER_COUNT] != h[HEADER_COUNT];
        if (failing < 0 && mine[HEADER_STATUS] != MOE_OK)
            failing = r;
    }
    request->final = finals > 0;
    if (failing >= 0) {
        const unsigned long long *theirs = h + (size_t)failing * HEADER_SIZE;
        char text[MOE_COMBINE_MESSAGE_SIZE];
        if (c->rank == failing) {
            snprintf(text, sizeof text, "%s", request->message);
            rebase_row(text, c->offsets[failing]);
        }
        MPI_Bcast(text, MOE_COMBINE_MESSAGE_SIZE, MPI_CHAR, failing, c->comm);
        text[MOE_COMBINE_MESSAGE_SIZE - 1] = '\0';
        c->bytes += MOE_COMBINE_MESSAGE_SIZE;
        request->status = (moe_status)theirs[HEADER_STATUS];
        request->has_row = theirs[HEADER_HAS_ROW] != 0;
        request->failed_row = (size_t)(c->offsets[failing] + theirs[HEADER_ROW]);
        memcpy(request->message, text, MOE_COMBINE_MESSAGE_SIZE);
        return 1;
    }
    if ((finals > 0 && finals < c->size) || differ) {
        request->status = MOE_ERR_INTERNAL;
        request->has_row = 0;
        request->final = 1;
        snprintf(request->message, MOE_COMBINE_MESSAGE_SIZE,
                 "the ranks are out of step (%s): their fits differ",
                 differ ? "they sum different things" : "some ended, some did not");
        return 1;
    }
    request->status = MOE_OK;
    return finals > 0 || request->count == 0;
}

/* Room for the reduction's sums at this rank; else its request becomes a failure, which
   the headers share like any other. */
static void make_room(rank_combine *c, moe_combine_request *request)
{
    if (request->status != MOE_OK || request->count <= c->capacity)
        return;
    free(c->reduced);
    c->reduced = request->count <= INT_MAX ? malloc(request->count * sizeof(double)) : NULL;
    c->capacity = c->reduced != NULL ? request->count : 0;
    if (c->reduced == NULL) {
        request->status = MOE_ERR_OUT_OF_MEMORY;
        request->has_row = 0;
        snprintf(request->message, MOE_COMBINE_MESSAGE_SIZE,
                 "cannot allocate %zu sums for the reduction", request->count);
    }
}

static moe_status combine_over_ranks(void *user, moe_combine_request *request)
{
    rank_combine *c = user;
    make_room(c, request);
    unsigned long long header[HEADER_SIZE] = {
        (unsigned long long)request->status, (unsigned long long)(request->has_row != 0),
        request->failed_row, (unsigned long long)(request->final != 0), request->count};
    MPI_Allgather(header, HEADER_SIZE, MPI_UNSIGNED_LONG_LONG, c->headers, HEADER_SIZE,
                  MPI_UNSIGNED_LONG_LONG, c->comm);
    c->requests++;
    c->bytes += (double)HEADER_SIZE * sizeof header[0] * (double)c->size;
    if (decide(c, request))
        return MOE_OK;
    int count = (int)request->count; /* every rank's, and within INT_MAX (make_room) */
    MPI_Reduce(request->values, c->reduced, count, MPI_DOUBLE, MPI_SUM, 0, c->comm);
    MPI_Bcast(c->reduced, count, MPI_DOUBLE, 0, c->comm);
    memcpy(request->values, c->reduced, request->count * sizeof(double));
    double payload = (double)request->count * sizeof(double);
    c->bytes += c->rank == 0 ? 2.0 * payload * (double)(c->size - 1) : 2.0 * payload;
    return MOE_OK;
}

/* Root's status and message to every rank (a collective every rank reaches). */
static moe_status from_root(MPI_Comm comm, int root, moe_status status, const char *message)
{
    int code = (int)status;
    MPI_Bcast(&code, 1, MPI_INT, root, comm);
    if (code == MOE_OK)
        return MOE_OK;
    char text[MESSAGE_SIZE];
    snprintf(text, sizeof text, "%s", message);
    MPI_Bcast(text, MESSAGE_SIZE, MPI_CHAR, root, comm);
    text[MESSAGE_SIZE - 1] = '\0';
    return mpi_fail((moe_status)code, "%s", text);
}

/* Root's model's parameters into every rank's `model`. */
static moe_status broadcast_model(MPI_Comm comm, int rank, int root, moe_model_t *model)
{
    size_t size = 0;
    unsigned char *bytes = NULL;
    moe_status status = MOE_OK;
    if (rank == root) {
        moe_model_save_buffer(model, NULL, 0, &size);
        bytes = malloc(size > 0 ? size : 1);
        status = bytes == NULL || size > INT_MAX ? MOE_ERR_OUT_OF_MEMORY
                                                 : moe_model_save_buffer(model, bytes, size, &size);
    }
    status = from_root(comm, root, status, "cannot write the start's bytes");
    unsigned long long length = size;
    if (status == MOE_OK)
        MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
    if (status == MOE_OK && rank != root)
        bytes = malloc(length > 0 ? length : 1);
    if (status == MOE_OK)
        status = mpi_agree(comm, rank, bytes != NULL ? MOE_OK : MOE_ERR_OUT_OF_MEMORY,
                           "cannot hold the start's bytes");
    if (status == MOE_OK) {
        MPI_Bcast(bytes, (int)length, MPI_UNSIGNED_CHAR, root, comm);
        moe_model_t *received = NULL;
        moe_status read = rank == root ? MOE_OK
                                       : moe_model_load_buffer(&received, bytes, (size_t)length);
        if (read == MOE_OK && rank != root)
            read = mpi_copy_parameters(model, received);
        moe_model_free(received);
        status = mpi_agree(comm, rank, read, "cannot read root's start");
    }
    free(bytes);
    return status;
}

typedef struct local_rows {
    size_t n, d, ldx;
    const double *X, *y, *weights;
} local_rows;

/* This rank's share of the start sample as rows of [x, y, weight, row among all rows]. */
static double *sample_rows(const local_rows *rows, uint64_t seed, int rank, size_t count,
                           unsigned long long offset)
{
    size_t width = rows->d + 3;
    size_t *indices = malloc((count > 0 ? count : 1) * sizeof(size_t));
    double *packed = malloc((count > 0 ? count : 1) * width * sizeof(double));
    if (indices == NULL || packed == NULL ||
        moe_mpi_support_rows(seed, rank, rows->n, count, indices) != MOE_OK) {
        free(indices);
        free(packed);
        return NULL;
    }
    for (size_t i = 0; i < count; ++i) {
        const double *x = rows->X + indices[i] * rows->ldx;
        memcpy(packed + i * width, x, rows->d * sizeof(double));
        packed[i * width + rows->d] = rows->y[indices[i]];
        packed[i * width + rows->d + 1] =
            rows->weights != NULL ? rows->weights[indices[i]] : 1.0;
        packed[i * width + rows->d + 2] = (double)(offset + indices[i]);
    }
    free(indices);
    return packed;
}

/* At root: the fitter's own fit (its search and restarts) of the gathered sample. */
static moe_status fit_sample(moe_fitter_t *fitter, moe_model_t *model, const double *packed,
                             size_t count, size_t d, char *message)
{
    size_t width = d + 3, stride = d > 0 ? d : 1;
    double *X = malloc((count > 0 ? count : 1) * stride * sizeof(double));
    double *y = malloc((count > 0 ? count : 1) * sizeof(double));
    double *w = malloc((count > 0 ? count : 1) * sizeof(double));
    moe_status status = X && y && w ? MOE_OK : MOE_ERR_OUT_OF_MEMORY;
    int weighted = 0;
    for (size_t i = 0; status == MOE_OK && i < count; ++i) {
        memcpy(X + i * stride, packed + i * width, d * sizeof(double));
        y[i] = packed[i * width + d];
        w[i] = packed[i * width + d + 1];
        weighted |= w[i] != 1.0;
    }
    if (status == MOE_OK)
        status = moe_fitter_fit(fitter, model, count, d > 0 ? X : NULL, d, y,
                                weighted ? w : NULL);
    /* A sample row's failure names the row among all ranks' rows. */
    char text[MESSAGE_SIZE];
    snprintf(text, sizeof text, "%s", status == MOE_OK ? "" : moe_fitter_last_error(fitter));
    unsigned long long row = 0;
    int used = 0;
    if (sscanf(text, "row %llu%n", &row, &used) == 1 && row < count)
        snprintf(message, MESSAGE_SIZE, "row %.0f%.400s (the start's fit on a sample of %zu rows)",
                 packed[row * width + d + 2], text + used, count);
    else
        snprintf(message, MESSAGE_SIZE, "the start's fit on a sample of %zu rows: %.400s", count,
                 text);
    free(X);
    free(y);
    free(w);
    return status;
}

/* The ranks' layout for the start sample's gather at root (counts in doubles). */
static int gather_layout(size_t size, const size_t *counts, size_t width, int *lengths,
                         int *displacements)
{
    size_t at = 0;
    for (size_t r = 0; r < size; ++r) {
        if (counts[r] * width > INT_MAX || at > INT_MAX - counts[r] * width)
            return 0;
        lengths[r] = (int)(counts[r] * width);
        displacements[r] = (int)at;
        at += counts[r] * width;
    }
    return 1;
}

/* Every rank's status agreed: the smallest failing rank's status and message, as that rank
   wrote it (the ranks fit one sample, so its rows are named alike). */
static moe_status agree_plainly(MPI_Comm comm, int rank, moe_status status, const char *message)
{
    int mine[2] = {status != MOE_OK ? 0 : 1, rank}, first[2];
    MPI_Allreduce(mine, first, 1, MPI_2INT, MPI_MINLOC, comm);
    if (first[0] == 1)
        return MOE_OK;
    return from_root(comm, first[1], status, message);
}

/* This rank's share of the start's search: the sample fitted with 1 / size of a search's
   budget (search_shards) from a seed of its own, the fitter's options restored after. */
static moe_status search_share(moe_fitter_t *fitter, moe_model_t *model, const double *sample,
                               size_t count, size_t d, int rank, int size, double *loglik,
                               char *message)
{
    double seed = 0.0, shards = 0.0;
    moe_fitter_get_double(fitter, MOE_OPT_SEED, &seed);
    moe_fitter_get_double(fitter, MOE_OPT_SEARCH_SHARDS, &shards);
    /* 7919 seeds apart, below the seed's 2^53 */
    double own_seed = fmod(seed + 7919.0 * (double)rank, 9007199254740992.0);
    moe_status status = MOE_OK;
    if (size > 1 && shards == 0.0)
        status = moe_fitter_set_double(fitter, MOE_OPT_SEARCH_SHARDS, (double)size);
    if (status == MOE_OK)
        status = moe_fitter_set_double(fitter, MOE_OPT_SEED, own_seed);
    if (status == MOE_OK)
        status = fit_sample(fitter, model, sample, count, d, message);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    *loglik = status == MOE_OK && isfinite(report.loglik) ? report.loglik : -INFINITY;
    moe_fitter_set_double(fitter, MOE_OPT_SEED, seed);
    moe_fitter_set_double(fitter, MOE_OPT_SEARCH_SHARDS, shards);
    return status;
}

/* The start every rank takes. A sample is drawn from every rank by its share of the rows
   (moe_mpi_support_rows, from the fitter's seed) and every rank receives it; each rank
   searches it with its share of a search's budget from a seed of its own (the search is
   most of a start's cost, and it does not shrink with the rows), and the best end point on
   the sample goes to every rank. With one rank this is the fitter's own fit of the sample. */
static moe_status search_start(MPI_Comm comm, int rank, int size, moe_fitter_t *fitter,
                               moe_model_t *model, const local_rows *rows,
                               const size_t *all_rows, const unsigned long long *offsets,
                               size_t support)
{
    size_t total = 0, width = rows->d + 3;
    for (int r = 0; r < size; ++r)
        total += all_rows[r];
    size_t S = support > 0 ? support : DEFAULT_START_ROWS;
    if (S > total)
        S = total;
    size_t *counts = malloc((size_t)size * sizeof(size_t));
    int *lengths = malloc((size_t)size * sizeof(int));
    int *displacements = malloc((size_t)size * sizeof(int));
    double seed = 0.0, *packed = NULL;
    double *gathered = malloc((S > 0 ? S : 1) * width * sizeof(double));
    moe_fitter_get_double(fitter, MOE_OPT_SEED, &seed);
    int ok = counts && lengths && displacements && gathered &&
             moe_mpi_support_counts((size_t)size, all_rows, S, counts) == MOE_OK;
    if (ok)
        packed = sample_rows(rows, (uint64_t)seed, rank, counts[rank], offsets[rank]);
    ok = ok && packed != NULL && gather_layout((size_t)size, counts, width, lengths, displacements);
    moe_status status = mpi_agree(comm, rank, ok ? MOE_OK : MOE_ERR_OUT_OF_MEMORY,
                                  "cannot gather the start's sample (memory, or more than 2^31 "
                                  "values)");
    if (status == MOE_OK) {
        MPI_Allgatherv(packed, lengths[rank], MPI_DOUBLE, gathered, lengths, displacements,
                       MPI_DOUBLE, comm);
        char message[MESSAGE_SIZE] = "";
        struct {
            double loglik;
            int rank;
        } mine = {-INFINITY, rank}, best;
        status = search_share(fitter, model, gathered, S, rows->d, rank, size, &mine.loglik,
                              message);
        status = agree_plainly(comm, rank, status, message);
        if (status == MOE_OK) {
            MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
            status = broadcast_model(comm, rank, best.rank, model);
        }
    }
    free(counts);
    free(lengths);
    free(displacements);
    free(packed);
    free(gathered);
    return status;
}

/* Every rank's rows and first row among all; MOE_ERR_EMPTY_INPUT on every rank when one
   has none (a combined fit's workers each fit their own rows). */
static moe_status rows_of_ranks(MPI_Comm comm, int rank, int size, size_t n, size_t *all_rows,
                                unsigned long long *offsets)
{
    unsigned long long mine = n, *counts = malloc((size_t)size * sizeof *counts);
    moe_status status = mpi_agree(comm, rank, counts ? MOE_OK : MOE_ERR_OUT_OF_MEMORY,
                                  "out of memory");
    if (status != MOE_OK) {
        free(counts);
        return status;
    }
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, counts, 1, MPI_UNSIGNED_LONG_LONG, comm);
    unsigned long long first = 0;
    int empty = -1;
    for (int r = 0; r < size; ++r) {
        all_rows[r] = (size_t)counts[r];
        offsets[r] = first;
        first += counts[r];
        if (counts[r] == 0 && empty < 0)
            empty = r;
    }
    free(counts);
    if (empty >= 0)
        return mpi_fail(MOE_ERR_EMPTY_INPUT,
                        "rank %d holds no rows: each rank of an exact em fits its own rows "
                        "(give it some, or use the one-shot method ot)",
                        empty);
    return MOE_OK;
}

/* The fit of every rank's rows from `working`'s start, its sums combined over the ranks. */
static moe_status fit_combined(rank_combine *c, moe_fitter_t *fitter, moe_model_t *working,
                               const local_rows *rows, int custom)
{
    double init = 0.0, restarts = 0.0;
    moe_fitter_get_double(fitter, MOE_OPT_INIT, &init);
    moe_fitter_get_double(fitter, MOE_OPT_N_INIT, &restarts);
    moe_status status = MOE_OK;
    if (!custom) {
        status = moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL);
        if (status == MOE_OK)
            status = moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1);
    }
    if (status == MOE_OK)
        status = moe_fitter_set_combine(fitter, combine_over_ranks, c);
    /* The settings cannot fail on an em fitter the call's agreement accepted. */
    if (status == MOE_OK)
        status = moe_fitter_fit(fitter, working, rows->n, rows->X, rows->ldx, rows->y,
                                rows->weights);
    char message[MESSAGE_SIZE];
    snprintf(message, sizeof message, "%s", moe_fitter_last_error(fitter));
    moe_fitter_set_combine(fitter, NULL, NULL);
    if (!custom) {
        moe_fitter_set_double(fitter, MOE_OPT_INIT, init);
        moe_fitter_set_double(fitter, MOE_OPT_N_INIT, restarts);
    }
    return status == MOE_OK ? MOE_OK : mpi_fail(status, "%s", message);
}

/* The report of an exact em: the fit's log-likelihood is all rows' already. */
static void report_exact(const rank_combine *c, moe_fitter_t *fitter, const local_rows *rows,
                         double started)
{
    moe_fit_report fit = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &fit);
    double weight = 0.0;
    for (size_t i = 0; i < rows->n; ++i)
        weight += rows->weights != NULL ? rows->weights[i] : 1.0;
    double mine[3] = {weight, c->bytes, MPI_Wtime() - started}, sums[3], most[3];
    MPI_Allreduce(mine, sums, 3, MPI_DOUBLE, MPI_SUM, c->comm);
    MPI_Allreduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, c->comm);
    moe_mpi_report report = MOE_MPI_REPORT_INIT;
    report.ranks = c->size;
    report.n_obs = sums[0];
    report.loglik = fit.loglik;
    report.local_loglik = fit.loglik;
    report.seconds = most[2];
    report.method = MOE_MPI_METHOD_EM;
    report.iterations = fit.iterations;
    report.passes = c->requests;
    report.bytes = most[1];
    mpi_set_report(&report);
}

moe_status mpi_exact_em(MPI_Comm comm, int root, moe_fitter_t *fitter, moe_model_t *model,
                        size_t n, const double *X, size_t ldx, const double *y,
                        const double *weights, size_t support, double started)
{
    rank_combine c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.size);
    size_t *all_rows = malloc((size_t)c.size * sizeof(size_t));
    c.offsets = malloc((size_t)c.size * sizeof *c.offsets);
    c.headers = malloc((size_t)c.size * HEADER_SIZE * sizeof *c.headers);
    moe_model_t *working = NULL;
    int ok = all_rows && c.offsets && c.headers && moe_model_clone(&working, model) == MOE_OK;
    moe_status status = mpi_agree(comm, c.rank, ok ? MOE_OK : MOE_ERR_OUT_OF_MEMORY,
                                  "out of memory");
    if (status == MOE_OK)
        status = rows_of_ranks(comm, c.rank, c.size, n, all_rows, c.offsets);
    local_rows rows = {n, moe_model_n_features(model), ldx, X, y, weights};
    double init = 0.0, restarts = 0.0;
    moe_fitter_get_double(fitter, MOE_OPT_INIT, &init);
    moe_fitter_get_double(fitter, MOE_OPT_N_INIT, &restarts);
    int custom = (int)init == MOE_INIT_CUSTOM;
    if (status == MOE_OK && (int)init == MOE_INIT_MODEL && restarts == 1.0)
        status = broadcast_model(comm, c.rank, root, working);
    else if (status == MOE_OK && !custom)
        status = search_start(comm, c.rank, c.size, fitter, working, &rows, all_rows,
                              c.offsets, support);
    if (status == MOE_OK)
        status = fit_combined(&c, fitter, working, &rows, custom);
    if (status == MOE_OK && (status = mpi_copy_parameters(model, working)) != MOE_OK)
        mpi_fail(status, "cannot copy the fit into the model");
    if (status == MOE_OK)
        report_exact(&c, fitter, &rows, started);
    moe_model_free(working);
    free(all_rows);
    free(c.offsets);
    free(c.headers);
    free(c.reduced);
    return status;
}
