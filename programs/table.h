/*
 * CSV input of the moe tool: a header row, then one row per observation.
 * Parsing is libcsv's (quoted fields, embedded delimiters and newlines, any
 * one-byte delimiter); numbers are read in the C locale whatever the user's.
 *
 * Numbers must be in decimal notation: an optional sign, digits with an optional
 * fraction, an optional exponent ("-1.5e-3"); no hexadecimal, "inf" or "nan". A
 * number beyond the range of a double, or a nonzero one that would round to zero or
 * to a subnormal, is an error; empty cells, "NA" and "NaN" are missing values, which
 * are errors too; so is a NUL byte in a cell.
 */
#ifndef MOE_PROGRAMS_TABLE_H
#define MOE_PROGRAMS_TABLE_H

#include <stddef.h>

/* What to read from a file: the response (by name, may be NULL) and the features. */
typedef struct table_request {
    const char *response;   /* NULL: no response column */
    int response_as_text;   /* keep the response's cells as text (class labels) */
    const char **features;  /* NULL: every column but the response */
    size_t n_features;
    char delimiter;         /* ',' by default */
} table_request;

typedef struct table {
    size_t n;                /* rows */
    size_t d;                /* features */
    char **feature_names;    /* d */
    char *response_name;     /* NULL without a response */
    double *X;               /* n x d, row-major */
    double *y;               /* n numeric responses (NULL when read as text or absent) */
    char **labels;           /* n response texts (response_as_text only) */
} table;

/*
 * Read `path` ("-" is standard input). Returns 0, or -1 with a message in `error` that
 * names the file, the line and the column ("data.csv: line 7, column 'x2': 'abc' is not a
 * number"). Lines are counted from the header (line 1), one per record.
 */
int table_read(const char *path, const table_request *request, table *out, char *error,
               size_t error_size);
void table_free(table *t);

/* What table_parse_number found. */
enum {
    NUMBER_OK = 0,
    NUMBER_NOT_DECIMAL, /* not decimal notation (words, hexadecimal, inf, nan, empty) */
    NUMBER_OVERFLOW,    /* beyond the largest double */
    NUMBER_UNDERFLOW    /* nonzero, but zero or subnormal as a double */
};

/* Parse a whole NUL-terminated cell (spaces and tabs around it allowed) as a number in
   decimal notation, in the C locale; NUMBER_OK with *value set, or the problem. */
int table_parse_number(const char *text, double *value);

#endif
