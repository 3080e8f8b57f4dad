/*
 * moe-mpi: the moe tool's fit across the ranks of an MPI job (libmoe_mpi).
 *
 *   mpirun -np 4 moe-mpi fit 'part%d.csv' --response y -k 3 -o model.moe
 *   mpirun -np 4 moe-mpi fit data.csv --response y -k 3 --family poisson -o model.moe
 *   mpirun -np 4 moe-mpi fit data.csv --response y -k 3 --method ot
 *
 * With a printf-style %d (or %02d, ...) in the path every rank reads its own file (the rank
 * number formatted in); otherwise every rank reads the one file and keeps its block of rows.
 * Two methods, as moe_mpi_fit's fitter chooses:
 *   em (the default): the exact em of every rank's rows, every pass's sums added over the
 *      ranks, so the result is the one `moe fit` gives on all the rows whatever the split;
 *      every family and link moe fit takes;
 *   ot: each rank fits its rows alone and the root reduces the local models by optimal
 *      transport, one exchange of models instead of one per pass, for when communication is
 *      dear; Gaussian experts with the identity link, and rows in random order (--shuffle).
 * Every rank holds the result; rank 0 alone prints the summary (the log-likelihood, criteria
 * and standard errors over every rank's rows) and writes the model. Takes moe fit's options
 * but those a fit over ranks cannot honour (refused by name), and --method and --shuffle.
 * A failure is every rank's, with the same exit status; a library message about a row is
 * told in the terms of the file and line the row came from, as moe fit tells it.
 */
#include "../cli.h"
#include "../row_message.h"

#include <moe/mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: mpirun -np N moe-mpi fit DATA.csv|'DATA%d.csv' --response NAME [options]\n"
    "\n"
    "Fit a mixture of experts to rows spread over the ranks of an MPI job (each rank's own\n"
    "file when the path holds %d, else its block of the one file); rank 0 prints the\n"
    "summary and writes -o. Exit status: 0 fitted, 1 the fit failed, 2 usage or input error\n"
    "(on every rank). `moe-mpi fit --help` lists the options.\n"
    "\n"
    "  --method em   (default) the exact em: every pass's sums are added over the ranks, so\n"
    "                the fit is the one moe fit gives on all the rows, whatever the split;\n"
    "                every family and link of moe fit\n"
    "  --method ot   the one-shot reduction, for when communication is dear: each rank\n"
    "                fits its rows alone, the root reduces the local models by optimal\n"
    "                transport (one exchange instead of one per pass); Gaussian experts,\n"
    "                identity link, and rows in random order across the ranks\n"
    "  --shuffle     redistribute the rows at random across the ranks first (from --seed;\n"
    "                the same seed and number of ranks give the same fit). ot needs it for\n"
    "                rows not in random order, e.g. sorted by a column, and warns when the\n"
    "                result explains some rank's rows much worse than that rank's own fit\n"
    "                does; em does not need it.\n";

/* moe-mpi fit --help: the options it acts on, and those of moe fit it refuses. */
static const char fit_usage[] =
    "usage: mpirun -np N moe-mpi fit DATA.csv|'DATA%d.csv' --response NAME [options]\n"
    "\n"
    "Fit a mixture of experts across the ranks of an MPI job (each rank's own file when the\n"
    "path holds %d, else its block of the one file); rank 0 prints the summary and writes\n"
    "-o.\n"
    "\n"
    "  --method em|ot         em (default): the exact em, every pass's sums added over the\n"
    "                         ranks: the fit moe fit gives on all the rows, whatever the\n"
    "                         split. ot: each rank's em, the local models reduced by\n"
    "                         optimal transport at the root: one exchange instead of one\n"
    "                         per pass, for when communication is dear; Gaussian experts\n"
    "                         and the identity link only (--estimator em|ot: the same)\n"
    "  --response NAME        the response column (required)\n"
    "  --features A,B,...     the feature columns (default: see moe fit --help)\n"
    "  --gate-features LIST, --expert-features LIST, --offset COLUMN\n"
    "                         the inputs of the gate and of the experts, as moe fit's\n"
    "  --family F             gaussian (default), logistic, multinomial, poisson or t (em)\n"
    "  --link L               the Gaussian experts' mean: identity (default), sigmoid or\n"
    "                         relu (em)\n"
    "  -k, --experts K        number of experts (default 2)\n"
    "  --no-intercept         experts and gate without intercept terms\n"
    "  --intervals            95% Wald intervals beside the standard errors\n"
    "  --seed S, --n-init R, --max-iter N, --tol T, --threads N\n"
    "                         the fitter's options of the same names\n"
    "  --option NAME=VALUE    any other option of the method (repeatable; `moe options em`,\n"
    "                         `moe options ot`)\n"
    "  --shuffle              redistribute the rows at random across the ranks first\n"
    "                         (from --seed; the same seed and number of ranks give the\n"
    "                         same fit): ot needs it for rows not in random order, e.g.\n"
    "                         sorted by a column, and warns when the result explains some\n"
    "                         rank's rows much worse than that rank's own fit does; em\n"
    "                         does not need it (its fit does not depend on the split)\n"
    "  --sep C                field delimiter (default ','; 'tab' for tabs)\n"
    "  -o, --output FILE      save the fitted model (rank 0)\n"
    "  --json                 print the summary as JSON\n"
    "\n"
    "moe fit's --estimator (other than em and ot), --batch-size, --checkpoint and --resume\n"
    "are refused, and so are --family and --link under --method ot (other than gaussian\n"
    "and identity): the fit over ranks does not do them.\n"
    "\n"
    "Exit status (the same on every rank): 0 fitted, 1 the fit failed, 2 usage or input\n"
    "error.\n";

