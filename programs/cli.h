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
int command_predict(int argc, char **argv);
int command_info(int argc, char **argv);

/* Print "moe: message" to stderr; returns EXIT_USAGE (for input and usage errors). */
int usage_error(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The value of an option: argv[*at + 1], advancing *at; NULL (and a message) if absent. */
const char *option_value(int argc, char **argv, int *at);

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

/* What fit adds to a model's summary: the data's view of it and the fit report. */
typedef struct fit_summary {
    const moe_criteria *criteria;  /* NULL: not shown */
    const double *mean_gate;       /* K mean gate weights over the data, or NULL */
    const moe_fit_report *report;  /* NULL: not shown */
    const char *estimator;
    size_t n;                      /* rows fitted */
} fit_summary;

/* A readable summary of the model (and of the fit, when `fit` is not NULL). */
void print_summary(FILE *out, const moe_model_t *model, const fit_summary *fit);
/* The same as one JSON object. */
void print_summary_json(FILE *out, const moe_model_t *model, const fit_summary *fit);

/* Name of feature j: the stored name, or "x<j+1>". */
const char *feature_label(const moe_model_t *model, size_t j, char *buffer, size_t size);

#endif
