/*
 * moe-mpi: the moe tool's fit across the ranks of an MPI job (libmoe_mpi).
 *
 *   mpirun -np 4 moe-mpi fit 'part%d.csv' --response y -k 3 -o model.moe
 *   mpirun -np 4 moe-mpi fit data.csv --response y -k 3 -o model.moe
 *
 * With a printf-style %d (or %02d, ...) in the path every rank reads its own file (the rank
 * number formatted in); otherwise every rank reads the one file and keeps its block of rows.
 * Every rank fits its rows with em, the root reduces them by optimal transport, and every
 * rank holds the result; rank 0 alone prints the summary (the log-likelihood, criteria and
 * standard errors over every rank's rows) and writes the model. Takes moe fit's options
 * but those the sharded fit cannot honour (refused by name), and --shuffle; the ot
 * fitter's own options go through --option. `moe-mpi fit --help` lists them.
 * Exit status as moe fit's, the same on every rank.
 */
#include "../cli.h"

#include <moe/mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: mpirun -np N moe-mpi fit DATA.csv|'DATA%d.csv' --response NAME [options]\n"
    "\n"
    "Fit across the ranks of an MPI job: each rank fits its rows (its own file when the\n"
    "path holds %d, else its block of the one file), the root reduces the local models by\n"
    "optimal transport (the ot estimator), and rank 0 prints the summary and writes -o.\n"
    "Gaussian experts only. Exit status: 0 fitted, 1 the fit failed, 2 usage or input error\n"
    "(on every rank). `moe-mpi fit --help` lists the options.\n"
    "\n"
    "  --shuffle   redistribute the rows at random across the ranks first (from --seed;\n"
    "              the same seed and number of ranks give the same fit): for rows that are\n"
    "              not in random order, e.g. sorted by a column. Without it, moe-mpi warns\n"
    "              when the result explains some rank's rows much worse than that rank's\n"
    "              own fit does (the ranks' rows are then not samples of one distribution).\n";

/* moe-mpi fit --help: the options it acts on, and those of moe fit it refuses. */
static const char fit_usage[] =
    "usage: mpirun -np N moe-mpi fit DATA.csv|'DATA%d.csv' --response NAME [options]\n"
    "\n"
    "Fit Gaussian experts across the ranks of an MPI job: each rank fits its rows with em\n"
    "(its own file when the path holds %d, else its block of the one file), the root\n"
    "reduces the local models by optimal transport (the ot estimator), and rank 0 prints\n"
    "the summary and writes -o.\n"
    "\n"
    "  --response NAME        the response column (required)\n"
    "  --features A,B,...     the feature columns (default: see moe fit --help)\n"
    "  --gate-features LIST, --expert-features LIST, --offset COLUMN\n"
    "                         the inputs of the gate and of the experts, as moe fit's\n"
    "  -k, --experts K        number of experts (default 2)\n"
    "  --no-intercept         experts and gate without intercept terms\n"
    "  --intervals            95% Wald intervals beside the standard errors\n"
    "  --seed S, --n-init R, --max-iter N, --tol T, --threads N\n"
    "                         the ot fitter's options of the same names\n"
    "  --option NAME=VALUE    any other ot option (repeatable; `moe options ot`)\n"
    "  --shuffle              redistribute the rows at random across the ranks first\n"
    "                         (from --seed; the same seed and number of ranks give the\n"
    "                         same fit): for rows not in random order, e.g. sorted by a\n"
    "                         column. Without it, moe-mpi warns when the result explains\n"
    "                         some rank's rows much worse than that rank's own fit does\n"
    "  --sep C                field delimiter (default ','; 'tab' for tabs)\n"
    "  -o, --output FILE      save the fitted model (rank 0)\n"
    "  --json                 print the summary as JSON\n"
    "\n"
    "moe fit's --estimator (other than ot), --family (other than gaussian), --link (other\n"
    "than identity), --batch-size, --checkpoint and --resume are refused: the sharded fit\n"
    "does not do them.\n"
    "\n"
    "Exit status (the same on every rank): 0 fitted, 1 the fit failed, 2 usage or input\n"
    "error.\n";

enum { PATH_SIZE = 4096 };

/* moe fit's options that the sharded fit cannot honour: refused by name rather than
   ignored, since a user who asks for them would otherwise believe they took effect. */
