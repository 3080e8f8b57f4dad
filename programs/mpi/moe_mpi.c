/*
 * moe-mpi: the moe tool's fit across the ranks of an MPI job (libmoe_mpi).
 *
 *   mpirun -np 4 moe-mpi fit 'part%d.csv' --response y -k 3 -o model.moe
 *   mpirun -np 4 moe-mpi fit data.csv --response y -k 3 -o model.moe
 *
 * With a printf-style %d (or %02d, ...) in the path every rank reads its own file (the rank
 * number formatted in); otherwise every rank reads the one file and keeps its block of rows.
 * By default (--method em) the ranks fit by exact em: every rank runs em on its rows with
 * the sums of each pass added over the ranks (moe_mpi_fit with an "em" fitter), which gives
 * one process's fit of all the rows however they are split. --method ot is the one-shot
 * reduction: every rank fits its rows alone and the root reduces the local models by
 * optimal transport. Every rank holds the result; rank 0 alone prints the summary (the
 * log-likelihood, criteria and standard errors over every rank's rows) and writes the
 * model. Takes moe fit's options but those a distributed fit cannot honour (refused by
 * name), --method and --shuffle; an estimator's own options go through --option.
 * `moe-mpi fit --help` lists them. Exit status as moe fit's, the same on every rank.
 */
#define _POSIX_C_SOURCE 200809L
#include "../cli.h"
#include "../row_message.h"

#include <moe/mpi.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: mpirun -np N moe-mpi fit DATA.csv|'DATA%d.csv' --response NAME [options]\n"
    "\n"
    "Fit across the ranks of an MPI job, each rank on its rows (its own file when the path\n"
    "holds %d, else its block of the one file); rank 0 prints the summary and writes -o.\n"
    "Exit status: 0 fitted, 1 the fit failed, 2 usage or input error (on every rank).\n"
    "`moe-mpi fit --help` lists the options.\n"
    "\n"
    "  --method em   (the default) exact em: the one-process fit of all the rows, however\n"
    "                they are split; every family moe fit takes\n"
    "  --method ot   the one-shot reduction of local fits by optimal transport: one\n"
    "                exchange, for a dear network; Gaussian experts, rows in random order\n"
    "  --shuffle     redistribute the rows at random across the ranks first (ot needs it\n"
    "                for rows sorted by a column; em does not)\n";

/* moe-mpi fit --help: the options it acts on, and those of moe fit it refuses. */
static const char fit_usage[] =
    "usage: mpirun -np N moe-mpi fit DATA.csv|'DATA%d.csv' --response NAME [options]\n"
    "\n"
    "Fit across the ranks of an MPI job, each rank on its rows (its own file when the\n"
    "path holds %d, else its block of the one file); rank 0 prints the summary and writes\n"
    "-o.\n"
    "\n"
    "  --method em            (the default) exact em: every rank runs em on its rows and\n"
    "                         the sums of each pass are added over the ranks, so the fit is\n"
    "                         one process's fit of all the rows however they are split\n"
    "  --method ot            the one-shot reduction: every rank fits its rows alone, the\n"
    "                         root reduces the local models by optimal transport (one\n"
    "                         exchange instead of one a pass; Gaussian experts, identity\n"
    "                         link, rows in random order)\n"
    "  --family F, --link L   as moe fit's (em; ot: gaussian and identity only)\n"
    "  --response NAME        the response column (required)\n"
    "  --features A,B,...     the feature columns (default: see moe fit --help)\n"
    "  --gate-features LIST, --expert-features LIST, --offset COLUMN\n"
    "                         the inputs of the gate and of the experts, as moe fit's\n"
    "  -k, --experts K        number of experts (default 2)\n"
    "  --no-intercept         experts and gate without intercept terms\n"
    "  --intervals            95% Wald intervals beside the standard errors\n"
    "  --seed S, --n-init R, --max-iter N, --tol T, --threads N\n"
    "                         the fitter's options of the same names\n"
    "  --option NAME=VALUE    any other option of the method's estimator (repeatable;\n"
    "                         `moe options em`, `moe options ot`)\n"
    "  --shuffle              redistribute the rows at random across the ranks first\n"
    "                         (from --seed; the same seed and number of ranks give the\n"
    "                         same fit): for ot on rows not in random order, e.g. sorted\n"
    "                         by a column. Without it, ot warns when the result explains\n"
    "                         some rank's rows much worse than that rank's own fit does\n"
    "  --sep C                field delimiter (default ','; 'tab' for tabs)\n"
    "  -o, --output FILE      save the fitted model (rank 0)\n"
    "  --json                 print the summary as JSON\n"
    "\n"
    "moe fit's --estimator (other than em and ot, which --method names), --batch-size,\n"
    "--checkpoint and --resume are refused: a distributed fit does not do them.\n"
    "\n"
    "Exit status (the same on every rank): 0 fitted, 1 the fit failed, 2 usage or input\n"
    "error.\n";