/* START_ROWS: the exact em's start sample, moe_mpi_fit's default (moe/mpi.h), given here so
   that the summary can say it. */
enum { PATH_SIZE = 4096, MESSAGE_SIZE = 1024, START_ROWS = 20000 };

/* moe-mpi's own options, taken out before moe fit's are read. */
typedef struct mpi_arguments {
    const char *method; /* --method's value, or NULL */
    int shuffle;
} mpi_arguments;

static int take_own_arguments(int *argc, char **argv, mpi_arguments *own)
{
    int kept = 1;
    for (int i = 1; i < *argc; ++i) {
        if (strcmp(argv[i], "--shuffle") == 0) {
            own->shuffle = 1;
        } else if (strcmp(argv[i], "--method") == 0) {
            if ((own->method = option_value(*argc, argv, &i)) == NULL)
                return EXIT_USAGE;
        } else {
            argv[kept++] = argv[i];
        }
    }
    *argc = kept;
    return 0;
}

/* The method from --method and --estimator (its synonym, as moe fit spells it). */
static int choose_method(const fit_arguments *a, const char *asked, const char **method)
{
    if (asked != NULL && strcmp(asked, "em") != 0 && strcmp(asked, "ot") != 0)
        return usage_error("fit: --method %s: not em (the exact em, the default) or ot (the "
                           "one-shot reduction)",
                           asked);
    if (a->estimator_given && strcmp(a->estimator, "em") != 0 &&
        strcmp(a->estimator, "ot") != 0)
        return usage_error("fit: --estimator %s: moe-mpi fits with em (the exact em, the "
                           "default) or ot (the one-shot reduction of each rank's em)",
                           a->estimator);
    if (a->estimator_given && asked != NULL && strcmp(a->estimator, asked) != 0)
        return usage_error("fit: --estimator %s and --method %s: two methods", a->estimator,
                           asked);
    *method = asked != NULL ? asked : a->estimator_given ? a->estimator : "em";
    return 0;
}

/* moe fit's options that the fit over ranks cannot honour: refused by name rather than
   ignored, since a user who asks for them would otherwise believe they took effect. */
static int refuse_unsupported(const fit_arguments *a, const char *method)
{
    const char *names[] = {"--batch-size", "--checkpoint", "--resume"};
    const char *values[] = {a->batch_size, a->checkpoint, a->resume};
    for (size_t o = 0; o < 3; ++o)
        if (values[o] != NULL)
            return usage_error("fit: %s: moe-mpi does not stream (use moe fit for a "
                               "streaming fit)",
                               names[o]);
    if (strcmp(method, "ot") != 0)
        return 0;
    if (strcmp(a->family, "gaussian") != 0)
        return usage_error("fit: --family %s: the transport reduction (--method ot) is "
                           "derived for Gaussian experts only (the exact em, --method em, "
                           "fits every family)",
                           a->family);
    if (strcmp(a->link, "identity") != 0)
        return usage_error("fit: --link %s: the transport reduction (--method ot) is "
                           "derived for the identity link only (the exact em, --method em, "
                           "takes every link)",
                           a->link);
    return 0;
}

