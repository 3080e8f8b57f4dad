#define _POSIX_C_SOURCE 200809L /* sigaction, isatty, fileno */

#include "cli.h"
#include "row_message.h"

#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char fit_help[] =
    "usage: moe fit DATA.csv|- --response NAME [options]\n"
    "\n"
    "Fit a mixture of experts to a CSV file (header row, one row per observation)\n"
    "and print a summary.\n"
    "\n"
    "  --response NAME        the response column (required)\n"
    "  --features A,B,...     the feature columns (default: every other column, or\n"
    "                         when --gate-features and --expert-features both name\n"
    "                         columns, those and the --offset column)\n"
    "  --family F             the experts' family: gaussian (default), or another\n"
    "                         that `moe families` lists; class labels of logistic\n"
    "                         and multinomial may be any text\n"
    "  --link L               the Gaussian experts' mean g(x'beta): identity\n"
    "                         (default), sigmoid or relu\n"
    "  -k, --experts K        number of experts (default 2)\n"
    "  --estimator E          em (default), gem, gd, cqt (the tensor method:\n"
    "                         Gaussian experts, K <= features, needs --no-intercept\n"
    "                         and centred features), ismm (streaming) or ot\n"
    "                         (sharded); `moe options` lists them, `moe options E`\n"
    "                         an estimator's options\n"
    "  --gate-features LIST   the features the gate sees (names, or 0-based positions\n"
    "                         among the features). Default: every feature but the\n"
    "                         --offset column, so the mixing weights depend on them,\n"
    "                         unlike R's flexmix(y ~ x); 'none': the intercept alone,\n"
    "                         constant mixing weights (flexmix's default model)\n"
    "  --expert-features LIST the features the experts see (the same form; 'none': a\n"
    "                         mixture of means, or of rates; default every feature but\n"
    "                         the --offset column). Coefficients of features a part\n"
    "                         does not see are held at 0 and show as '-'\n"
    "  --trials COLUMN        binomial experts: the column of each row's number of\n"
    "                         trials (the response counts the successes among them;\n"
    "                         read also from the data given to predict); without it\n"
    "                         one trial a row\n"
    "  --offset COLUMN        a column added to every expert's linear predictor with\n"
    "                         coefficient 1 (not multinomial experts): for Poisson\n"
    "                         experts of counts over an exposure t it must hold log(t)\n"
    "                         (read also from the data given to predict)\n"
    "  --no-intercept         experts and gate without intercept terms\n"
    "  --intervals            95% Wald intervals beside the standard errors\n"
    "  --batch-size B         stream DATA.csv (or '-', standard input) in batches of B\n"
    "                         rows through the estimator's partial fit (ismm unless\n"
    "                         --estimator names another): the file is never held\n"
    "                         whole; Gaussian experts\n"
    "  --checkpoint FILE      with streaming: save the session's state to FILE after every\n"
    "                         piece read, at the end and on Ctrl-C\n"
    "  --resume FILE          continue the session saved in FILE with DATA.csv's rows\n"
    "  --seed S, --n-init R, --max-iter N, --tol T\n"
    "                         the fitter options of the same names\n"
    "  --threads N            worker threads, for the fit and for reading DATA.csv\n"
    "                         (0: all cores; the result does not depend on it)\n"
    "  --option NAME=VALUE    any other fitter option (repeatable), e.g.\n"
    "                         --option gate_solver=newton --option gate_l2=1e-3\n"
    "  --sep C                field delimiter (default ','; 'tab' for tabs)\n"
    "  -o, --output FILE      save the fitted model\n"
    "  --json                 print the summary as JSON\n"
    "\n"
    "Exit status: 0 fitted (a fit that did not converge is a warning), 1 the fit\n"
    "failed or was interrupted, 2 usage or input error (also data the library\n"
    "refuses before fitting: \"input error: ...\").\n";

static const char select_help[] =
    "usage: moe select DATA.csv --response NAME -k FROM:TO [options]\n"
    "\n"
    "Fit a mixture for each number of experts in FROM:TO (each with its restarts)\n"
    "and print log-likelihood, AIC, BIC and ICL; the best by --criterion is\n"
    "marked with '*' and saved with -o.\n"
    "\n"
    "  -k, --experts FROM:TO  the numbers of experts (default 1:5)\n"
    "  --criterion C          bic (default), aic or icl (smaller is better)\n"
    "  -o, --output FILE      save the best model\n"
    "  --json                 the table as JSON\n"
    "  and the data and fitter options of moe fit (--features, --gate-features,\n"
    "  --expert-features, --offset, --trials, --family, --link, --no-intercept,\n"
    "  --estimator, --seed, --n-init, --max-iter, --tol, --threads, --option,\n"
    "  --sep).\n"
    "\n"
    "Exit status: 0 done (fits that fail are reported in the table), 1 no fit\n"
    "succeeded or the run was interrupted, 2 usage or input error.\n";

