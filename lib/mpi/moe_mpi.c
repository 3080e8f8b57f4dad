/*
 * libmoe_mpi: the collective fit of include/moe/mpi.h over libmoe's public API: the call's
 * agreement, the one-shot reduction of an "ot" fitter (here; the exact em of an "em" fitter
 * is exact_em.c), the report, and the statistics of a model over every rank's rows.
 *
 * Order of the one-shot collective, so that no rank can wait forever: an allreduce of every rank's
 * arguments (whether they are usable, the model's shape, the settings: a rank with another
 * d, K, support or root would otherwise make the gathers below overrun buffers, read rows
 * never sent or wait for another root); local fits; an allreduce of every rank's status
 * (the smallest failing rank then broadcasts its message); gathers of the model sizes, the
 * model bytes, the support counts and rows; root's reduction; a broadcast of root's status;
 * a broadcast of the result's bytes. Every step is a collective every rank reaches whatever
 * happened before it, and the first two depend on no root.
 */
#include "mpi_internal.h"

#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static _Thread_local char last_error[MESSAGE_SIZE];
/* The last successful moe_mpi_fit's measures (version 0: none yet). */
static _Thread_local moe_mpi_report last_report;

const char *moe_mpi_last_error(void)
{
    return last_error;
}

void mpi_clear_error(void)
{
    last_error[0] = '\0';
}

moe_status mpi_fail(moe_status status, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(last_error, sizeof last_error, format, arguments);
    va_end(arguments);
    return status;
}

/* lib/common's moe_check_struct_version, for this library's message: libmoe_mpi is built on
   libmoe's public API only, and libmoe's internal helpers are not exported. The message
   goes to message (MESSAGE_SIZE bytes) so that a collective can share it first. */
static moe_status check_struct_version(char *message, const char *struct_name,
                                       unsigned int version, unsigned int newest)
{
    if (version >= 1 && version <= newest)
        return MOE_OK;
    snprintf(message, MESSAGE_SIZE,
             "%s version %u is not supported (this libmoe_mpi knows 1..%u)", struct_name,
             version, newest);
    return MOE_ERR_UNSUPPORTED;
}

moe_status moe_mpi_support_counts(size_t ranks, const size_t *rows, size_t support,
                                  size_t *counts)
{
    if (rows == NULL || counts == NULL)
        return mpi_fail(MOE_ERR_NULL_POINTER, "rows or counts is NULL");
    double total = 0.0;
    for (size_t r = 0; r < ranks; ++r)
        total += (double)rows[r];
    double before = 0.0;
    for (size_t r = 0; r < ranks; ++r) {
        double after = before + (double)rows[r];
        size_t low = total > 0.0 ? (size_t)((double)support * before / total) : 0;
        size_t high = total > 0.0 ? (size_t)((double)support * after / total) : 0;
        counts[r] = high - low;
        if (counts[r] > rows[r])
            counts[r] = rows[r];
        before = after;
    }
    return MOE_OK;
}

moe_status moe_mpi_support_rows(uint64_t seed, int rank, size_t n, size_t count,
                                size_t *indices)
{
    if (indices == NULL && count > 0)
        return mpi_fail(MOE_ERR_NULL_POINTER, "indices is NULL");
    if (count > n)
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "%zu rows asked of %zu", count, n);
    moe_rng rng;
    moe_rng_seed(&rng, seed, 0x6d7069ULL + (uint64_t)rank); /* "mpi" */
    size_t taken = 0;
    for (size_t i = 0; i < n && taken < count; ++i)
        if (moe_rng_below(&rng, n - i) < count - taken)
            indices[taken++] = i;
    return MOE_OK;
}

/* The pinned options a rank's em takes from the fitter: the last, threads, does not change
   a fit, and is the only one the ranks need not agree on. */
static const moe_option passed_on[] = {
    MOE_OPT_MAX_ITER,        MOE_OPT_TOLERANCE,      MOE_OPT_N_INIT,           MOE_OPT_SEED,
    MOE_OPT_INIT,            MOE_OPT_GATE_L2,        MOE_OPT_EXPERT_RIDGE,     MOE_OPT_VARIANCE_FLOOR,
    MOE_OPT_GATE_MAX_NEWTON, MOE_OPT_GATE_TOLERANCE, MOE_OPT_MIN_EXPERT_WEIGHT, MOE_OPT_THREADS};
enum { AGREED_OPTIONS = sizeof passed_on / sizeof passed_on[0] - 1 };

static moe_status local_fit(moe_fitter_t *fitter, moe_model_t *local, size_t n, const double *X,
                            size_t ldx, const double *y, const double *weights, char *message)
{
    moe_fitter_t *em = NULL;
    moe_status status = moe_fitter_create(&em, "em");
    for (size_t o = 0; status == MOE_OK && o < sizeof passed_on / sizeof passed_on[0]; ++o) {
        double value = 0.0;
        status = moe_fitter_get_double(fitter, passed_on[o], &value);
        if (status == MOE_OK)
            status = moe_fitter_set_double(em, passed_on[o], value);
    }
    if (status == MOE_OK)
        status = moe_fitter_fit(em, local, n, X, ldx, y, weights);
    snprintf(message, MESSAGE_SIZE, "%s",
             status == MOE_OK ? "" : (em != NULL ? moe_fitter_last_error(em) : moe_last_error()));
    moe_fitter_free(em);
    return status;
}