/* Whether an argument asks for fit's help: before parse_fit_arguments, which prints moe
   fit's. */
static int asks_for_help(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}

/* The path of this rank's file, when the path is a pattern: 1, or 0 when it is none, -1 for
   a pattern with another conversion, -2 when the path would not fit in `size` bytes. */
static int rank_path(const char *pattern, int rank, char *out, size_t size)
{
    const char *percent = strchr(pattern, '%');
    if (percent == NULL)
        return 0;
    /* One conversion, %d with an optional zero-padded width. */
    const char *at = percent + 1;
    while (*at >= '0' && *at <= '9')
        ++at;
    if (*at != 'd' || strchr(at + 1, '%') != NULL)
        return -1;
    /* A width alone may ask for more than the path can hold (or than snprintf can count). */
    char format[16];
    if ((size_t)(at - percent) >= sizeof format - 1 || strtoul(percent + 1, NULL, 10) >= size)
        return -2;
    snprintf(format, sizeof format, "%.*s", (int)(at - percent + 1), percent);
    /* Each piece goes where the last ended, into what is left: a piece that does not fit
       (snprintf then gives the length it wanted) ends it. */
    size_t used = 0;
    int written = snprintf(out, size, "%.*s", (int)(percent - pattern), pattern);
    if (written < 0 || (size_t)written >= size - used)
        return -2;
    used += (size_t)written;
    written = snprintf(out + used, size - used, format, rank);
    if (written < 0 || (size_t)written >= size - used)
        return -2;
    used += (size_t)written;
    written = snprintf(out + used, size - used, "%s", at + 1);
    return written < 0 || (size_t)written >= size - used ? -2 : 1;
}

/* The worst of every rank's exit code (collective): a rank that failed alone makes every
   rank stop at the same point, before any collective of the fit that it would not join. */
static int agree(int code)
{
    int worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* What a rank read: its file (or the one file), and which of its rows it fits. */
typedef struct rank_input {
    char path[PATH_SIZE];
    training_data t;
    size_t first, count;
} rank_input;

/* This rank's file or block; 0 or an exit code after this rank's message. */
static int read_input(int rank, int size, const fit_arguments *a, rank_input *in)
{
    int pattern = rank_path(a->data, rank, in->path, sizeof in->path);
    if (pattern == -1)
        return usage_error("%s: a pattern takes one %%d conversion", a->data);
    if (pattern == -2)
        return usage_error("the path of rank %d from the pattern (%zu bytes) is longer than "
                           "%d bytes",
                           rank, strlen(a->data), PATH_SIZE - 1);
    if (pattern == 0)
        snprintf(in->path, sizeof in->path, "%s", a->data);
    fit_arguments local = *a;
    local.data = in->path;
    int code = read_training_data(&local, &in->t);
    if (code != 0)
        return code;
    const table *data = &in->t.data;
    in->first = 0;
    in->count = data->n;
    if (!pattern) {
        in->first = (size_t)rank * data->n / (size_t)size;
        in->count = (size_t)(rank + 1) * data->n / (size_t)size - in->first;
    }
    return 0;
}

/* Every rank's class labels one after another in rank order (NUL-ended texts) into *all,
   `total` bytes; *before: the labels of the ranks before this one. Collective; 0, or -1 on
   every rank when some rank has no room. */
static int gather_labels(const training_data *t, char **all, int *total, size_t *before)
{
    int rank = 0, size = 1, mine = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t c = 0; c < t->n_classes; ++c)
        mine += (int)strlen(t->classes[c]) + 1;
    int *lengths = malloc((size_t)size * 2 * sizeof(int));
    char *packed = malloc((size_t)mine + 1);
    *all = NULL;
    *total = 0;
    if (agree(lengths == NULL || packed == NULL) == 0) {
        for (size_t c = 0, at = 0; c < t->n_classes; ++c) {
            memcpy(packed + at, t->classes[c], strlen(t->classes[c]) + 1);
            at += strlen(t->classes[c]) + 1;
        }
        MPI_Allgather(&mine, 1, MPI_INT, lengths, 1, MPI_INT, MPI_COMM_WORLD);
        int *displacements = lengths + size;
        for (int r = 0; r < size; ++r) {
            displacements[r] = *total;
            *total += lengths[r];
        }
        *all = malloc((size_t)*total + 1);
        if (agree(*all == NULL) == 0) {
            MPI_Allgatherv(packed, mine, MPI_CHAR, *all, lengths, displacements, MPI_CHAR,
                           MPI_COMM_WORLD);
            *before = 0;
            for (int at = 0; at < displacements[rank]; ++at)
                *before += (*all)[at] == '\0';
        } else {
            free(*all);
            *all = NULL;
        }
    }
    free(lengths);
    free(packed);
    return *all != NULL ? 0 : -1;
}