/* Ctrl-C asks the library to stop at the end of the current iteration. */
static volatile sig_atomic_t interrupted;

int fit_interrupted(void)
{
    return interrupted != 0;
}

static void on_interrupt(int signal_number)
{
    (void)signal_number;
    interrupted = 1;
}

static int on_progress(const moe_progress *progress, void *user_data)
{
    const fit_watch *state = user_data;
    if (state->show)
        fprintf(stderr, "\rrestart %zu/%zu  iteration %zu  log-likelihood %.6f   ",
                progress->restart + 1, progress->n_restarts, progress->iteration,
                progress->loglik);
    return interrupted != 0;
}

/* The handler Ctrl-C had before the fit (one fit runs at a time). */
static struct sigaction previous_action;

void fit_watch_begin(moe_fitter_t *fitter, fit_watch *watch)
{
    watch->show = isatty(fileno(stderr));
    moe_fitter_set_progress(fitter, on_progress, watch);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_action);
}

void fit_watch_end(fit_watch *watch)
{
    sigaction(SIGINT, &previous_action, NULL);
    if (watch->show)
        fputc('\n', stderr);
}

/* Options whose value is kept as text: where it goes, and which commands take it. */
enum { FOR_FIT = 1, FOR_SELECT = 2, FOR_BOTH = 3 };
typedef struct text_option {
    const char *name;
    size_t offset; /* of a const char * in fit_arguments */
    int commands;
} text_option;

#define TEXT_OPTION(name, field, commands) {name, offsetof(fit_arguments, field), commands}
static const text_option text_options[] = {
    TEXT_OPTION("--response", response, FOR_BOTH),
    TEXT_OPTION("--features", features, FOR_BOTH),
    TEXT_OPTION("--gate-features", gate_features, FOR_BOTH),
    TEXT_OPTION("--expert-features", expert_features, FOR_BOTH),
    TEXT_OPTION("--offset", offset, FOR_BOTH),
    TEXT_OPTION("--trials", trials, FOR_BOTH),
    TEXT_OPTION("--family", family, FOR_BOTH),
    TEXT_OPTION("--link", link, FOR_BOTH),
    TEXT_OPTION("--batch-size", batch_size, FOR_FIT),
    TEXT_OPTION("--checkpoint", checkpoint, FOR_FIT),
    TEXT_OPTION("--resume", resume, FOR_FIT),
    TEXT_OPTION("--seed", seed, FOR_BOTH),
    TEXT_OPTION("--n-init", n_init, FOR_BOTH),
    TEXT_OPTION("--max-iter", max_iter, FOR_BOTH),
    TEXT_OPTION("--tol", tol, FOR_BOTH),
    TEXT_OPTION("--threads", threads, FOR_BOTH),
    TEXT_OPTION("-o", output, FOR_BOTH),
    TEXT_OPTION("--output", output, FOR_BOTH),
};
#undef TEXT_OPTION

static const text_option *find_text_option(const char *arg, int select)
{
    for (size_t i = 0; i < sizeof text_options / sizeof text_options[0]; ++i)
        if (strcmp(arg, text_options[i].name) == 0 &&
            (text_options[i].commands & (select ? FOR_SELECT : FOR_FIT)) != 0)
            return &text_options[i];
    return NULL;
}

/* select's -k: a range "low:high" or one number. */
static int parse_expert_range(const char *arg, const char *value, fit_arguments *a)
{
    unsigned long low = 0, high = 0;
    char tail = 0;
    int fields = sscanf(value, "%lu:%lu%c", &low, &high, &tail);
    if (fields == 1 && sscanf(value, "%lu%c", &low, &tail) == 1)
        high = low;
    else if (fields != 2)
        return usage_error("%s: '%s' is not a range like 1:8", arg, value);
    if (low < 1 || high < low || high > 1000)
        return usage_error("%s: '%s' is not a range within 1:1000", arg, value);
    a->k_min = (size_t)low;
    a->k_max = (size_t)high;
    return 0;
}