/* Copy a model's parameters into another of the same structure: every array the family
   has (moe_model_copy_parameters), so that no family is left out. */
moe_status mpi_copy_parameters(moe_model_t *to, const moe_model_t *from)
{
    return moe_model_copy_parameters(to, from);
}

/* Every rank returns the status and message of `failing` (a rank), broadcast from it. */
moe_status mpi_share_failure(MPI_Comm comm, int failing, moe_status status,
                                const char *message)
{
    int code = (int)status;
    char text[MESSAGE_SIZE];
    snprintf(text, sizeof text, "%s", message);
    MPI_Bcast(&code, 1, MPI_INT, failing, comm);
    MPI_Bcast(text, MESSAGE_SIZE, MPI_CHAR, failing, comm);
    text[MESSAGE_SIZE - 1] = '\0';
    return mpi_fail((moe_status)code, "rank %d: %s", failing, text);
}

/* What the ranks must agree on before anything travels: the model's shape (the gathers'
   sizes come from it), the call's settings, and the options every local fit takes. Options
   go by their bits, so any difference counts. */
enum {
    FAILING_RANK, /* the smallest rank whose arguments are unusable, else the size */
    FEATURES, EXPERTS, FAMILY, CLASSES, INTERCEPT, LINK, GATE_INTERCEPT, EXPERT_INTERCEPT,
    OFFSET, GATE_FEATURES, EXPERT_FEATURES, SUPPORT, ROOT, METHOD, ALL_OPTIONS, FIRST_OPTION,
    SETTINGS = FIRST_OPTION + AGREED_OPTIONS
};

static const char *const setting_names[FIRST_OPTION] = {
    "", "the number of features d", "the number of experts K", "the family",
    "the number of classes", "the intercept", "the link", "the gate's intercept",
    "the experts' intercept", "the offset feature", "the gate's features",
    "the experts' features", "support", "root", "the method (the fitter's estimator)",
    "the fitter's options"};

/* A part's inputs as one number: FNV-1a over the features it sees (1 each) and does not
   (0), so that two masks agree exactly when their numbers do (up to a 2^-64 chance). The
   offset feature's expert byte is ignored by the model, so it is left out here too. */
static uint64_t mask_fingerprint(const unsigned char *mask, size_t d, long ignored)
{
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t a = 0; a < d; ++a) {
        unsigned char seen = (long)a == ignored ? 2 : (mask == NULL || mask[a] != 0);
        hash = (hash ^ seen) * 0x100000001b3ULL;
    }
    return hash;
}

/* The parts of a model's structure beyond its shape: which inputs the gate and the experts
   see, and the offset. Two models that differ here have parameter arrays of one size but
   other meanings, so the ranks must compare these too. */
static void describe_inputs(uint64_t *values, const moe_model_t *model)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    if (moe_model_get_spec(model, &spec) != MOE_OK)
        return;
    size_t d = moe_model_n_features(model);
    values[GATE_INTERCEPT] = (uint64_t)(spec.intercept && spec.gate_intercept);
    values[EXPERT_INTERCEPT] = (uint64_t)(spec.intercept && spec.expert_intercept);
    values[OFFSET] = (uint64_t)(int64_t)spec.offset_feature;
    values[GATE_FEATURES] = mask_fingerprint(spec.gate_features, d, -1);
    values[EXPERT_FEATURES] = mask_fingerprint(spec.expert_features, d, spec.offset_feature);
}