static int refuse_unsupported(const fit_arguments *a)
{
    if (a->estimator_given && strcmp(a->estimator, "ot") != 0)
        return usage_error("fit: --estimator %s: moe-mpi always fits with ot (each rank's "
                           "em, reduced by optimal transport)",
                           a->estimator);
    if (strcmp(a->link, "identity") != 0)
        return usage_error("fit: --link %s: the transport reduction is derived for the "
                           "identity link only",
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

/* The fit's measures over every rank's rows (collective), then rank 0's summary, warning
   and model file. */
static int summarize(int rank, const fit_arguments *a, moe_model_t *model, moe_fitter_t *fitter,
                     const table *data, const rank_rows *rows)
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
                    "rows (--shuffle) or the files\n",
                    measures.worst_rank, measures.worst_gap, measures.allowance);
        fit_name_model(model, data, NULL, 0);
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        moe_fitter_get_report(fitter, &report);
        report.seconds = measures.seconds;
        size_t rows = have_criteria ? (size_t)criteria.n_obs : data->n;
        fit_summary summary = {have_criteria ? &criteria : NULL, NULL, &report, "ot (MPI)",
                               rows, errors, a->intervals, gate_l2, expert_ridge, 0, NULL};
        if (a->json)
            print_summary_json(stdout, model, &summary);
        else {
            print_summary(stdout, model, &summary);
            printf("ranks: %d; the result on a rank's rows against that rank's own fit: at "
                   "most %.4g nats per row worse (rank %d)\n",
                   measures.ranks, measures.worst_gap, measures.worst_rank);
        }
        if (a->output != NULL && moe_model_save(model, a->output) != MOE_OK) {
            fprintf(stderr, "moe-mpi: cannot save the model: %s\n", moe_last_error());
            code = EXIT_FIT_PROBLEM;
        }
    }
    free(errors);
    return code;
}

static int run(int rank, int size, const fit_arguments *a, int shuffle)
{
    /* Every rank enters the collective whatever happened before it: a rank whose data or
       options failed enters with no fitter, and every rank then returns the failure. */
    char path[PATH_SIZE];
    int code = 0, pattern = rank_path(a->data, rank, path, sizeof path);
    if (pattern == -1)
        code = usage_error("%s: a pattern takes one %%d conversion", a->data);
    else if (pattern == -2)
        code = usage_error("the path of rank %d from the pattern (%zu bytes) is longer than "
                           "%d bytes",
                           rank, strlen(a->data), PATH_SIZE - 1);
    if (code == 0 && strcmp(a->family, "gaussian") != 0)
        code = usage_error("only Gaussian experts (--family gaussian)");
    fit_arguments local = *a;
    local.data = pattern > 0 ? path : a->data;
    training_data t;
    memset(&t, 0, sizeof t);
    if (code == 0)
        code = prepare_data(&local, &t);
    table *data = &t.data;
    size_t first = 0, count = data->n;
    if (code == 0 && !pattern) {
        first = (size_t)rank * data->n / (size_t)size;
        count = (size_t)(rank + 1) * data->n / (size_t)size - first;
    }
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    if (code == 0) {
        moe_model_spec spec = MOE_MODEL_SPEC_INIT;
        spec.n_experts = a->experts;
        spec.n_features = data->d;
        spec.intercept = !a->no_intercept;
        spec_set_inputs(&spec, &t.inputs);
        if (moe_model_create(&model, &spec) != MOE_OK)
            code = usage_error("cannot create the model: %s", moe_last_error());
    }
    if (code == 0 && moe_fitter_create(&fitter, "ot") != MOE_OK)
        code = usage_error("%s", moe_last_error());
    if (code == 0)
        code = fit_set_options(fitter, a);
    int ready = code == 0;
    rank_rows rows = {ready ? count : 0, ready ? data->d : 0,
                      ready ? data->X + first * data->d : NULL, ready ? data->y + first : NULL,
                      NULL, NULL};
    int shuffled = shuffle ? shuffle_rows(rank, ready ? fitter : NULL, &rows) : 0;
    if (shuffled != 0) /* on every rank: none enters the fit */
        code = code != 0 ? code : shuffled;
    moe_status status = MOE_OK;
    if (shuffled == 0)
        status = moe_mpi_fit(MPI_COMM_WORLD, 0, ready ? fitter : NULL, model, rows.n, rows.X,
                             rows.d, rows.y, NULL, 0);
    if (ready && status != MOE_OK) {
        char context[32];
        snprintf(context, sizeof context, "rank %d: ", rank);
        code = fit_failure(status, context, moe_mpi_last_error());
    }
    if (code == 0)
        code = summarize(rank, a, model, fitter, data, &rows);
    free(rows.owned_X);
    free(rows.owned_y);
    moe_model_free(model);
    moe_fitter_free(fitter);
    free_training_data(&t);
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
    } else {
        /* --shuffle is moe-mpi's own: taken out before moe fit's options are read. */
        int shuffle = 0, kept = 1;
        for (int i = 1; i < argc; ++i) {
            if (strcmp(argv[i], "--shuffle") == 0)
                shuffle = 1;
            else
                argv[kept++] = argv[i];
        }
        argc = kept;
        if (asks_for_help(argc - 1, argv + 1)) {
            if (rank == 0)
                fputs(fit_usage, stdout);
        } else {
            fit_arguments arguments;
            int parsed = parse_fit_arguments(argc - 1, argv + 1, &arguments, 0);
            if (parsed == 0)
                parsed = refuse_unsupported(&arguments);
            code = parsed < 0 ? 0 : parsed != 0 ? parsed : run(rank, size, &arguments, shuffle);
            free(arguments.options);
        }
    }
    /* The same exit status on every rank. */
    int worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