/* The options with a value that is checked or counted here; 1 when arg is none of them. */
static int parse_valued_option(const char *arg, const char *value, fit_arguments *a, int select)
{
    int experts = strcmp(arg, "-k") == 0 || strcmp(arg, "--experts") == 0;
    if (select && experts)
        return parse_expert_range(arg, value, a);
    if (select && strcmp(arg, "--criterion") == 0) {
        if (strcmp(value, "aic") != 0 && strcmp(value, "bic") != 0 && strcmp(value, "icl") != 0)
            return usage_error("--criterion: '%s' is not aic, bic or icl", value);
        a->criterion = value;
    } else if (experts) {
        char *end = NULL;
        long k = strtol(value, &end, 10);
        if (end == value || *end != '\0' || k < 1 || k > 1000)
            return usage_error("%s: '%s' is not a number of experts (1 to 1000)", arg, value);
        a->experts = (size_t)k;
    } else if (strcmp(arg, "--estimator") == 0) {
        a->estimator_given = 1;
        a->estimator = value;
    } else if (strcmp(arg, "--option") == 0) {
        a->options[a->n_options++] = value;
    } else if (strcmp(arg, "--sep") == 0) {
        if ((a->delimiter = parse_delimiter(value)) == 0)
            return usage_error("--sep: '%s' is not a one-character delimiter", value);
    } else {
        return 1;
    }
    return 0;
}

static int takes_value(const char *arg, int select)
{
    static const char *const valued[] = {"-k", "--experts", "--estimator", "--option", "--sep"};
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; ++i)
        if (strcmp(arg, valued[i]) == 0)
            return 1;
    return select && strcmp(arg, "--criterion") == 0;
}

/* One argument at argv[*at]: 0 taken, -1 after --help, else an exit status. */
static int parse_fit_argument(int argc, char **argv, int *at, fit_arguments *a, int select)
{
    const char *arg = argv[*at];
    const text_option *text = find_text_option(arg, select);
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        fputs(select ? select_help : fit_help, stdout);
        return -1;
    } else if (text != NULL || takes_value(arg, select)) {
        const char *value = option_value(argc, argv, at);
        if (value == NULL)
            return EXIT_USAGE;
        if (text != NULL)
            *(const char **)((char *)a + text->offset) = value;
        else
            return parse_valued_option(arg, value, a, select);
    } else if (strcmp(arg, "--no-intercept") == 0) {
        a->no_intercept = 1;
    } else if (!select && strcmp(arg, "--intervals") == 0) {
        a->intervals = 1;
    } else if (strcmp(arg, "--json") == 0) {
        a->json = 1;
    } else if (arg[0] == '-' && arg[1] != '\0') {
        return usage_error("%s: unknown option %s (see moe %s --help)", select ? "select" : "fit",
                           arg, select ? "select" : "fit");
    } else if (a->data == NULL) {
        a->data = arg;
    } else {
        return usage_error("more than one data file ('%s', '%s')", a->data, arg);
    }
    return 0;
}

int parse_fit_arguments(int argc, char **argv, fit_arguments *a, int select)
{
    memset(a, 0, sizeof *a);
    a->experts = 2;
    a->k_min = 1;
    a->k_max = 5;
    a->criterion = "bic";
    a->family = "gaussian";
    a->link = "identity";
    a->estimator = "em";
    a->delimiter = ',';
    a->options = calloc((size_t)argc, sizeof(char *));
    if (a->options == NULL)
        return usage_error("out of memory");
    for (int at = 1; at < argc; ++at) {
        int code = parse_fit_argument(argc, argv, &at, a, select);
        if (code != 0)
            return code;
    }
    if (a->data == NULL)
        return usage_error("no data file (see moe %s --help)", select ? "select" : "fit");
    if (a->response == NULL)
        return usage_error("--response is required");
    return 0;
}

/* Set a fitter option from text; a usage error names it. */
static int set_option(moe_fitter_t *fitter, const char *name, const char *value)
{
    moe_status status = moe_fitter_set_option(fitter, name, value);
    if (status != MOE_OK)
        return usage_error("option %s=%s: %s", name, value, moe_fitter_last_error(fitter));
    return 0;
}