static uint64_t option_bits(const moe_fitter_t *fitter, moe_option option)
{
    double value = 0.0;
    moe_fitter_get_double(fitter, option, &value);
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

/* Every pinned option but threads, as one number: an exact em's ranks must run the same
   iteration. */
static uint64_t options_fingerprint(const moe_fitter_t *fitter)
{
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (int option = 1; option <= MOE_OPT_UPDATE_DEGREES; ++option)
        if (option != MOE_OPT_THREADS)
            hash = (hash ^ option_bits(fitter, (moe_option)option)) * 0x100000001b3ULL;
    return hash;
}

static void describe_settings(uint64_t *values, int rank, int size, int root,
                              const moe_fitter_t *fitter, const moe_model_t *model,
                              size_t support, moe_status status)
{
    memset(values, 0, SETTINGS * sizeof *values);
    values[FAILING_RANK] = (uint64_t)(status == MOE_OK ? size : rank);
    if (status != MOE_OK)
        return;
    values[FEATURES] = moe_model_n_features(model);
    values[EXPERTS] = moe_model_n_experts(model);
    values[FAMILY] = (uint64_t)moe_model_family(model);
    values[CLASSES] = moe_model_n_classes(model);
    values[INTERCEPT] = (uint64_t)(moe_model_has_intercept(model) != 0);
    values[LINK] = (uint64_t)moe_model_link(model);
    describe_inputs(values, model);
    values[SUPPORT] = support;
    values[ROOT] = (uint64_t)(int64_t)root;
    values[METHOD] = (uint64_t)(strcmp(moe_fitter_estimator_name(fitter), "em") == 0);
    values[ALL_OPTIONS] = options_fingerprint(fitter);
    for (size_t o = 0; o < AGREED_OPTIONS; ++o)
        values[FIRST_OPTION + o] = option_bits(fitter, passed_on[o]);
}

/* The name and two of the values of setting `index`, for the message. */
static void name_setting(size_t index, uint64_t low, uint64_t high, char *text, size_t size)
{
    if (index == ROOT || index == OFFSET) { /* by their bits: a negative one is large */
        int64_t first = (int64_t)low, second = (int64_t)high;
        snprintf(text, size, "%s (%lld and %lld)", setting_names[index], (long long)first,
                 (long long)second);
    } else if (index == GATE_FEATURES || index == EXPERT_FEATURES) { /* fingerprints */
        snprintf(text, size, "%s (the masks of moe_model_spec)", setting_names[index]);
    } else if (index == METHOD) {
        snprintf(text, size, "%s (ot and em)", setting_names[index]);
    } else if (index == ALL_OPTIONS) {
        snprintf(text, size, "%s (an exact em needs every pinned option alike)",
                 setting_names[index]);
    } else if (index < FIRST_OPTION) {
        snprintf(text, size, "%s (%llu and %llu)", setting_names[index],
                 (unsigned long long)low, (unsigned long long)high);
    } else {
        double first, second;
        memcpy(&first, &low, sizeof first);
        memcpy(&second, &high, sizeof second);
        snprintf(text, size, "the fitter option %s (%.17g and %.17g)",
                 moe_option_name(passed_on[index - FIRST_OPTION]), first, second);
    }
}

/* One allreduce, the same on every rank whatever its root: the smallest and largest value
   of every setting (the largest of v and of ~v). Every rank then returns the same status:
   the first unusable rank's failure, else a setting on which the ranks differ, else the
   checks that need the agreed values. */
static moe_status agree_on_call(MPI_Comm comm, int rank, int size, int root,
                                const moe_fitter_t *fitter, const moe_model_t *model,
                                size_t support, moe_status status, const char *message)
{
    uint64_t values[2 * SETTINGS];
    describe_settings(values, rank, size, root, fitter, model, support, status);
    for (size_t i = 0; i < SETTINGS; ++i)
        values[SETTINGS + i] = ~values[i];
    MPI_Allreduce(MPI_IN_PLACE, values, 2 * SETTINGS, MPI_UINT64_T, MPI_MAX, comm);
    uint64_t failing = ~values[SETTINGS + FAILING_RANK];
    if (failing < (uint64_t)size)
        return mpi_share_failure(comm, (int)failing, status, message);
    for (size_t i = FAILING_RANK + 1; i < SETTINGS; ++i) {
        uint64_t low = ~values[SETTINGS + i], high = values[i];
        if (low != high) {
            char text[256];
            name_setting(i, low, high, text, sizeof text);
            return mpi_fail(MOE_ERR_INVALID_ARGUMENT,
                        "the ranks differ in %s: every rank must call moe_mpi_fit with the "
                        "same model structure, support, root and fitter options",
                        text);
        }
    }
    if (root < 0 || root >= size)
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "root %d is not a rank of %d", root, size);
    return MOE_OK;
}

/* Every rank learns whether any failed; the smallest failing rank's status and message. */
moe_status mpi_agree(MPI_Comm comm, int rank, moe_status status, const char *message)
{
    int mine[2] = {status != MOE_OK ? 0 : 1, rank}, worst[2];
    /* MINLOC over (ok flag, rank): a failure (0) wins, then the smallest rank. */
    MPI_Allreduce(mine, worst, 1, MPI_2INT, MPI_MINLOC, comm);
    return worst[0] == 1 ? MOE_OK : mpi_share_failure(comm, worst[1], status, message);
}

/* What the steps after the local fits share (root's parts stay NULL elsewhere). */
typedef struct fit_exchange {
    MPI_Comm comm;
    int rank, size, root;
    size_t d, width, support, total_rows; /* support: S, the rows root gathers */
    size_t *rows, *counts;                /* every rank's rows and share of the support */
    unsigned long long *model_sizes;      /* root: every rank's model bytes */
    int *lengths, *displacements;         /* root: a gather's layout */
    unsigned char *bytes, *models;        /* this rank's model (bytes_size); root: all */
    size_t bytes_size;
    double *support_rows, *gathered_support; /* this rank's rows (width each); root: all */
} fit_exchange;

static void exchange_free(fit_exchange *exchange)
{
    free(exchange->rows);
    free(exchange->counts);
    free(exchange->model_sizes);
    free(exchange->lengths);
    free(exchange->displacements);
    free(exchange->bytes);
    free(exchange->models);
    free(exchange->support_rows);
    free(exchange->gathered_support);
}

/* 3a. The local model's bytes, every rank's rows, root's model sizes and every rank's share
   of the support. */