/* Every rank's class labels made one list, every rank's y mapped into it (collective): each
   rank's file encodes the labels it holds, which another file may lack or order otherwise.
   With one file read by every rank the list is its own. 0 or an exit code. */
static int union_classes(training_data *t)
{
    char *all = NULL;
    int total = 0;
    size_t before = 0, names = 0, count = 0;
    if (gather_labels(t, &all, &total, &before) != 0)
        return usage_error("out of memory");
    for (int at = 0; at < total; at += (int)strlen(all + at) + 1)
        ++names;
    char **labels = malloc((names > 0 ? names : 1) * sizeof *labels), **classes = NULL;
    double *index = malloc((names > 0 ? names : 1) * sizeof(double));
    if (labels != NULL && index != NULL) {
        names = 0;
        for (int at = 0; at < total; at += (int)strlen(all + at) + 1)
            labels[names++] = all + at;
        count = encode_labels(labels, names, index, &classes);
    }
    int code = agree(count == 0);
    if (code == 0) {
        /* this rank's class c is label before + c of the list */
        for (size_t i = 0; i < t->data.n; ++i)
            t->data.y[i] = index[before + (size_t)t->data.y[i]];
        free_labels(t->classes, t->n_classes);
        t->classes = classes;
        t->n_classes = count;
    } else {
        free_labels(classes, count);
    }
    free(all);
    free(labels);
    free(index);
    return code != 0 ? usage_error("out of memory") : 0;
}

/* The rows a rank fits: its block or file, or what moe_mpi_shuffle gave it (owned), whose
   column d (ldx = d + 1) then holds each row's place among all ranks' rows before, so that a
   message about a row can still name its file and line. */
typedef struct rank_rows {
    size_t n, d, ldx;
    const double *X, *y;
    double *owned_X, *owned_y;
    int shuffled;
} rank_rows;

/* Every rank's first row among all ranks' (rank order) for `n` rows here, and the total at
   [size]; NULL on every rank when some rank has no room (collective). */
static unsigned long long *row_offsets(size_t n)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long long mine = n, *offsets = malloc(((size_t)size + 1) * sizeof *offsets);
    if (agree(offsets == NULL) != 0) {
        free(offsets);
        return NULL;
    }
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, offsets + 1, 1, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);
    offsets[0] = 0;
    for (int r = 1; r <= size; ++r)
        offsets[r] += offsets[r - 1];
    return offsets;
}

/* This rank's rows with their place among all ranks' rows as a last column; NULL (for the
   shuffle to refuse on every rank) when out of memory. */
static double *rows_with_places(const rank_rows *rows, unsigned long long first)
{
    size_t width = rows->d + 1;
    double *packed = malloc((rows->n > 0 ? rows->n : 1) * width * sizeof(double));
    if (packed == NULL)
        return NULL;
    for (size_t i = 0; i < rows->n; ++i) {
        if (rows->d > 0)
            memcpy(packed + i * width, rows->X + i * rows->ldx, rows->d * sizeof(double));
        packed[i * width + rows->d] = (double)(first + i);
    }
    return packed;
}

/* --shuffle: every rank's rows redistributed at random (the fitter's seed), collective.
   Returns 0, or an exit code on every rank (rank 0 says why). */