int fit_each_option(const fit_arguments *a, fit_option_visitor visit, void *context)
{
    const char *names[] = {"seed", "n_init", "max_iter", "tol", "threads"};
    const char *values[] = {a->seed, a->n_init, a->max_iter, a->tol, a->threads};
    int code = 0;
    for (size_t o = 0; o < 5; ++o)
        if (values[o] != NULL && (code = visit(context, names[o], values[o])) != 0)
            return code;
    for (size_t o = 0; o < a->n_options; ++o) {
        char name[128];
        const char *equals = strchr(a->options[o], '=');
        size_t length = equals == NULL ? 0 : (size_t)(equals - a->options[o]);
        if (length == 0 || length >= sizeof name)
            return usage_error("--option expects NAME=VALUE, got '%s'", a->options[o]);
        memcpy(name, a->options[o], length);
        name[length] = '\0';
        if ((code = visit(context, name, equals + 1)) != 0)
            return code;
    }
    return 0;
}

static int set_visited_option(void *fitter, const char *name, const char *value)
{
    return set_option(fitter, name, value);
}

int fit_set_options(moe_fitter_t *fitter, const fit_arguments *a)
{
    return fit_each_option(a, set_visited_option, fitter);
}

int fit_name_model(moe_model_t *model, const table *data, char **classes, size_t n_classes)
{
    for (size_t j = 0; j < data->d; ++j)
        if (moe_model_set_name(model, MOE_NAME_FEATURE, j, data->feature_names[j]) != MOE_OK)
            return -1;
    if (moe_model_set_name(model, MOE_NAME_RESPONSE, 0, data->response_name) != MOE_OK)
        return -1;
    for (size_t c = 0; c < n_classes; ++c)
        if (moe_model_set_name(model, MOE_NAME_CLASS, c, classes[c]) != MOE_OK)
            return -1;
    return 0;
}

/* list (room for its text, a comma and column) with column appended unless it names it
   already or column is a number (a position among the features, not a column to add). */
static void append_column(char *list, const char *column)
{
    size_t length = strlen(list);
    char *copy = malloc(length + 1);
    if (copy == NULL)
        return;
    memcpy(copy, list, length + 1);
    size_t count = 0;
    const char **names = split_names(copy, &count);
    int listed = names == NULL;
    for (size_t j = 0; !listed && j < count; ++j)
        listed = strcmp(names[j], column) == 0;
    free(names);
    free(copy);
    if (!listed && strspn(column, "0123456789") != strlen(column))
        snprintf(list + length, strlen(column) + 2, ",%s", column);
}

/* The columns to read with --features: its list, and the --offset and --trials columns
   after them when the list does not name them (neither is a covariate, but X must hold
   them). */
static char *feature_columns(const fit_arguments *a)
{
    size_t length = strlen(a->features);
    char *list = malloc(length + (a->offset != NULL ? strlen(a->offset) : 0) +
                        (a->trials != NULL ? strlen(a->trials) : 0) + 3);
    if (list == NULL)
        return NULL;
    memcpy(list, a->features, length + 1);
    if (a->offset != NULL)
        append_column(list, a->offset);
    if (a->trials != NULL)
        append_column(list, a->trials);
    return list;
}

/*
 * The threads to read the data with: the fitter's "threads" option (--threads, or the
 * last --option threads=N, as the fitter sees them), 0 meaning all cores, at most the
 * cores online. A value the fitter will refuse reads serially (the fitter's message
 * comes after).
 */
static int reading_threads(const fit_arguments *a)
{
    const char *value = a->threads;
    for (size_t o = 0; o < a->n_options; ++o)
        if (strncmp(a->options[o], "threads=", 8) == 0)
            value = a->options[o] + 8;
    if (value == NULL)
        return 1;
    char *end = NULL;
    long threads = strtol(value, &end, 10);
    if (end == value || *end != '\0' || threads < 0 || threads > 1024)
        return 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    return (int)(threads == 0 || threads > cores ? cores : threads);
}