static moe_status exchange_sizes(fit_exchange *exchange, const moe_model_t *local, size_t n,
                                 size_t support)
{
    size_t size = (size_t)exchange->size, written = 0;
    moe_model_save_buffer(local, NULL, 0, &exchange->bytes_size);
    exchange->bytes = malloc(exchange->bytes_size > 0 ? exchange->bytes_size : 1);
    int ok = exchange->bytes != NULL &&
             moe_model_save_buffer(local, exchange->bytes, exchange->bytes_size, &written) == MOE_OK &&
             exchange->bytes_size < INT_MAX;
    unsigned long long *all_rows = malloc(size * sizeof *all_rows);
    exchange->model_sizes = malloc(size * sizeof *exchange->model_sizes);
    exchange->rows = malloc(size * sizeof(size_t));
    exchange->counts = malloc(size * sizeof(size_t));
    exchange->lengths = malloc(size * sizeof(int));
    exchange->displacements = malloc(size * sizeof(int));
    ok = ok && all_rows && exchange->model_sizes && exchange->rows && exchange->counts && exchange->lengths &&
         exchange->displacements;
    moe_status status = mpi_agree(exchange->comm, exchange->rank, ok ? MOE_OK : MOE_ERR_OUT_OF_MEMORY,
                              "out of memory");
    if (status == MOE_OK) {
        unsigned long long rows_here = n, bytes_here = exchange->bytes_size;
        MPI_Allgather(&rows_here, 1, MPI_UNSIGNED_LONG_LONG, all_rows, 1,
                      MPI_UNSIGNED_LONG_LONG, exchange->comm);
        MPI_Gather(&bytes_here, 1, MPI_UNSIGNED_LONG_LONG, exchange->model_sizes, 1,
                   MPI_UNSIGNED_LONG_LONG, exchange->root, exchange->comm);
        for (size_t r = 0; r < size; ++r) {
            exchange->rows[r] = (size_t)all_rows[r];
            exchange->total_rows += exchange->rows[r];
        }
        exchange->support = support > 0 ? support : exchange->total_rows / size;
        moe_mpi_support_counts(size, exchange->rows, exchange->support, exchange->counts);
    }
    free(all_rows);
    return status;
}

/* 3b. This rank's support rows (x, then y), by moe_mpi_support_rows from the seed. */
static int pick_support(fit_exchange *exchange, const moe_fitter_t *fitter, size_t n, const double *X,
                        size_t ldx, const double *y)
{
    double seed = 0.0;
    moe_fitter_get_double(fitter, MOE_OPT_SEED, &seed);
    size_t d = exchange->d, width = exchange->width, mine = exchange->counts[exchange->rank];
    size_t *indices = malloc((mine > 0 ? mine : 1) * sizeof(size_t));
    exchange->support_rows = malloc((mine > 0 ? mine : 1) * width * sizeof(double));
    int ok = indices != NULL && exchange->support_rows != NULL &&
             moe_mpi_support_rows((uint64_t)seed, exchange->rank, n, mine, indices) == MOE_OK &&
             mine * width < INT_MAX;
    for (size_t i = 0; ok && i < mine; ++i) {
        for (size_t j = 0; j < d; ++j)
            exchange->support_rows[i * width + j] = X[indices[i] * ldx + j];
        exchange->support_rows[i * width + d] = y[indices[i]];
    }
    free(indices);
    return ok;
}

/* 3c. The models' bytes and the support rows to root, once every rank has room. */
static moe_status gather_to_root(fit_exchange *exchange, int ok)
{
    size_t size = (size_t)exchange->size, S = exchange->support, width = exchange->width;
    if (exchange->rank == exchange->root) {
        size_t total_bytes = 0;
        for (size_t r = 0; r < size; ++r) {
            exchange->lengths[r] = (int)exchange->model_sizes[r];
            exchange->displacements[r] = (int)total_bytes;
            total_bytes += (size_t)exchange->model_sizes[r];
        }
        exchange->models = malloc(total_bytes > 0 ? total_bytes : 1);
        exchange->gathered_support = malloc((S > 0 ? S : 1) * width * sizeof(double));
        ok = ok && exchange->models != NULL && exchange->gathered_support != NULL && total_bytes < INT_MAX &&
             S * width < INT_MAX;
    }
    moe_status status = mpi_agree(exchange->comm, exchange->rank, ok ? MOE_OK : MOE_ERR_OUT_OF_MEMORY,
                              "out of memory (or more than 2^31 bytes) for the gather");
    if (status != MOE_OK)
        return status;
    MPI_Gatherv(exchange->bytes, (int)exchange->bytes_size, MPI_UNSIGNED_CHAR, exchange->models, exchange->lengths,
                exchange->displacements, MPI_UNSIGNED_CHAR, exchange->root, exchange->comm);
    if (exchange->rank == exchange->root) {
        size_t at = 0;
        for (size_t r = 0; r < size; ++r) {
            exchange->lengths[r] = (int)(exchange->counts[r] * width);
            exchange->displacements[r] = (int)at;
            at += exchange->counts[r] * width;
        }
    }
    MPI_Gatherv(exchange->support_rows, (int)(exchange->counts[exchange->rank] * width), MPI_DOUBLE,
                exchange->gathered_support, exchange->lengths, exchange->displacements, MPI_DOUBLE, exchange->root, exchange->comm);
    return MOE_OK;
}