static int shuffle_rows(int rank, const moe_fitter_t *fitter, rank_rows *rows)
{
    double seed = 0.0;
    moe_fitter_get_double(fitter, MOE_OPT_SEED, &seed);
    unsigned long long *offsets = row_offsets(rows->n);
    if (offsets == NULL)
        return rank == 0 ? usage_error("cannot shuffle the rows: out of memory") : EXIT_USAGE;
    double *packed = rows_with_places(rows, offsets[rank]);
    free(offsets);
    size_t received = 0, width = rows->d + 1;
    moe_status status = moe_mpi_shuffle(MPI_COMM_WORLD, (uint64_t)seed, rows->n, width, packed,
                                        width, rows->y, NULL, 0, NULL, NULL, NULL, &received);
    if (status == MOE_OK) {
        rows->owned_X = malloc((received > 0 ? received : 1) * width * sizeof(double));
        rows->owned_y = malloc((received > 0 ? received : 1) * sizeof(double));
        /* A rank without room asks for the size again: every rank then fails alike. */
        int room = rows->owned_X != NULL && rows->owned_y != NULL;
        status = moe_mpi_shuffle(MPI_COMM_WORLD, (uint64_t)seed, rows->n, width, packed, width,
                                 rows->y, NULL, room ? received : 0,
                                 room ? rows->owned_X : NULL, room ? rows->owned_y : NULL, NULL,
                                 &received);
    }
    free(packed);
    if (status != MOE_OK) {
        if (rank == 0)
            fprintf(stderr, "moe-mpi: cannot shuffle the rows: %s\n", moe_mpi_last_error());
        return status == MOE_ERR_OUT_OF_MEMORY ? EXIT_FIT_PROBLEM : EXIT_USAGE;
    }
    rows->n = received;
    rows->ldx = width;
    rows->X = rows->owned_X;
    rows->y = rows->owned_y;
    rows->shuffled = 1;
    return 0;
}

/* The row a library message names among all ranks' rows as they were fitted: "row N" (the
   exact em counts among all ranks' rows) or "rank R: row I" (ot names a rank and its row);
   *rest: what follows the number. 0 when it names none. */
static int named_row(const char *message, const unsigned long long *offsets, int size,
                     unsigned long long *row, const char **rest)
{
    int rank = -1, used = 0;
    if (sscanf(message, "rank %d: %n", &rank, &used) == 1 && used > 0 && rank >= 0 &&
        rank < size)
        message += used;
    else
        rank = -1;
    if (strncmp(message, "row ", 4) != 0 || message[4] < '0' || message[4] > '9')
        return 0;
    char *end = NULL;
    *row = strtoull(message + 4, &end, 10) + (rank >= 0 ? offsets[rank] : 0);
    *rest = end;
    return *row < offsets[size];
}

/* The rank whose rows hold `row` (among all ranks' rows). */
static int owner_of(const unsigned long long *offsets, int size, unsigned long long row)
{
    int rank = 0;
    while (rank < size - 1 && row >= offsets[rank + 1])
        ++rank;
    return rank;
}

/* The fit's message in the input's terms, the same on every rank (collective): a row's file
   and line, found where the row came from: the rank that holds it after a shuffle tells its
   place before, and the rank that read it names its file's line, as moe fit would. */
static void input_message(const fit_arguments *a, const rank_input *in, const rank_rows *rows,
                          const char *message, char *out)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long long *fitted = row_offsets(rows->n), *read = row_offsets(in->count), row = 0;
    const char *rest = NULL;
    char text[MESSAGE_SIZE];
    snprintf(out, MESSAGE_SIZE, "%s", message);
    if (fitted == NULL || read == NULL || !named_row(message, fitted, size, &row, &rest)) {
        /* one about the response column as a whole names it, as moe fit does */
        snprintf(out, MESSAGE_SIZE, "%s",
                 row_message(message, a->data, &in->t.data, 0, text, sizeof text));
        free(fitted);
        free(read);
        return;
    }
    if (rows->shuffled) {
        int holder = owner_of(fitted, size, row);
        double place = 0.0;
        if (rank == holder)
            place = rows->X[(row - fitted[holder]) * rows->ldx + rows->d];
        MPI_Bcast(&place, 1, MPI_DOUBLE, holder, MPI_COMM_WORLD);
        row = (unsigned long long)place;
    }
    int owner = owner_of(read, size, row);
    if (rank == owner) {
        char local[MESSAGE_SIZE];
        snprintf(local, sizeof local, "row %llu%s", row - read[owner], rest);
        const char *said = row_message(local, in->path, &in->t.data, in->first, text,
                                       sizeof text);
        if (said == text)
            snprintf(out, MESSAGE_SIZE, "%s", text);
    }
    MPI_Bcast(out, MESSAGE_SIZE, MPI_CHAR, owner, MPI_COMM_WORLD);
    out[MESSAGE_SIZE - 1] = '\0';
    free(fitted);
    free(read);
}

/* The standard errors of the fit's objective over every rank's rows (as moe fit's), or NULL
   with a note. Collective. */