int read_training_data(const fit_arguments *a, training_data *out)
{
    memset(out, 0, sizeof *out);
    char families[256];
    if (moe_family_from_name(a->family, &out->family) != MOE_OK)
        return usage_error("--family: '%s' is not %s (moe families describes them)", a->family,
                           family_list(families, sizeof families));
    if (moe_link_from_name(a->link, &out->link) != MOE_OK)
        return usage_error("--link: '%s' is not identity, sigmoid or relu", a->link);
    int classification = is_class_family(out->family);
    /* The other families have their own link (the class probabilities, Poisson's log). */
    if (out->family != MOE_FAMILY_GAUSSIAN && out->link != MOE_LINK_IDENTITY)
        return usage_error("--link %s: only Gaussian experts take a link (--family %s)",
                           a->link, a->family);
    /* Without --features, the columns the two parts name, when both are given: a column
       the model does not use (an identifier, a text column) is then not read. */
    char *feature_list = a->features != NULL ? feature_columns(a) : model_columns(a);
    if (a->features != NULL && feature_list == NULL)
        return usage_error("out of memory");
    size_t n_features = 0;
    const char **features = feature_list != NULL ? split_names(feature_list, &n_features) : NULL;
    if (a->features == NULL && feature_list != NULL && feature_list[0] == '\0')
        n_features = 0; /* both parts see none: no feature */
    table_request request = {a->response, classification, features, n_features, a->delimiter,
                             1, reading_threads(a), 0};
    char error[512];
    int read = table_read(a->data, &request, &out->data, error, sizeof error);
    free(features);
    free(feature_list);
    if (read != 0)
        return usage_error("%s", error);
    int code = resolve_model_inputs(a, &out->data, &out->inputs);
    if (code != 0 || !classification) {
        if (code != 0)
            free_training_data(out);
        return code;
    }
    table *data = &out->data;
    if ((data->y = malloc(data->n * sizeof(double))) == NULL ||
        (out->n_classes = encode_labels(data->labels, data->n, data->y, &out->classes)) == 0) {
        free_training_data(out);
        return usage_error("out of memory");
    }
    return 0;
}

int check_classes(const fit_arguments *a, const training_data *t)
{
    if (!is_class_family(t->family))
        return 0;
    if (t->n_classes < 2)
        return usage_error("%s: the response '%s' has a single class ('%s')", a->data,
                           a->response, t->classes[0]);
    if (t->family == MOE_FAMILY_LOGISTIC && t->n_classes != 2)
        return usage_error("%s: the logistic family needs two classes, '%s' has %zu (use "
                           "--family multinomial)",
                           a->data, a->response, t->n_classes);
    return 0;
}

int prepare_data(const fit_arguments *a, training_data *out)
{
    int code = read_training_data(a, out);
    if (code == 0 && (code = check_classes(a, out)) != 0)
        free_training_data(out);
    return code;
}

void free_training_data(training_data *t)
{
    free_model_inputs(&t->inputs);
    free_labels(t->classes, t->n_classes);
    t->classes = NULL;
    t->n_classes = 0;
    table_free(&t->data);
}

int fit_create_model(const fit_arguments *a, const training_data *t, size_t experts,
                     moe_model_t **model)
{
    *model = NULL;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = t->family;
    spec.link = t->link;
    spec.intercept = !a->no_intercept;
    spec.n_experts = experts;
    spec.n_features = t->data.d;
    spec.n_classes = t->family == MOE_FAMILY_MULTINOMIAL ? t->n_classes : 0;
    spec_set_inputs(&spec, &t->inputs);
    if (moe_model_create(model, &spec) != MOE_OK)
        return usage_error("cannot create the model: %s", moe_last_error());
    return 0;
}

void fit_warnings(const moe_fit_report *report, size_t experts)
{
    if (!report->converged)
        fprintf(stderr, "%s: warning: K = %zu: the fit did not converge in %zu iterations "
                        "(raise --max-iter or --tol)\n",
                program_name, experts, report->iterations);
    if (report->separation_events > 0)
        fprintf(stderr, "%s: warning: K = %zu: %zu M-steps fitted their data perfectly "
                        "(separation); the coefficients grew until a step limit: consider "
                        "--option expert_ridge=1e-3 or --option gate_l2=1e-3\n",
                program_name, experts, report->separation_events);
}

int fit_model(const fit_arguments *a, const training_data *t, size_t experts,
              moe_model_t **model_out, moe_fitter_t **fitter_out)
{
    *model_out = NULL;
    *fitter_out = NULL;
    const table *data = &t->data;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    int code = fit_create_model(a, t, experts, &model);
    if (code != 0)
        return code;
    if (moe_fitter_create(&fitter, a->estimator) != MOE_OK) {
        moe_model_free(model);
        return usage_error("--estimator: %s", moe_last_error());
    }
    *model_out = model;
    *fitter_out = fitter;
    if (fit_set_options(fitter, a) != 0)
        return EXIT_USAGE;
    fit_watch watch;
    fit_watch_begin(fitter, &watch);
    moe_status status = moe_fitter_fit(fitter, model, data->n, data->X, data->d, data->y, NULL);
    fit_watch_end(&watch);
    if (status == MOE_ERR_CANCELLED) {
        fprintf(stderr, "moe: fit interrupted; nothing saved\n");
        return EXIT_FIT_PROBLEM;
    }
    if (status != MOE_OK) {
        char buffer[1024];
        return fit_failure(status, "",
                           row_message(moe_fitter_last_error(fitter), a->data, data, 0, buffer,
                                       sizeof buffer));
    }
    if (fit_name_model(model, data, t->classes, t->n_classes) != 0)
        return usage_error("cannot name the model: %s", moe_model_last_error(model));
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    fit_warnings(&report, experts);
    return 0;
}