/* 4a. At root: the local models and the support reduced into model, whose bytes go to
   *result. Returns the status every rank will learn, with its message. */
static moe_status reduce_at_root(const fit_exchange *exchange, moe_fitter_t *fitter, moe_model_t *model,
                                 unsigned char **result, size_t *result_size, char *message)
{
    size_t size = (size_t)exchange->size, S = exchange->support, d = exchange->d, stride = d > 0 ? d : 1;
    moe_model_t **models = calloc(size, sizeof *models);
    double *shares = malloc(size * sizeof(double));
    double *support_X = malloc((S > 0 ? S : 1) * stride * sizeof(double));
    double *support_y = malloc((S > 0 ? S : 1) * sizeof(double));
    moe_status status = models && shares && support_X && support_y ? MOE_OK
                                                                   : MOE_ERR_OUT_OF_MEMORY;
    size_t offset = 0;
    for (size_t r = 0; status == MOE_OK && r < size; ++r) {
        status = moe_model_load_buffer(&models[r], exchange->models + offset,
                                       (size_t)exchange->model_sizes[r]);
        offset += (size_t)exchange->model_sizes[r];
        shares[r] = (double)exchange->rows[r] / (double)exchange->total_rows;
    }
    for (size_t i = 0; status == MOE_OK && i < S; ++i) {
        for (size_t j = 0; j < d; ++j)
            support_X[i * stride + j] = exchange->gathered_support[i * exchange->width + j];
        support_y[i] = exchange->gathered_support[i * exchange->width + d];
    }
    if (status == MOE_OK) {
        status = moe_fitter_aggregate(fitter, model, size, (const moe_model_t *const *)models,
                                      shares, S, d > 0 ? support_X : NULL, d, support_y, NULL);
        if (status != MOE_OK)
            snprintf(message, MESSAGE_SIZE, "%s", moe_fitter_last_error(fitter));
    }
    if (status == MOE_OK) {
        moe_model_save_buffer(model, NULL, 0, result_size);
        *result = malloc(*result_size > 0 ? *result_size : 1);
        if (*result == NULL ||
            moe_model_save_buffer(model, *result, *result_size, result_size) != MOE_OK)
            status = MOE_ERR_OUT_OF_MEMORY;
    }
    if (models != NULL)
        for (size_t r = 0; r < size; ++r)
            moe_model_free(models[r]);
    free(models);
    free(shares);
    free(support_X);
    free(support_y);
    return status;
}

/* 4b. Root's status and message to every rank, then its model's bytes. */
static moe_status broadcast_result(const fit_exchange *exchange, moe_fitter_t *fitter, moe_model_t *model)
{
    int root_status = MOE_OK;
    char root_message[MESSAGE_SIZE] = "";
    unsigned char *result = NULL;
    size_t result_bytes = 0;
    if (exchange->rank == exchange->root)
        root_status = reduce_at_root(exchange, fitter, model, &result, &result_bytes, root_message);
    MPI_Bcast(&root_status, 1, MPI_INT, exchange->root, exchange->comm);
    MPI_Bcast(root_message, MESSAGE_SIZE, MPI_CHAR, exchange->root, exchange->comm);
    root_message[MESSAGE_SIZE - 1] = '\0';
    if (root_status != MOE_OK) {
        free(result);
        return mpi_fail((moe_status)root_status, "the reduction at rank %d failed: %s", exchange->root,
                    root_message);
    }
    unsigned long long result_size = result_bytes;
    MPI_Bcast(&result_size, 1, MPI_UNSIGNED_LONG_LONG, exchange->root, exchange->comm);
    if (exchange->rank != exchange->root)
        result = malloc(result_size > 0 ? result_size : 1);
    int ok = result != NULL && result_size < INT_MAX;
    moe_status status = mpi_agree(exchange->comm, exchange->rank, ok ? MOE_OK : MOE_ERR_OUT_OF_MEMORY,
                              "out of memory");
    if (status == MOE_OK) {
        MPI_Bcast(result, (int)result_size, MPI_UNSIGNED_CHAR, exchange->root, exchange->comm);
        if (exchange->rank != exchange->root) {
            moe_model_t *received = NULL;
            status = moe_model_load_buffer(&received, result, (size_t)result_size);
            if (status == MOE_OK)
                status = mpi_copy_parameters(model, received);
            moe_model_free(received);
            if (status != MOE_OK)
                mpi_fail(status, "cannot read root's model");
        }
    }
    free(result);
    return status;
}

/* Step 0: the call's agreement. */
static moe_status agree_to_fit(MPI_Comm comm, int rank, int size, int root,
                               const moe_fitter_t *fitter, const moe_model_t *model,
                               size_t support)
{
    char message[MESSAGE_SIZE] = "";
    moe_status status = MOE_OK;
    if (fitter == NULL || model == NULL) {
        status = MOE_ERR_NULL_POINTER;
        snprintf(message, sizeof message, "fitter or model is NULL");
    } else if (strcmp(moe_fitter_estimator_name(fitter), "ot") != 0 &&
               strcmp(moe_fitter_estimator_name(fitter), "em") != 0) {
        status = MOE_ERR_INVALID_ARGUMENT;
        snprintf(message, sizeof message,
                 "the fitter must be an \"em\" (exact em) or \"ot\" (one-shot) fitter, not "
                 "\"%s\"",
                 moe_fitter_estimator_name(fitter));
    }
    return agree_on_call(comm, rank, size, root, fitter, model, support, status, message);
}