enum { PATH_SIZE = 4096 };

/* moe-mpi's own arguments, taken out before moe fit's are read. */
typedef struct mpi_arguments {
    int shuffle;
    const char *method; /* "em" or "ot"; NULL: not given */
} mpi_arguments;

/* moe fit's options that a distributed fit cannot honour: refused by name rather than
   ignored, since a user who asks for them would otherwise believe they took effect.
   --estimator em or ot names the method as --method does. */
static int refuse_unsupported(const fit_arguments *a, mpi_arguments *m)
{
    if (a->estimator_given && strcmp(a->estimator, "em") != 0 && strcmp(a->estimator, "ot") != 0)
        return usage_error("fit: --estimator %s: moe-mpi fits by exact em (--method em) or "
                           "by the one-shot reduction of local fits (--method ot)",
                           a->estimator);
    if (a->estimator_given && m->method != NULL && strcmp(a->estimator, m->method) != 0)
        return usage_error("fit: --estimator %s and --method %s: name one method",
                           a->estimator, m->method);
    if (m->method == NULL)
        m->method = a->estimator_given ? a->estimator : "em";
    if (strcmp(m->method, "ot") == 0 && strcmp(a->family, "gaussian") != 0)
        return usage_error("fit: --family %s: the transport reduction (--method ot) is "
                           "derived for Gaussian experts; --method em fits every family",
                           a->family);
    if (strcmp(m->method, "ot") == 0 && strcmp(a->link, "identity") != 0)
        return usage_error("fit: --link %s: the transport reduction (--method ot) is derived "
                           "for the identity link only; --method em fits every link",
                           a->link);
    const char *names[] = {"--batch-size", "--checkpoint", "--resume"};
    const char *values[] = {a->batch_size, a->checkpoint, a->resume};
    for (size_t o = 0; o < 3; ++o)
        if (values[o] != NULL)
            return usage_error("fit: %s: moe-mpi does not stream (use moe fit for a "
                               "streaming fit)",
                               names[o]);
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

/* The rows a rank fits: its block or file, or what moe_mpi_shuffle gave it (owned). */
typedef struct rank_rows {
    size_t n, d;
    const double *X, *y;
    double *owned_X, *owned_y;
} rank_rows;

/* --shuffle: every rank's rows redistributed at random (the fitter's seed), collective.
   Returns 0, or an exit code after a message (every rank fails alike). */
static int shuffle_rows(int rank, const moe_fitter_t *fitter, rank_rows *rows)
{
    double seed = 0.0;
    if (fitter != NULL)
        moe_fitter_get_double(fitter, MOE_OPT_SEED, &seed);
    size_t received = 0;
    moe_status status = moe_mpi_shuffle(MPI_COMM_WORLD, (uint64_t)seed, rows->n, rows->d,
                                        rows->X, rows->d, rows->y, NULL, 0, NULL, NULL, NULL,
                                        &received);
    if (status == MOE_OK) {
        rows->owned_X = malloc((received > 0 ? received : 1) * (rows->d + 1) * sizeof(double));
        rows->owned_y = malloc((received > 0 ? received : 1) * sizeof(double));
        /* A rank without room asks for the size again: every rank then fails alike. */
        int room = rows->owned_X != NULL && rows->owned_y != NULL;
        status = moe_mpi_shuffle(MPI_COMM_WORLD, (uint64_t)seed, rows->n, rows->d, rows->X,
                                 rows->d, rows->y, NULL, room ? received : 0,
                                 room ? rows->owned_X : NULL, room ? rows->owned_y : NULL, NULL,
                                 &received);
    }
    if (status != MOE_OK) {
        if (fitter != NULL) /* a rank without one has said why */
            fprintf(stderr, "moe-mpi: rank %d: cannot shuffle the rows: %s\n", rank,
                    moe_mpi_last_error());
        return status == MOE_ERR_OUT_OF_MEMORY ? EXIT_FIT_PROBLEM : EXIT_USAGE;
    }
    rows->n = received;
    rows->X = rows->owned_X;
    rows->y = rows->owned_y;
    return 0;
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
    moe_status status = moe_mpi_vcov(MPI_COMM_WORLD, model, rows->n, rows->X, rows->d, rows->y,
                                     NULL, *gate_l2, *expert_ridge, room ? covariance : NULL,
                                     P * P);
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

/* The JSON summary with the distributed fit's own object before its closing brace. */
static void print_json(const moe_model_t *model, const fit_summary *summary,
                       const moe_mpi_report *measures)
{
    char *text = NULL;
    size_t length = 0;
    FILE *memory = open_memstream(&text, &length);
    if (memory == NULL) {
        print_summary_json(stdout, model, summary);
        return;
    }
    print_summary_json(memory, model, summary);
    fclose(memory);
    size_t end = length;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '}'))
        if (text[--end] == '}')
            break;
    fwrite(text, 1, end, stdout);
    int exact = measures->method == MOE_MPI_METHOD_EM;
    printf(", \"mpi\": {\"method\": \"%s\", \"ranks\": %d", exact ? "em" : "ot",
           measures->ranks);
    if (exact)
        printf(", \"iterations\": %zu, \"passes\": %zu, \"bytes\": %.0f, \"bytes_per_pass\": %.0f",
               measures->iterations, measures->passes, measures->bytes,
               measures->passes > 0 ? measures->bytes / (double)measures->passes : 0.0);
    else
        printf(", \"worst_gap\": %.6g, \"worst_rank\": %d, \"shards_differ\": %s",
               measures->worst_gap, measures->worst_rank,
               measures->shards_differ ? "true" : "false");
    fputs("}}\n", stdout);
    free(text);
}