static double *standard_errors_of(int rank, const moe_model_t *model, moe_fitter_t *fitter,
                                  const rank_rows *rows, double *gate_l2, double *expert_ridge)
{
    if (moe_fitter_get_double(fitter, MOE_OPT_GATE_L2, gate_l2) != MOE_OK ||
        moe_fitter_get_double(fitter, MOE_OPT_EXPERT_RIDGE, expert_ridge) != MOE_OK)
        *gate_l2 = *expert_ridge = 0.0;
    size_t P = moe_model_n_free_params(model);
    if (P > 4000) {
        if (rank == 0)
            fprintf(stderr, "moe-mpi: note: no standard errors: more than 4000 free "
                            "parameters\n");
        return NULL;
    }
    double *covariance = malloc((P > 0 ? P * P : 1) * sizeof(double));
    double *errors = malloc((P > 0 ? P : 1) * sizeof(double));
    /* Every rank enters the collective; one without room passes no buffer and fails it. */
    int room = covariance != NULL && errors != NULL;
    moe_status status = moe_mpi_vcov(MPI_COMM_WORLD, model, rows->n, rows->X, rows->ldx,
                                     rows->y, NULL, *gate_l2, *expert_ridge,
                                     room ? covariance : NULL, P * P);
    if (status == MOE_OK) {
        for (size_t j = 0; j < P; ++j)
            errors[j] = sqrt(covariance[j * P + j]);
    } else {
        if (rank == 0)
            fprintf(stderr, "moe-mpi: note: no standard errors: %s\n", moe_mpi_last_error());
        free(errors);
        errors = NULL;
    }
    free(covariance);
    return errors;
}

/* Each expert's mean gate weight over every rank's rows, as moe fit's summary gives it, or
   NULL (collective). */