/* Steps 1 and 2 of the one-shot reduction: the local fit and the agreement on its outcome. */
static moe_status fit_locally(MPI_Comm comm, int rank, moe_fitter_t *fitter,
                              const moe_model_t *model, moe_model_t **local, size_t n,
                              const double *X, size_t ldx, const double *y,
                              const double *weights)
{
    char message[MESSAGE_SIZE] = "";
    moe_status status = MOE_OK;
    if ((status = moe_model_clone(local, model)) != MOE_OK)
        snprintf(message, sizeof message, "%s", moe_last_error());
    if (status == MOE_OK)
        status = local_fit(fitter, *local, n, X, ldx, y, weights, message);
    return mpi_agree(comm, rank, status, message);
}

/* A log-likelihood on this rank's rows, NaN when it has none (then so is the sum). */
static double rows_loglik(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                          const double *y, const double *weights)
{
    double loglik = 0.0;
    if (n > 0 && moe_model_loglik(model, n, X, ldx, y, weights, &loglik) != MOE_OK)
        loglik = NAN;
    return loglik;
}

static double rows_weight(size_t n, const double *weights)
{
    if (weights == NULL)
        return (double)n;
    double total = 0.0;
    for (size_t i = 0; i < n; ++i)
        total += weights[i];
    return total;
}

/* The report of a successful fit: the result against the local fits on every rank's rows
   (the gap per row: how much better a rank's own fit explains its rows). */
static void measure_fit(MPI_Comm comm, int rank, int size, const moe_model_t *model,
                        const moe_model_t *local, size_t n, const double *X, size_t ldx,
                        const double *y, const double *weights, double start)
{
    double mine[3] = {rows_weight(n, weights), rows_loglik(model, n, X, ldx, y, weights),
                      size > 1 ? rows_loglik(local, n, X, ldx, y, weights) : 0.0};
    if (size == 1)
        mine[2] = mine[1];
    double sums[3];
    MPI_Allreduce(mine, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
    /* A local fit explains its own rows better than any other model by about P / 2 nats
       (its in-sample optimism), more on few rows: the allowance P / n_r per row keeps small
       random shards from looking different (docs: MOE_MPI_SHARD_GAP). */
    double gap = mine[0] > 0.0 ? (mine[2] - mine[1]) / mine[0] : 0.0;
    double allowance = MOE_MPI_SHARD_GAP +
                       (mine[0] > 0.0 ? (double)moe_model_n_free_params(model) / mine[0] : 0.0);
    struct {
        double excess;
        int rank;
    } excess = {gap - allowance, rank}, worst;
    if (isnan(excess.excess)) /* NaN loses every comparison: a rank without a likelihood wins */
        excess.excess = INFINITY;
    MPI_Allreduce(&excess, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    double worst_measures[2] = {gap, allowance};
    MPI_Bcast(worst_measures, 2, MPI_DOUBLE, worst.rank, comm);
    double seconds = MPI_Wtime() - start, slowest = seconds;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    moe_mpi_report report = MOE_MPI_REPORT_INIT;
    report.ranks = size;
    report.n_obs = sums[0];
    report.loglik = sums[1];
    report.local_loglik = sums[2];
    report.worst_gap = size > 1 ? worst_measures[0] : 0.0;
    report.allowance = worst_measures[1];
    report.worst_rank = size > 1 ? worst.rank : 0;
    report.shards_differ = size > 1 && !(worst.excess <= 0.0);
    report.seconds = slowest;
    last_report = report;
}

void mpi_set_report(const moe_mpi_report *report)
{
    last_report = *report;
}

/* The bytes of a report of `version`: a caller built against an older header has a smaller
   struct, and nothing past it may be written. */
static size_t report_size(unsigned int version)
{
    return version == 1 ? offsetof(moe_mpi_report, method) : sizeof(moe_mpi_report);
}

moe_status moe_mpi_report_init(moe_mpi_report *report, unsigned int version)
{
    if (report == NULL)
        return mpi_fail(MOE_ERR_NULL_POINTER, "report is NULL");
    moe_status status =
        check_struct_version(last_error, "MPI report", version, MOE_MPI_REPORT_VERSION);
    if (status != MOE_OK)
        return status;
    moe_mpi_report zero = MOE_MPI_REPORT_INIT;
    zero.version = version;
    memcpy(report, &zero, report_size(version));
    return MOE_OK;
}

moe_status moe_mpi_get_report(moe_mpi_report *report)
{
    if (report == NULL)
        return mpi_fail(MOE_ERR_NULL_POINTER, "report is NULL");
    moe_status status =
        check_struct_version(last_error, "MPI report", report->version, MOE_MPI_REPORT_VERSION);
    if (status != MOE_OK)
        return status;
    if (last_report.version == 0)
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "no moe_mpi_fit succeeded on this thread");
    moe_mpi_report copy = last_report;
    copy.version = report->version;
    memcpy(report, &copy, report_size(copy.version));
    return MOE_OK;
}

moe_status moe_mpi_fit(MPI_Comm comm, int root, moe_fitter_t *fitter, moe_model_t *model,
                       size_t n, const double *X, size_t ldx, const double *y,
                       const double *weights, size_t support)
{
    last_error[0] = '\0';
    int rank = 0, size = 1;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "not a usable communicator");
    moe_status status = agree_to_fit(comm, rank, size, root, fitter, model, support);
    if (status != MOE_OK)
        return status;
    /* The time of the fit from here, where every rank has arrived: not the wait for the
       slowest rank to finish reading its rows. */
    double started = MPI_Wtime();
    if (strcmp(moe_fitter_estimator_name(fitter), "em") == 0)
        return mpi_exact_em(comm, root, fitter, model, n, X, ldx, y, weights, support, started);
    moe_model_t *local = NULL;
    status = fit_locally(comm, rank, fitter, model, &local, n, X, ldx, y, weights);
    if (status == MOE_OK && size == 1) {
        status = mpi_copy_parameters(model, local);
        if (status != MOE_OK)
            mpi_fail(status, "cannot copy the local fit");
    } else if (status == MOE_OK) {
        /* 3. the models and the support to root; 4. its reduction to every rank */
        fit_exchange exchange;
        memset(&exchange, 0, sizeof exchange);
        exchange.comm = comm;
        exchange.rank = rank;
        exchange.size = size;
        exchange.root = root;
        exchange.d = moe_model_n_features(model);
        exchange.width = exchange.d + 1;
        status = exchange_sizes(&exchange, local, n, support);
        if (status == MOE_OK)
            status = gather_to_root(&exchange, pick_support(&exchange, fitter, n, X, ldx, y));
        if (status == MOE_OK)
            status = broadcast_result(&exchange, fitter, model);
        exchange_free(&exchange);
    }
    if (status == MOE_OK)
        measure_fit(comm, rank, size, model, local, n, X, ldx, y, weights, started);
    moe_model_free(local);
    return status;
}

