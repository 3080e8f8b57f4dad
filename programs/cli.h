/*
 * The moe command-line tool: what its commands share. The tool uses only the
 * public API (include/moe/), as any other program would.
 */
#ifndef MOE_PROGRAMS_CLI_H
#define MOE_PROGRAMS_CLI_H

#include <moe/moe.h>

#include <stddef.h>
#include <stdio.h>

#include "table.h"

/* Exit codes (documented in moe.1 and --help). */
enum { EXIT_FIT_PROBLEM = 1, EXIT_USAGE = 2 };

int command_fit(int argc, char **argv);
int command_select(int argc, char **argv);
int command_predict(int argc, char **argv);
int command_info(int argc, char **argv);
int command_options(int argc, char **argv);
int command_families(int argc, char **argv);
int command_plot(int argc, char **argv);

/* The name error messages start with: "moe", or "moe-mpi" in that tool. */
extern const char *program_name;

/* Print "moe: message" (program_name) to stderr in one write; returns EXIT_USAGE (for input
   and usage errors). */
int usage_error(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A fit the library did not complete: its message, and the exit status moe.1 documents.
   The library refusing the data or an option's value before fitting (a response the family
   cannot take, too few rows for the parameters) is an input error (EXIT_USAGE, "input
   error: ..."); anything else is a failed fit (EXIT_FIT_PROBLEM, "the fit failed: ...").
   `context` starts the message after the program's name ("" or "rank 2: "). */
int fit_failure(moe_status status, const char *context, const char *message);
/* The exit status alone, for a process that leaves the message to another (moe-mpi's ranks
   share one failure, which rank 0 prints). */
int fit_failure_code(moe_status status);

/* The value of an option: argv[*at + 1], advancing *at; NULL (and a message) if absent. */
const char *option_value(int argc, char **argv, int *at);

/* What every command that reads a saved model and a data file takes besides its own
   options: the two paths, --response and --sep. */
typedef struct model_data_arguments {
    const char *model_path, *data_path, *response;
    char delimiter; /* ',' by default */
} model_data_arguments;

/* Take argv[*at] if it is one of those (advancing *at past a value): 1 taken, 0 not one of
   them (an unknown option: the caller says so), or a negative exit status after a usage
   error. `command` names the command in messages. */
int model_data_argument(int argc, char **argv, int *at, const char *command,
                        model_data_arguments *a);

/* "a,b,c" split in place into *count names (the array is malloc'ed). */
const char **split_names(char *list, size_t *count);

/* A one-character delimiter from --sep ("," ";" "\t" "tab"); 0 if invalid. */
char parse_delimiter(const char *text);

/*
 * Class labels of a classification response: the distinct texts, in numeric order when
 * every label is a number and in byte order otherwise. y[i] receives each row's class
 * index. Returns the number of classes, or 0 (out of memory).
 */
size_t encode_labels(char **labels, size_t n, double *y, char ***classes);
void free_labels(char **classes, size_t count);

/* The arguments of fit and select. */
typedef struct fit_arguments {
    const char *data, *response, *features, *family, *link, *estimator, *output;
    const char *seed, *n_init, *max_iter, *tol, *threads;
    const char **options; /* NAME=VALUE */
    size_t n_options;
    size_t experts;       /* fit */
    size_t k_min, k_max;  /* select */
    const char *criterion;
    char delimiter;
    int json;
    int no_intercept;     /* experts and gate without intercepts (cqt needs it) */
    const char *batch_size, *checkpoint, *resume; /* streaming fit */
    int estimator_given;  /* --estimator appeared (streaming defaults to ismm) */
    int intervals;        /* --intervals: 95% Wald intervals beside the standard errors */
    /* Which feature columns the gate and the experts see (names or 0-based positions among
       the features, comma separated, or "none"; NULL: every feature), and the experts'
       offset column (NULL: none). */
    const char *gate_features, *expert_features, *offset;
    const char *trials; /* binomial experts: the column of trials (NULL: one a row) */
} fit_arguments;

/* Parse fit's (select = 0) or select's arguments; -1 after --help, else an exit code. The
   caller frees a->options. */
int parse_fit_arguments(int argc, char **argv, fit_arguments *a, int select);

/* Which features each part of the model sees (moe_model_spec version 2): NULL for every
   feature, else d bytes (nonzero: seen); the offset's feature or -1. */
typedef struct model_inputs {
    unsigned char *gate_features, *expert_features;
    long offset;
    long trials; /* the trials' feature or -1 */
} model_inputs;

/* The columns to read as features when --features is not given and both --gate-features
   and --expert-features are: the columns either names (in that order, the response left
   out, so that its use is refused by name), then the --offset column. NULL (every column
   but the response is then a feature, as before) when those options are not all given,
   when an item is a position (it counts among every column but the response), or out of
   memory. The result ("a,b", or "" when both parts see none) is the caller's to free. */
char *model_columns(const fit_arguments *a);

/* The inputs the arguments ask for, over the data's features; 0 or an exit code (message
   printed). The caller frees them with free_model_inputs. */
int resolve_model_inputs(const fit_arguments *a, const table *data, model_inputs *out);
void free_model_inputs(model_inputs *inputs);
/* Put them in a spec (which keeps pointers to the arrays). */
void spec_set_inputs(moe_model_spec *spec, const model_inputs *inputs);

/* Training data: the table, the family and link, class labels for classification, and the
   inputs the gate and the experts see. */
typedef struct training_data {
    table data;
    moe_family family;
    moe_link link;
    char **classes;
    size_t n_classes;
    model_inputs inputs;
} training_data;

/* Read and check the data for fit and select; 0 or an exit code (message printed). */
int prepare_data(const fit_arguments *a, training_data *out);
/* prepare_data in two steps, for moe-mpi, whose ranks each read a file and must agree on
   the class labels of all of them before checking them: the reading (class labels encoded
   among the file's own), then the check of the classes (two or more, two for logistic). */
int read_training_data(const fit_arguments *a, training_data *out);
int check_classes(const fit_arguments *a, const training_data *t);
void free_training_data(training_data *t);

/* Fit K experts with the arguments' options (progress on a terminal, Ctrl-C), name the
   model after the data; 0 or an exit code. *model and *fitter are set even on failure
   (NULL or to be freed). */
int fit_model(const fit_arguments *a, const training_data *t, size_t experts,
              moe_model_t **model, moe_fitter_t **fitter);

/* The model the arguments describe (family, link, inputs, classes) for K experts, not yet
   fitted; 0 or an exit code (message printed). */
int fit_create_model(const fit_arguments *a, const training_data *t, size_t experts,
                     moe_model_t **model);
/* The warnings of a fit that ended without an error: no convergence, separation. */
void fit_warnings(const moe_fit_report *report, size_t experts);

/* Ctrl-C was pressed during a fit. */
int fit_interrupted(void);

/* Progress on a terminal and Ctrl-C around a fit: the callback returns whether Ctrl-C was
   pressed, so the library stops cleanly. */
typedef struct fit_watch {
    int show;
} fit_watch;
void fit_watch_begin(moe_fitter_t *fitter, fit_watch *watch);
void fit_watch_end(fit_watch *watch);

/* The fitter options of the arguments (--seed ... and --option); 0 or an exit code. */
int fit_set_options(moe_fitter_t *fitter, const fit_arguments *a);
/* Each option the arguments give, as a name and its text, in order; stops at the first
   visit that returns an exit code, and returns it (0 when all passed). */
typedef int (*fit_option_visitor)(void *context, const char *name, const char *value);
int fit_each_option(const fit_arguments *a, fit_option_visitor visit, void *context);
/* The data's feature and response names (and class labels) into the model. */
int fit_name_model(moe_model_t *model, const table *data, char **classes, size_t n_classes);

/* moe fit with --batch-size, --checkpoint or --resume: the data streamed through
   moe_fitter_partial_fit (cli_stream.c). */
int run_stream_fit(const fit_arguments *a);

/* What fit adds to a model's summary: the data's view of it and the fit report. */
typedef struct fit_summary {
    const moe_criteria *criteria;  /* NULL: not shown */
    const double *mean_gate;       /* K mean gate weights over the data, or NULL */
    const moe_fit_report *report;  /* NULL: not shown */
    const char *estimator;
    size_t n;                      /* rows fitted */
    const double *standard_errors; /* moe_model_n_free_params values in the order of
                                      moe_model_vcov, or NULL: not shown */
    int intervals;                 /* also 95% Wald intervals */
    double gate_l2, expert_ridge;  /* the fit's penalties: above 0, the standard errors are
                                      from the penalised information, and say so */
    size_t n_init;                 /* the restarts asked for (0: not said) */
    const char *json_members;      /* more members of the JSON object ("\"mpi\": {...}"),
                                      or NULL */
} fit_summary;

/* A readable summary of the model (and of the fit, when `fit` is not NULL). */
void print_summary(FILE *out, const moe_model_t *model, const fit_summary *fit);
/* The same as one JSON object. */
void print_summary_json(FILE *out, const moe_model_t *model, const fit_summary *fit);

/* Name of feature j: the stored name, or "x<j+1>". */
const char *feature_label(const moe_model_t *model, size_t j, char *buffer, size_t size);

/* Classes of a model's experts: n_classes (multinomial), 2 (logistic) or 0 (Gaussian). */
size_t model_classes(const moe_model_t *model);
/* The library's families as "a, b or c" (moe_family_count), in buffer. */
const char *family_list(char *buffer, size_t size);
/* Whether the family's responses are class labels (logistic, multinomial) rather than
   numbers (Gaussian, Poisson counts). */
int is_class_family(moe_family family);
/* Label of class c: the stored name, or its number. */
const char *class_label(const moe_model_t *model, size_t c, char *buffer, size_t size);

/*
 * Read a data file for a saved model (predict, plot): the feature columns by the names
 * saved with the model (all columns in order for a model without names), the response
 * when `response` is not NULL, and for classification models its labels mapped back to
 * the model's classes in out->y. Returns 0, or an exit code after printing the error.
 */
int read_for_model(const char *path, const moe_model_t *model, const char *response,
                   char delimiter, table *out);

#endif