/* Rank 0's lines after the summary: what the ranks did. */
static void print_ranks(const moe_mpi_report *measures)
{
    if (measures->method == MOE_MPI_METHOD_EM)
        printf("ranks: %d; exact em: %zu iteration%s, %zu passes whose sums travelled, %.0f "
               "bytes a pass at the busiest rank\n",
               measures->ranks, measures->iterations, measures->iterations == 1 ? "" : "s",
               measures->passes,
               measures->passes > 0 ? measures->bytes / (double)measures->passes : 0.0);
    else
        printf("ranks: %d; the result on a rank's rows against that rank's own fit: at "
               "most %.4g nats per row worse (rank %d)\n",
               measures->ranks, measures->worst_gap, measures->worst_rank);
}

/* The fit's measures over every rank's rows (collective), then rank 0's summary, warning
   and model file. */
static int summarize(int rank, const fit_arguments *a, moe_model_t *model, moe_fitter_t *fitter,
                     const training_data *t, const rank_rows *rows)
{
    moe_mpi_report measures = MOE_MPI_REPORT_INIT;
    moe_mpi_get_report(&measures);
    moe_criteria criteria = MOE_CRITERIA_INIT;
    int have_criteria = moe_mpi_criteria(MPI_COMM_WORLD, model, rows->n, rows->X, rows->d,
                                         rows->y, NULL, &criteria) == MOE_OK;
    double gate_l2 = 0.0, expert_ridge = 0.0;
    double *errors = standard_errors_of(rank, model, fitter, rows, &gate_l2, &expert_ridge);
    int code = 0;
    if (rank == 0) {
        if (measures.shards_differ)
            fprintf(stderr,
                    "moe-mpi: warning: the reduced model explains rank %d's rows %.3g nats "
                    "per row worse than that rank's own fit (allowed: %.3g): the ranks' "
                    "rows look like samples of different distributions (a file sorted by a "
                    "column, split in blocks?), and the result is unreliable: shuffle the "
                    "rows (--shuffle) or the files, or fit by exact em (--method em)\n",
                    measures.worst_rank, measures.worst_gap, measures.allowance);
        fit_name_model(model, &t->data, t->classes, t->n_classes);
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        moe_fitter_get_report(fitter, &report);
        report.seconds = measures.seconds;
        size_t rows_fitted = have_criteria ? (size_t)criteria.n_obs : t->data.n;
        int exact = measures.method == MOE_MPI_METHOD_EM;
        fit_summary summary = {have_criteria ? &criteria : NULL, NULL, &report,
                               exact ? "em (MPI, exact)" : "ot (MPI)", rows_fitted, errors,
                               a->intervals, gate_l2, expert_ridge, 0};
        if (a->json)
            print_json(model, &summary, &measures);
        else {
            print_summary(stdout, model, &summary);
            print_ranks(&measures);
        }
        if (a->output != NULL && moe_model_save(model, a->output) != MOE_OK) {
            fprintf(stderr, "moe-mpi: cannot save the model: %s\n", moe_last_error());
            code = EXIT_FIT_PROBLEM;
        }
    }
    free(errors);
    return code;
}