/* Statistics of one model over every rank's rows -------------------------------------- */

/* Every rank's status agreed (the smallest failing rank's), then that every rank's model has
   the same number of free parameters, so the allreduces that follow match in size. */
static moe_status agree_on_statistics(MPI_Comm comm, moe_status status, const char *message,
                                      const moe_model_t *model)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    status = mpi_agree(comm, rank, status, message);
    if (status != MOE_OK)
        return status;
    /* the free parameters, then the inputs' description (describe_inputs' slots) */
    enum { COUNT = EXPERT_FEATURES - GATE_INTERCEPT + 2 };
    uint64_t settings[SETTINGS] = {0}, extremes[2 * COUNT];
    describe_inputs(settings, model);
    extremes[0] = moe_model_n_free_params(model);
    memcpy(extremes + 1, settings + GATE_INTERCEPT, (COUNT - 1) * sizeof *extremes);
    for (size_t i = 0; i < COUNT; ++i)
        extremes[COUNT + i] = ~extremes[i];
    MPI_Allreduce(MPI_IN_PLACE, extremes, 2 * COUNT, MPI_UINT64_T, MPI_MAX, comm);
    if (extremes[0] != ~extremes[COUNT])
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT,
                    "the ranks' models differ in their free parameters (%llu and %llu): every "
                    "rank must pass the same model",
                    (unsigned long long)~extremes[COUNT], (unsigned long long)extremes[0]);
    for (size_t i = 1; i < COUNT; ++i)
        if (extremes[i] != ~extremes[COUNT + i]) {
            char text[256];
            name_setting(GATE_INTERCEPT + i - 1, ~extremes[COUNT + i], extremes[i], text,
                         sizeof text);
            return mpi_fail(MOE_ERR_INVALID_ARGUMENT,
                        "the ranks' models differ in %s: every rank must pass the same model",
                        text);
        }
    return MOE_OK;
}

static int usable_communicator(MPI_Comm comm)
{
    int rank = 0;
    return comm != MPI_COMM_NULL && MPI_Comm_rank(comm, &rank) == MPI_SUCCESS;
}

