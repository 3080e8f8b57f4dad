/*
 * CSV input of the moe tool: a header row, then one row per observation.
 * Parsing is libcsv's (quoted fields, embedded delimiters and newlines, any
 * one-byte delimiter); numbers are read in the C locale whatever the user's.
 * Lines without a quote (ending in LF or CR LF) are split by the reader itself, exactly
 * as libcsv would split them, and numbers are converted by decimal.h, rounded exactly as
 * strtod rounds: most of the time spent reading went to those two.
 *
 * What is accepted, checked as the bytes are read:
 *   - numbers in decimal notation only: an optional sign, digits with an optional
 *     fraction, an optional exponent ("-1.5e-3"); no hexadecimal, "inf" or "nan"; a
 *     number beyond the range of a double, or a nonzero one that would round to zero
 *     or to a subnormal, is an error; empty cells, "NA" and "NaN" are missing values,
 *     which are errors too;
 *   - with check_names (fit, select), the names of the columns used (features,
 *     response) and class labels: 1 to MOE_NAME_MAX bytes of UTF-8 (<moe/model.h>),
 *     since they become model names; predict and plot match them against the names of
 *     a model, whatever its bytes;
 *   - no cell or column name may hold a NUL byte.
 */
#ifndef MOE_PROGRAMS_TABLE_H
#define MOE_PROGRAMS_TABLE_H

#include <stddef.h>
#include <stdio.h>

/* What to read from a file: the response (by name, may be NULL) and the features. */
typedef struct table_request {
    const char *response;   /* NULL: no response column */
    int response_as_text;   /* keep the response's cells as text (class labels) */
    const char **features;  /* NULL: every column but the response */
    size_t n_features;
    char delimiter;         /* ',' by default */
    int check_names;        /* the names of the columns used and the class labels become
                               model names: check them (see above) */
    int threads;            /* above 1: table_read (a regular file) and table_read_buffer
                               parse with up to that many threads (see below); 0 or 1:
                               serially */
    size_t thread_bytes;    /* the least bytes of rows a thread takes (0: 1 MiB); tests
                               make it small to cut small inputs */
} table_request;

typedef struct table {
    size_t n;                /* rows */
    size_t d;                /* features */
    char **feature_names;    /* d */
    char *response_name;     /* NULL without a response */
    double *X;               /* n x d, row-major */
    double *y;               /* n numeric responses (NULL when read as text or absent) */
    char **labels;           /* n response texts (response_as_text only) */
    size_t *label_lines;     /* n: the line where each label's row starts (with labels) */
    char **column_names;     /* n_columns: the header's names in file order, for messages
                                that name a column the header lacks */
    size_t n_columns;
    size_t *row_lines;       /* n: the line where each row starts (header, blank and
                                quoted multi-line records make it differ from row + 2):
                                messages about a row name it */
} table;

/*
 * Read `path` ("-" is standard input). Returns 0, or -1 with a message in `error` that
 * names the file, the line and the column ("data.csv: line 7, column 'x2': 'abc' is
 * not a finite decimal number"). Lines are physical lines of the file counted from 1
 * (a line ends at LF, CR LF or a lone CR), so a quoted field with line breaks inside
 * spans several; a message names the line where the offending field or row starts.
 */
int table_read(const char *path, const table_request *request, table *out, char *error,
               size_t error_size);

/*
 * With request->threads above 1, table_read maps a regular file (standard input, pipes
 * and the like are read serially) and table_read_buffer cuts its bytes: the header is
 * read first, then the rows are cut into up to `threads` ranges at line ends, at least
 * thread_bytes each, parsed at once by the same code as the serial read into rows of
 * their own, then joined in file order. The result is the serial read's, bit for bit:
 * the same table, and for a bad input the same message (the first bad range in file
 * order, and the ranges after it, are read again serially, so messages name the line
 * and row counts as the serial read does). A line end inside a quoted field cannot be
 * told from the others without reading from the start: from the first range that holds
 * a quote (or from the header, if it has one) the rest is read serially.
 */

/* The same from an open stream or from memory; `name` is the file name for messages. */
int table_read_stream(FILE *file, const char *name, const table_request *request, table *out,
                      char *error, size_t error_size);
int table_read_buffer(const void *bytes, size_t size, const char *name,
                      const table_request *request, table *out, char *error,
                      size_t error_size);

/*
 * The same in pieces: begin, feed the bytes in any number of pieces, end. The result
 * does not depend on where the pieces are cut. `name` and `request` must outlive the
 * reader. begin returns NULL when out of memory; feed returns -1 once the input is
 * known to be bad (later feeds are ignored); end frees the reader and returns as
 * table_read does.
 */
typedef struct table_reader table_reader;
table_reader *table_reader_begin(const char *name, const table_request *request, table *out);
int table_reader_feed(table_reader *reader, const void *bytes, size_t size);
int table_reader_end(table_reader *reader, char *error, size_t error_size);

/*
 * Streaming: whether the header has been read (out's d, feature and response names are
 * set), and, after the caller has used out's n complete rows, forgetting them so the
 * table never holds more than the rows of a few pieces. A row whose fields are still
 * being read is kept. Rows are still counted for messages' line numbers.
 */
int table_reader_header_done(const table_reader *reader);
void table_reader_discard_rows(table_reader *reader);

void table_free(table *t);

/* "a, b, c" for a message: the names (each cut to a readable length) while they fit in
   `size`, then "... (N in all)". Returns buffer. */
const char *table_list_names(char *const *names, size_t count, char *buffer, size_t size);

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