/* "row N..." of a message that counts rows among every rank's, as row N - offset of the
   rank that holds it: the number of that rank, or -1 when the message names no row. */
static int owner_of_row(const char *message, const unsigned long long *offsets, int size,
                        char *local, size_t capacity)
{
    unsigned long long row = 0;
    int used = 0;
    if (sscanf(message, "row %llu%n", &row, &used) != 1)
        return -1;
    int owner = 0;
    while (owner + 1 < size && offsets[owner + 1] <= row)
        ++owner;
    snprintf(local, capacity, "row %llu%s", row - offsets[owner], message + used);
    return owner;
}

/* An exact em's failure, the same on every rank, in the input's terms: the file and line of
   the row it names (the rank that read it translates), printed once; the exit code. */
static int exact_failure(int rank, int size, moe_status status, const char *path,
                         const table *data, size_t first, int pattern)
{
    char message[1024], local[1024], text[1024];
    snprintf(message, sizeof message, "%s", moe_mpi_last_error());
    unsigned long long mine = pattern ? data->n : first, *offsets = calloc((size_t)size, sizeof *offsets);
    if (offsets != NULL)
        MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, offsets, 1, MPI_UNSIGNED_LONG_LONG,
                      MPI_COMM_WORLD);
    int owner = -1;
    if (offsets != NULL && pattern) { /* each rank's file: its rows follow the ranks before */
        unsigned long long at = 0;
        for (int r = 0; r < size; ++r) {
            unsigned long long rows = offsets[r];
            offsets[r] = at;
            at += rows;
        }
        owner = owner_of_row(message, offsets, size, local, sizeof local);
    }
    char translated[1024];
    if (owner < 0)
        snprintf(text, sizeof text, "%s",
                 row_message(message, path, data, 0, translated, sizeof translated));
    else if (rank == owner)
        snprintf(text, sizeof text, "%s",
                 row_message(local, path, data, 0, translated, sizeof translated));
    if (owner >= 0)
        MPI_Bcast(text, (int)sizeof text, MPI_CHAR, owner, MPI_COMM_WORLD);
    free(offsets);
    /* Every rank has the message; rank 0 says it, and every rank exits with its code. */
    int code = rank == 0 ? fit_failure(status, "", text) : 0;
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return code;
}

/* Classes of a classification fit: the same labels in the same order on every rank (each
   rank's file encodes its own), else a usage error on every rank. */
static int agree_on_classes(const training_data *t)
{
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t c = 0; c < t->n_classes; ++c)
        for (const char *at = t->classes[c]; ; ++at) {
            hash = (hash ^ (unsigned char)*at) * 0x100000001b3ULL;
            if (*at == '\0')
                break;
        }
    uint64_t both[2] = {hash, ~hash}, most[2];
    MPI_Allreduce(both, most, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (most[0] == ~most[1])
        return 0;
    return usage_error("the ranks' files hold other class labels (the response's distinct "
                       "values must be the same in every file)");
}

/* The model for the arguments' family, link, classes and inputs; 0 or an exit code. */
static int model_for(const fit_arguments *a, const training_data *t, moe_model_t **model)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = t->family;
    spec.link = t->link;
    spec.n_experts = a->experts;
    spec.n_features = t->data.d;
    spec.intercept = !a->no_intercept;
    spec.n_classes = t->family == MOE_FAMILY_MULTINOMIAL ? t->n_classes : 0;
    spec_set_inputs(&spec, &t->inputs);
    if (moe_model_create(model, &spec) != MOE_OK)
        return usage_error("cannot create the model: %s", moe_last_error());
    return 0;
}

/* This rank's path (its own file for a pattern, else the one file); 0 or an exit code. */
static int path_of_rank(const fit_arguments *a, int rank, char *path, int *pattern)
{
    *pattern = rank_path(a->data, rank, path, PATH_SIZE);
    if (*pattern == -1)
        return usage_error("%s: a pattern takes one %%d conversion", a->data);
    if (*pattern == -2)
        return usage_error("the path of rank %d from the pattern (%zu bytes) is longer than "
                           "%d bytes",
                           rank, strlen(a->data), PATH_SIZE - 1);
    if (!*pattern)
        snprintf(path, PATH_SIZE, "%s", a->data);
    return 0;
}