moe_status moe_mpi_criteria(MPI_Comm comm, const moe_model_t *model, size_t n, const double *X,
                            size_t ldx, const double *y, const double *weights,
                            moe_criteria *criteria)
{
    last_error[0] = '\0';
    if (!usable_communicator(comm))
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "not a usable communicator");
    moe_status status = MOE_OK;
    char message[MESSAGE_SIZE] = "";
    moe_criteria local = MOE_CRITERIA_INIT;
    if (model == NULL || criteria == NULL) {
        status = MOE_ERR_NULL_POINTER;
        snprintf(message, sizeof message, "model or criteria is NULL");
    } else {
        status = check_struct_version(message, "criteria", criteria->version,
                                      MOE_CRITERIA_VERSION);
        if (status == MOE_OK && n > 0 &&
            (status = moe_model_criteria(model, n, X, ldx, y, weights, &local)) != MOE_OK)
            snprintf(message, sizeof message, "%s", moe_last_error());
    }
    status = agree_on_statistics(comm, status, message, model);
    if (status != MOE_OK)
        return status;
    double sums[3] = {local.loglik, local.entropy, local.n_obs};
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
    double n_params = (double)moe_model_n_free_params(model);
    double bic = -2.0 * sums[0] + n_params * log(sums[2]);
    if (!(sums[2] > 0.0))
        return mpi_fail(MOE_ERR_EMPTY_INPUT, "no rows on any rank");
    if (!isfinite(bic) || !isfinite(bic + 2.0 * sums[1]))
        return mpi_fail(MOE_ERR_NUMERICAL, "the information criteria overflow (log-likelihood %g)",
                    sums[0]);
    criteria->loglik = sums[0];
    criteria->n_params = n_params;
    criteria->n_obs = sums[2];
    criteria->aic = -2.0 * sums[0] + 2.0 * n_params;
    criteria->bic = bic;
    criteria->icl = bic + 2.0 * sums[1];
    criteria->entropy = sums[1];
    return MOE_OK;
}

moe_status moe_mpi_information(MPI_Comm comm, const moe_model_t *model, size_t n,
                               const double *X, size_t ldx, const double *y,
                               const double *weights, double gate_l2, double expert_ridge,
                               double *information, size_t length)
{
    last_error[0] = '\0';
    if (!usable_communicator(comm))
        return mpi_fail(MOE_ERR_INVALID_ARGUMENT, "not a usable communicator");
    moe_status status = MOE_OK;
    char message[MESSAGE_SIZE] = "";
    size_t P = model != NULL ? moe_model_n_free_params(model) : 0;
    if (model == NULL || information == NULL) {
        status = MOE_ERR_NULL_POINTER;
        snprintf(message, sizeof message, "model or information is NULL");
    } else if (P > 0 && length / P < P) {
        status = MOE_ERR_DIMENSION;
        snprintf(message, sizeof message, "the output holds %zu values, %zu x %zu needed",
                 length, P, P);
    } else if (P * P > INT_MAX) {
        status = MOE_ERR_UNSUPPORTED;
        snprintf(message, sizeof message, "%zu free parameters: too many to sum by MPI", P);
    } else if (n == 0) {
        memset(information, 0, P * P * sizeof(double));
    } else if ((status = moe_model_information_penalized(model, n, X, ldx, y, weights, gate_l2,
                                                         expert_ridge, information, length)) !=
               MOE_OK) {
        snprintf(message, sizeof message, "%s", moe_last_error());
    }
    status = agree_on_statistics(comm, status, message, model);
    if (status == MOE_OK && P > 0)
        MPI_Allreduce(MPI_IN_PLACE, information, (int)(P * P), MPI_DOUBLE, MPI_SUM, comm);
    return status;
}

/* The inverse of a P x P information matrix, in place, or MOE_ERR_NUMERICAL. */
static moe_status invert_information(size_t P, double *matrix, char *message)
{
    lapack_int info = P > 0 ? LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)P, matrix,
                                             (lapack_int)P)
                            : 0;
    if (info == 0 && P > 0)
        info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'U', (lapack_int)P, matrix, (lapack_int)P);
    if (info != 0) {
        snprintf(message, MESSAGE_SIZE,
                 "the observed information is not positive definite (parameter %d): an "
                 "expert without data, separation, or a point that is not a maximum; "
                 "standard errors are not defined",
                 (int)info);
        return MOE_ERR_NUMERICAL;
    }
    for (size_t a = 0; a < P; ++a)
        for (size_t b = 0; b < a; ++b)
            matrix[a * P + b] = matrix[b * P + a];
    for (size_t i = 0; i < P * P; ++i)
        if (!isfinite(matrix[i])) {
            snprintf(message, MESSAGE_SIZE, "the covariance is not finite");
            return MOE_ERR_NUMERICAL;
        }
    return MOE_OK;
}

moe_status moe_mpi_vcov(MPI_Comm comm, const moe_model_t *model, size_t n, const double *X,
                        size_t ldx, const double *y, const double *weights, double gate_l2,
                        double expert_ridge, double *covariance, size_t length)
{
    moe_status status = moe_mpi_information(comm, model, n, X, ldx, y, weights, gate_l2,
                                            expert_ridge, covariance, length);
    if (status != MOE_OK)
        return status;
    /* Rank 0 alone inverts: every rank then holds the same bits and the same status. */
    int rank = 0, code = MOE_OK;
    MPI_Comm_rank(comm, &rank);
    size_t P = moe_model_n_free_params(model);
    char message[MESSAGE_SIZE] = "";
    if (rank == 0)
        code = (int)invert_information(P, covariance, message);
    MPI_Bcast(&code, 1, MPI_INT, 0, comm);
    if (code != MOE_OK) {
        MPI_Bcast(message, MESSAGE_SIZE, MPI_CHAR, 0, comm);
        message[MESSAGE_SIZE - 1] = '\0';
        return mpi_fail((moe_status)code, "%s", message);
    }
    if (P > 0)
        MPI_Bcast(covariance, (int)(P * P), MPI_DOUBLE, 0, comm);
    return MOE_OK;
}