static double *mean_gate_of(const moe_model_t *model, const rank_rows *rows)
{
    size_t K = moe_model_n_experts(model);
    double *proba = malloc((rows->n > 0 ? rows->n : 1) * K * sizeof(double));
    /* K sums, the rows, the ranks that failed; then their totals */
    double *sums = calloc(2 * (K + 2), sizeof(double));
    if (agree(proba == NULL || sums == NULL) != 0) {
        free(proba);
        free(sums);
        return NULL;
    }
    int ok = rows->n == 0 || moe_model_gate_proba(model, rows->n, rows->X, rows->ldx, proba,
                                                  rows->n * K) == MOE_OK;
    for (size_t i = 0; ok && i < rows->n; ++i)
        for (size_t k = 0; k < K; ++k)
            sums[k] += proba[i * K + k];
    sums[K] = (double)rows->n;
    sums[K + 1] = ok ? 0.0 : 1.0;
    double *total = sums + K + 2;
    MPI_Allreduce(sums, total, (int)K + 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    free(proba);
    double *mean = total[K + 1] == 0.0 && total[K] > 0.0 ? malloc(K * sizeof(double)) : NULL;
    for (size_t k = 0; mean != NULL && k < K; ++k)
        mean[k] = total[k] / total[K];
    free(sums);
    return mean;
}

/* What the fit's summary needs from every rank's rows (collective), for rank 0 to print. */
typedef struct fit_statistics {
    moe_mpi_report measures;
    moe_criteria criteria;
    int have_criteria;
    double *errors, *mean_gate, gate_l2, expert_ridge;
} fit_statistics;

/* The method's part of the summary: its name on the fit line, its own line after the
   summary, and the "mpi" member of the JSON object. */
typedef struct method_summary {
    char name[64], line[256], json[512];
} method_summary;

/* A JSON number: null for what JSON cannot write (a NaN gap when a row has no likelihood). */
static const char *json_value(double value, char *buffer, size_t size)
{
    if (isfinite(value))
        snprintf(buffer, size, "%.17g", value);
    else
        snprintf(buffer, size, "null");
    return buffer;
}

/* `start_rows`: the exact em's start sample (0: the model's parameters were the start). */
static void describe_method(const moe_mpi_report *m, size_t start_rows, method_summary *out)
{
    if (m->method == MOE_MPI_METHOD_EM) {
        /* The bytes a pass costs are what the method's scaling rests on: O(K p^2), not the
           rows. */
        double per_pass = m->passes > 0 ? m->bytes / (double)m->passes : 0.0;
        char start[96] = "rank 0's model";
        if (start_rows > 0) /* the summary's starts are the fit's from it, not the search's */
            snprintf(start, sizeof start, "the best fit of a sample of %zu rows", start_rows);
        snprintf(out->name, sizeof out->name, "em (MPI, exact, %d rank%s)", m->ranks,
                 m->ranks == 1 ? "" : "s");
        snprintf(out->line, sizeof out->line,
                 "MPI: %d rank%s, %zu iteration%s from %s, %zu passes with their sums added "
                 "over the ranks, %.0f bytes per pass (the most a rank sent and received)\n",
                 m->ranks, m->ranks == 1 ? "" : "s", m->iterations,
                 m->iterations == 1 ? "" : "s", start, m->passes, per_pass);
        snprintf(out->json, sizeof out->json,
                 "\"mpi\": {\"method\": \"em\", \"ranks\": %d, \"iterations\": %zu, "
                 "\"passes\": %zu, \"bytes\": %.17g, \"bytes_per_pass\": %.17g}",
                 m->ranks, m->iterations, m->passes, m->bytes, per_pass);
        return;
    }
    char gap[32], allowance[32];
    snprintf(out->name, sizeof out->name, "ot (MPI)");
    snprintf(out->line, sizeof out->line,
             "ranks: %d; the result on a rank's rows against that rank's own fit: at most "
             "%.4g nats per row worse (rank %d)\n",
             m->ranks, m->worst_gap, m->worst_rank);
    snprintf(out->json, sizeof out->json,
             "\"mpi\": {\"method\": \"ot\", \"ranks\": %d, \"worst_gap\": %s, \"worst_rank\": "
             "%d, \"allowance\": %s, \"shards_differ\": %s}",
             m->ranks, json_value(m->worst_gap, gap, sizeof gap), m->worst_rank,
             json_value(m->allowance, allowance, sizeof allowance),
             m->shards_differ ? "true" : "false");
}

/* Rank 0's part: ot's warning, the summary and the model file. */
static int print_fit(const fit_arguments *a, moe_model_t *model, moe_fitter_t *fitter,
                     const training_data *t, const fit_statistics *s)
{
    const moe_mpi_report *m = &s->measures;
    if (m->shards_differ)
        fprintf(stderr,
                "moe-mpi: warning: the reduced model explains rank %d's rows %.3g nats "
                "per row worse than that rank's own fit (allowed: %.3g): the ranks' "
                "rows look like samples of different distributions (a file sorted by a "
                "column, split in blocks?), and the result is unreliable: shuffle the "
                "rows (--shuffle) or the files\n",
                m->worst_rank, m->worst_gap, m->allowance);
    fit_name_model(model, &t->data, t->classes, t->n_classes);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    report.seconds = m->seconds; /* the slowest rank's wall time, not root's */
    if (m->method == MOE_MPI_METHOD_EM)
        fit_warnings(&report, a->experts);
    double init = MOE_INIT_MIXED;
    moe_fitter_get_double(fitter, MOE_OPT_INIT, &init);
    size_t start_rows = m->n_obs < START_ROWS ? (size_t)m->n_obs : START_ROWS;
    method_summary method;
    describe_method(m, init == MOE_INIT_MODEL ? 0 : start_rows, &method);
    size_t rows = s->have_criteria ? (size_t)s->criteria.n_obs : t->data.n;
    fit_summary summary = {s->have_criteria ? &s->criteria : NULL,
                           s->mean_gate,
                           &report,
                           method.name,
                           rows,
                           s->errors,
                           a->intervals,
                           s->gate_l2,
                           s->expert_ridge,
                           0,
                           method.json};
    if (a->json) {
        print_summary_json(stdout, model, &summary);
    } else {
        print_summary(stdout, model, &summary);
        fputs(method.line, stdout);
    }
    if (a->output != NULL && moe_model_save(model, a->output) != MOE_OK) {
        fprintf(stderr, "moe-mpi: cannot save the model: %s\n", moe_last_error());
        return EXIT_FIT_PROBLEM;
    }
    return 0;
}

/* The fit's measures over every rank's rows (collective), then rank 0's summary. */
static int summarize(int rank, const fit_arguments *a, moe_model_t *model,
                     moe_fitter_t *fitter, const training_data *t, const rank_rows *rows)
{
    moe_mpi_report measures = MOE_MPI_REPORT_INIT;
    moe_criteria criteria = MOE_CRITERIA_INIT;
    fit_statistics s;
    memset(&s, 0, sizeof s);
    s.measures = measures;
    s.criteria = criteria;
    moe_mpi_get_report(&s.measures);
    s.have_criteria = moe_mpi_criteria(MPI_COMM_WORLD, model, rows->n, rows->X, rows->ldx,
                                       rows->y, NULL, &s.criteria) == MOE_OK;
    s.errors = standard_errors_of(rank, model, fitter, rows, &s.gate_l2, &s.expert_ridge);
    /* ot's summary stays as it was; the exact em's is moe fit's */
    if (s.measures.method == MOE_MPI_METHOD_EM)
        s.mean_gate = mean_gate_of(model, rows);
    int code = rank == 0 ? print_fit(a, model, fitter, t, &s) : 0;
    free(s.errors);
    free(s.mean_gate);
    return code;
}

static int create_fit(const fit_arguments *a, const char *method, const training_data *t,
                      moe_model_t **model, moe_fitter_t **fitter)
{
    int code = fit_create_model(a, t, a->experts, model);
    if (code == 0 && moe_fitter_create(fitter, method) != MOE_OK)
        code = usage_error("%s", moe_last_error());
    return code == 0 ? fit_set_options(*fitter, a) : code;
}

/* A failed fit: the same status and message on every rank; rank 0 says it. */
static int fit_failed(int rank, const fit_arguments *a, const rank_input *in,
                      const rank_rows *rows, moe_status status)
{
    char said[MESSAGE_SIZE], message[MESSAGE_SIZE];
    snprintf(said, sizeof said, "%s", moe_mpi_last_error());
    input_message(a, in, rows, said, message);
    return rank == 0 ? fit_failure(status, "", message) : fit_failure_code(status);
}

static int run(int rank, int size, const fit_arguments *a, const char *method, int shuffle)
{
    rank_input in;
    memset(&in, 0, sizeof in);
    int code = agree(read_input(rank, size, a, &in));
    if (code == 0 && is_class_family(in.t.family)) {
        code = union_classes(&in.t);
        if (code == 0) /* the same classes everywhere: said once */
            code = agree(rank == 0 ? check_classes(a, &in.t) : 0);
    }
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    if (code == 0)
        code = agree(create_fit(a, method, &in.t, &model, &fitter));
    rank_rows rows;
    memset(&rows, 0, sizeof rows);
    if (code == 0) {
        const table *data = &in.t.data;
        rows.n = in.count;
        rows.d = rows.ldx = data->d;
        rows.X = data->X + in.first * data->d;
        rows.y = data->y + in.first;
    }
    if (code == 0 && shuffle)
        code = shuffle_rows(rank, fitter, &rows);
    if (code == 0) {
        size_t support = strcmp(method, "em") == 0 ? START_ROWS : 0;
        moe_status status = moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, rows.n, rows.X,
                                        rows.ldx, rows.y, NULL, support);
        if (status != MOE_OK)
            code = fit_failed(rank, a, &in, &rows, status);
    }
    if (code == 0)
        code = summarize(rank, a, model, fitter, &in.t, &rows);
    free(rows.owned_X);
    free(rows.owned_y);
    moe_model_free(model);
    moe_fitter_free(fitter);
    free_training_data(&in.t);
    return code;
}