static int run(int rank, int size, const fit_arguments *a, const mpi_arguments *m)
{
    /* Every rank enters the collective whatever happened before it: a rank whose data or
       options failed enters with no fitter, and every rank then returns the failure. */
    char path[PATH_SIZE];
    int pattern = 0, code = path_of_rank(a, rank, path, &pattern);
    fit_arguments local = *a;
    local.data = path;
    training_data t;
    memset(&t, 0, sizeof t);
    if (code == 0)
        code = prepare_data(&local, &t);
    if (is_class_family(t.family) && pattern) { /* collective: every rank reaches it */
        int agreed = code == 0 ? agree_on_classes(&t) : 0;
        code = code != 0 ? code : agreed;
    }
    table *data = &t.data;
    size_t first = 0, count = data->n;
    if (code == 0 && !pattern) {
        first = (size_t)rank * data->n / (size_t)size;
        count = (size_t)(rank + 1) * data->n / (size_t)size - first;
    }
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    if (code == 0)
        code = model_for(a, &t, &model);
    if (code == 0 && moe_fitter_create(&fitter, m->method) != MOE_OK)
        code = usage_error("%s", moe_last_error());
    if (code == 0)
        code = fit_set_options(fitter, a);
    int ready = code == 0;
    rank_rows rows = {ready ? count : 0, ready ? data->d : 0,
                      ready ? data->X + first * data->d : NULL, ready ? data->y + first : NULL,
                      NULL, NULL};
    int shuffled = m->shuffle ? shuffle_rows(rank, ready ? fitter : NULL, &rows) : 0;
    if (shuffled != 0) /* on every rank: none enters the fit */
        code = code != 0 ? code : shuffled;
    moe_status status = MOE_OK;
    if (shuffled == 0)
        status = moe_mpi_fit(MPI_COMM_WORLD, 0, ready ? fitter : NULL, model, rows.n, rows.X,
                             rows.d, rows.y, NULL, 0);
    /* When every rank came to the fit ready, an exact em's failure is every rank's, said
       once, its row counted among all rows (a rank that failed before has said why). */
    int all_ready = ready;
    if (shuffled == 0)
        MPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (status != MOE_OK && all_ready && strcmp(m->method, "em") == 0 && !m->shuffle)
        code = exact_failure(rank, size, status, path, data, first, pattern);
    else if (ready && status != MOE_OK) {
        char context[32];
        snprintf(context, sizeof context, "rank %d: ", rank);
        code = fit_failure(status, context, moe_mpi_last_error());
    }
    if (code == 0)
        code = summarize(rank, a, model, fitter, &t, &rows);
    free(rows.owned_X);
    free(rows.owned_y);
    moe_model_free(model);
    moe_fitter_free(fitter);
    free_training_data(&t);
    return code;
}

/* --shuffle and --method, moe-mpi's own, taken out of argv before moe fit's options are
   read; 0 or an exit code. */
static int take_mpi_arguments(int *argc, char **argv, mpi_arguments *m)
{
    int kept = 1;
    for (int i = 1; i < *argc; ++i) {
        if (strcmp(argv[i], "--shuffle") == 0)
            m->shuffle = 1;
        else if (strcmp(argv[i], "--method") == 0 && i + 1 < *argc)
            m->method = argv[++i];
        else if (strcmp(argv[i], "--method") == 0)
            return usage_error("fit: --method needs a value (em or ot)");
        else
            argv[kept++] = argv[i];
    }
    *argc = kept;
    if (m->method != NULL && strcmp(m->method, "em") != 0 && strcmp(m->method, "ot") != 0)
        return usage_error("fit: --method %s: the methods are em (exact, the default) and ot "
                           "(the one-shot reduction)",
                           m->method);
    return 0;
}

static int fit_command(int rank, int size, int argc, char **argv)
{
    mpi_arguments m = {0, NULL};
    int code = take_mpi_arguments(&argc, argv, &m);
    if (code != 0)
        return code;
    if (asks_for_help(argc - 1, argv + 1)) {
        if (rank == 0)
            fputs(fit_usage, stdout);
        return 0;
    }
    fit_arguments arguments;
    int parsed = parse_fit_arguments(argc - 1, argv + 1, &arguments, 0);
    if (parsed == 0)
        parsed = refuse_unsupported(&arguments, &m);
    code = parsed < 0 ? 0 : parsed != 0 ? parsed : run(rank, size, &arguments, &m);
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
        if (rank == 0)
            fputs(usage, argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
        code = argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : EXIT_USAGE;
    } else
        code = fit_command(rank, size, argc, argv);
    /* The same exit status on every rank. */
    int worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