static int run_fit(const fit_arguments *a)
{
    training_data t;
    int code = prepare_data(a, &t);
    if (code != 0)
        return code;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    double *mean = NULL, *standard_errors = NULL;
    code = fit_model(a, &t, a->experts, &model, &fitter);
    if (code == 0) {
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        moe_fitter_get_report(fitter, &report);
        moe_criteria criteria = MOE_CRITERIA_INIT;
        const table *data = &t.data;
        /* Standard errors from the observed information at the fit, of the objective the fit
           maximised (the fitter's penalties: with gate_l2 or expert_ridge the likelihood's
           information alone can be singular where the penalised one is not), with the
           criteria and the mean gate from the same pass over the rows. */
        double gate_l2 = 0.0, expert_ridge = 0.0;
        if (moe_fitter_get_double(fitter, MOE_OPT_GATE_L2, &gate_l2) != MOE_OK ||
            moe_fitter_get_double(fitter, MOE_OPT_EXPERT_RIDGE, &expert_ridge) != MOE_OK)
            gate_l2 = expert_ridge = 0.0;
        size_t P = moe_model_n_free_params(model);
        double *covariance = P <= 4000 ? malloc(P * P * sizeof(double)) : NULL;
        mean = malloc(a->experts * sizeof(double));
        moe_status covariance_status = MOE_OK;
        int have_summary =
            mean != NULL &&
            moe_fitter_summarize(fitter, model, data->n, data->X, data->d, data->y, NULL,
                                 &criteria, mean, a->experts, covariance, P * P,
                                 &covariance_status) == MOE_OK;
        int have_criteria = have_summary, have_mean = have_summary;
        standard_errors = covariance != NULL ? malloc(P * sizeof(double)) : NULL;
        if (have_summary && covariance_status == MOE_OK && standard_errors != NULL) {
            for (size_t j = 0; j < P; ++j)
                standard_errors[j] = sqrt(covariance[j * P + j]);
        } else {
            fprintf(stderr, "moe: note: no standard errors: %s\n",
                    P > 4000 ? "more than 4000 free parameters" : moe_fitter_last_error(fitter));
            free(standard_errors);
            standard_errors = NULL;
        }
        free(covariance);
        long long n_init = 0;
        if (moe_fitter_get_int(fitter, MOE_OPT_N_INIT, &n_init) != MOE_OK || n_init < 0)
            n_init = 0; /* an estimator without restarts: not said */
        fit_summary summary = {have_criteria ? &criteria : NULL, have_mean ? mean : NULL,
                               &report, moe_fitter_estimator_name(fitter), data->n,
                               standard_errors, a->intervals, gate_l2, expert_ridge,
                               (size_t)n_init, NULL};
        if (a->json)
            print_summary_json(stdout, model, &summary);
        else
            print_summary(stdout, model, &summary);
        if (a->output != NULL && moe_model_save(model, a->output) != MOE_OK) {
            fprintf(stderr, "moe: cannot save the model: %s\n", moe_last_error());
            code = EXIT_FIT_PROBLEM;
        }
    }
    free(mean);
    free(standard_errors);
    moe_fitter_free(fitter);
    moe_model_free(model);
    free_training_data(&t);
    return code;
}

int command_fit(int argc, char **argv)
{
    fit_arguments arguments;
    int parsed = parse_fit_arguments(argc, argv, &arguments, 0);
    int streaming = arguments.batch_size != NULL || arguments.checkpoint != NULL ||
                    arguments.resume != NULL;
    /* The streaming estimator's surrogate has no offset. */
    int code = parsed < 0    ? 0
               : parsed != 0 ? parsed
               : streaming && arguments.offset != NULL
                   ? usage_error("--offset does not stream (--batch-size, --checkpoint, "
                                 "--resume): ismm's surrogate takes no offset")
               : streaming ? run_stream_fit(&arguments)
                           : run_fit(&arguments);
    free(arguments.options);
    return code;
}