/* moe-mpi fit's arguments, then the fit: an exit code. */
static int command_fit_mpi(int rank, int size, int argc, char **argv)
{
    mpi_arguments own = {NULL, 0};
    int code = take_own_arguments(&argc, argv, &own);
    if (code != 0)
        return code;
    if (asks_for_help(argc - 1, argv + 1)) {
        if (rank == 0)
            fputs(fit_usage, stdout);
        return 0;
    }
    fit_arguments arguments;
    const char *method = "em";
    int parsed = parse_fit_arguments(argc - 1, argv + 1, &arguments, 0);
    if (parsed == 0)
        parsed = choose_method(&arguments, own.method, &method);
    if (parsed == 0)
        parsed = refuse_unsupported(&arguments, method);
    code = parsed < 0 ? 0 : parsed != 0 ? parsed : run(rank, size, &arguments, method, own.shuffle);
    free(arguments.options);
    return code;
}

int main(int argc, char **argv)
{
    program_name = "moe-mpi";
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int code = 0;
    if (argc < 2 || strcmp(argv[1], "fit") != 0) {
        int help = argc >= 2 && strcmp(argv[1], "--help") == 0;
        if (rank == 0)
            fputs(usage, help ? stdout : stderr);
        code = help ? 0 : EXIT_USAGE;
    } else {
        code = command_fit_mpi(rank, size, argc, argv);
    }
    /* The same exit status on every rank. */
    code = agree(code);
    MPI_Finalize();
    return code;
}
