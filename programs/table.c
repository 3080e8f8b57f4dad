#define _POSIX_C_SOURCE 200809L /* newlocale, uselocale, strdup */

#include "table.h"

#include "name_index.h"
#include "utf8.h"

#include <csv.h>
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parse in progress: libcsv calls back per field and per record. */
typedef struct reader {
    const table_request *request;
    const char *path;
    table *out;
    size_t record;       /* 0 is the header */
    size_t field;        /* in the current record */
    size_t n_columns;    /* of the header */
    size_t header_capacity;
    char **header;
    name_index columns;  /* header name -> column */
    long *feature_of;    /* per column: feature index, or -1 */
    long response_column;
    size_t capacity;     /* rows allocated */
    int failed;
    char *error;
    size_t error_size;
} reader;

static void fail(reader *r, const char *format, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    va_list arguments;
    va_start(arguments, format);
    int used = snprintf(r->error, r->error_size, "%s: ", r->path);
    if (used >= 0 && (size_t)used < r->error_size)
        vsnprintf(r->error + used, r->error_size - (size_t)used, format, arguments);
    va_end(arguments);
}

static char *copy_text(const char *text, size_t length)
{
    char *copy = malloc(length + 1);
    if (copy != NULL) {
        memcpy(copy, text, length);
        copy[length] = '\0';
    }
    return copy;
}

/* The end of a number in decimal notation at `text` ([sign] digits [. digits]
   [e|E [sign] digits], at least one digit before the exponent), or NULL when there is
   none. Sets *nonzero when a digit of the significand is not 0. */
static const char *decimal_end(const char *text, int *nonzero)
{
    const char *c = text;
    size_t digits = 0;
    *nonzero = 0;
    if (*c == '+' || *c == '-')
        ++c;
    for (; *c >= '0' && *c <= '9'; ++c, ++digits)
        *nonzero |= *c != '0';
    if (*c == '.')
        for (++c; *c >= '0' && *c <= '9'; ++c, ++digits)
            *nonzero |= *c != '0';
    if (digits == 0)
        return NULL;
    if (*c == 'e' || *c == 'E') {
        ++c;
        if (*c == '+' || *c == '-')
            ++c;
        if (!(*c >= '0' && *c <= '9'))
            return NULL;
        while (*c >= '0' && *c <= '9')
            ++c;
    }
    return c;
}

int table_parse_number(const char *text, double *value)
{
    static locale_t c_locale = (locale_t)0;
    if (c_locale == (locale_t)0)
        c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    while (*text == ' ' || *text == '\t')
        ++text;
    int nonzero = 0;
    const char *end = decimal_end(text, &nonzero);
    while (end != NULL && (*end == ' ' || *end == '\t'))
        ++end;
    if (end == NULL || *end != '\0')
        return NUMBER_NOT_DECIMAL;
    /* strtod accepts more than decimal notation (hexadecimal, inf, nan), which the check
       above has ruled out; it converts the rest exactly as wanted. */
    locale_t previous = c_locale != (locale_t)0 ? uselocale(c_locale) : (locale_t)0;
    double parsed = strtod(text, NULL);
    if (previous != (locale_t)0)
        uselocale(previous);
    if (!isfinite(parsed))
        return NUMBER_OVERFLOW;
    if (nonzero && fabs(parsed) < DBL_MIN)
        return NUMBER_UNDERFLOW;
    *value = parsed;
    return NUMBER_OK;
}

/*
 * About `limit` bytes of a cell or name for a message: control bytes (line breaks, NUL)
 * and bytes that are not UTF-8 written as \xNN, so a message stays one readable line,
 * and "..." when cut.
 */
static const char *shown(char *buffer, size_t size, const char *text, size_t length,
                         size_t limit)
{
    const unsigned char *bytes = (const unsigned char *)text;
    size_t used = 0, at = 0;
    while (at < length && at < limit) {
        size_t step = bytes[at] >= 0x20 && bytes[at] != 0x7f
                          ? utf8_sequence(bytes + at, length - at, NULL)
                          : 0;
        if (used + (step > 0 ? step : 4) + 4 > size)
            break;
        if (step == 0) {
            used += (size_t)snprintf(buffer + used, size - used, "\\x%02x", bytes[at]);
            at += 1;
        } else {
            memcpy(buffer + used, bytes + at, step);
            used += step;
            at += step;
        }
    }
    if (at < length) {
        memcpy(buffer + used, "...", 3);
        used += 3;
    }
    buffer[used] = '\0';
    return buffer;
}

static const char *column_name(const reader *r, size_t column)
{
    return column < r->n_columns ? r->header[column] : "?";
}

static int grow(reader *r)
{
    table *t = r->out;
    size_t width = t->d > 0 ? t->d : 1;
    /* The first block holds up to 1024 rows but about 1 MB at most: a file of a
       hundred thousand columns and one row must not reserve a gigabyte. */
    size_t capacity = (1u << 17) / width;
    capacity = capacity < 1 ? 1 : capacity > 1024 ? 1024 : capacity;
    if (r->capacity != 0)
        capacity = r->capacity <= SIZE_MAX / 2 ? 2 * r->capacity : 0;
    double *X = capacity != 0 && capacity <= SIZE_MAX / sizeof(double) / width
                    ? realloc(t->X, capacity * width * sizeof(double))
                    : NULL;
    if (X != NULL)
        t->X = X;
    int ok = X != NULL;
    if (ok && r->request->response != NULL) {
        if (r->request->response_as_text) {
            char **labels = realloc(t->labels, capacity * sizeof(char *));
            ok = labels != NULL;
            if (ok) {
                for (size_t i = r->capacity; i < capacity; ++i)
                    labels[i] = NULL;
                t->labels = labels;
            }
        } else {
            double *y = realloc(t->y, capacity * sizeof(double));
            ok = y != NULL;
            if (ok)
                t->y = y;
        }
    }
    if (!ok) {
        fail(r, "out of memory after %zu rows", t->n);
        return -1;
    }
    r->capacity = capacity;
    return 0;
}

static void header_field(reader *r, const char *text, size_t length)
{
    /* A UTF-8 byte order mark (spreadsheets write one) is not part of the first name. */
    if (r->n_columns == 0 && length >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        text += 3;
        length -= 3;
    }
    if (r->n_columns == r->header_capacity) {
        size_t capacity = r->header_capacity == 0 ? 64 : 2 * r->header_capacity;
        char **header = realloc(r->header, capacity * sizeof(char *));
        if (header == NULL) {
            fail(r, "out of memory in the header");
            return;
        }
        r->header = header;
        r->header_capacity = capacity;
    }
    if ((r->header[r->n_columns] = copy_text(text, length)) == NULL) {
        fail(r, "out of memory in the header");
        return;
    }
    r->n_columns++;
}

static long find_column(const reader *r, const char *name)
{
    size_t column = 0;
    return name_index_find(&r->columns, name, &column) ? (long)column : -1;
}

/* The header is complete: choose the columns. */
static void choose_columns(reader *r)
{
    const table_request *request = r->request;
    table *t = r->out;
    if (name_index_init(&r->columns, r->n_columns) != 0) {
        fail(r, "out of memory in the header");
        return;
    }
    for (size_t c = 0; c < r->n_columns; ++c) {
        size_t first = 0;
        int added = name_index_add(&r->columns, r->header[c], c, &first);
        if (added < 0) {
            fail(r, "out of memory in the header");
            return;
        }
        if (added == 0) {
            fail(r, "line 1, column %zu: the column name '%s' appears twice (also column %zu)",
                 c + 1, r->header[c], first + 1);
            return;
        }
    }
    r->response_column = -1;
    if (request->response != NULL &&
        (r->response_column = find_column(r, request->response)) < 0) {
        fail(r, "no column named '%s' (the header has %zu columns)", request->response,
             r->n_columns);
        return;
    }
    r->feature_of = malloc(r->n_columns * sizeof(long));
    if (r->feature_of == NULL) {
        fail(r, "out of memory");
        return;
    }
    for (size_t c = 0; c < r->n_columns; ++c)
        r->feature_of[c] = -1;
    size_t d = request->features != NULL ? request->n_features
                                         : r->n_columns - (r->response_column >= 0);
    t->feature_names = calloc(d > 0 ? d : 1, sizeof(char *));
    if (t->feature_names == NULL) {
        fail(r, "out of memory");
        return;
    }
    t->d = d;
    if (request->features != NULL) {
        for (size_t j = 0; j < d; ++j) {
            long column = find_column(r, request->features[j]);
            if (column < 0) {
                fail(r, "no column named '%s'", request->features[j]);
                return;
            }
            if (column == r->response_column || r->feature_of[column] >= 0) {
                fail(r, "column '%s' is chosen twice", request->features[j]);
                return;
            }
            r->feature_of[column] = (long)j;
        }
    } else {
        size_t j = 0;
        for (size_t c = 0; c < r->n_columns; ++c)
            if ((long)c != r->response_column)
                r->feature_of[c] = (long)j++;
    }
    for (size_t c = 0; c < r->n_columns; ++c)
        if (r->feature_of[c] >= 0 &&
            (t->feature_names[r->feature_of[c]] = copy_text(r->header[c], strlen(r->header[c]))) ==
                NULL)
            fail(r, "out of memory");
    if (r->response_column >= 0 &&
        (t->response_name = copy_text(request->response, strlen(request->response))) == NULL)
        fail(r, "out of memory");
}

static void on_field(void *text, size_t length, void *opaque)
{
    reader *r = opaque;
    if (r->failed)
        return;
    size_t column = r->field++;
    if (r->record == 0) {
        header_field(r, text, length);
        return;
    }
    table *t = r->out;
    if (column >= r->n_columns)
        return; /* reported at the end of the record */
    if (column == 0 && t->n == r->capacity && grow(r) != 0)
        return;
    size_t row = t->n, line = r->record + 1;
    if ((long)column == r->response_column && r->request->response_as_text) {
        if (length == 0) {
            fail(r, "line %zu, column '%s': the value is missing", line, column_name(r, column));
            return;
        }
        if ((t->labels[row] = copy_text(text, length)) == NULL)
            fail(r, "out of memory");
        return;
    }
    long feature = r->feature_of[column];
    if (feature < 0 && (long)column != r->response_column)
        return; /* a column nobody asked for */
    char buffer[160];
    if (memchr(text, '\0', length) != NULL) {
        fail(r, "line %zu, column '%s': the cell '%s' contains a NUL byte", line,
             column_name(r, column), shown(buffer, sizeof buffer, text, length, 40));
        return;
    }
    double value = 0.0;
    switch (table_parse_number(text, &value)) {
    case NUMBER_OK:
        break;
    case NUMBER_OVERFLOW:
        fail(r, "line %zu, column '%s': '%s' overflows (beyond %g in magnitude)", line,
             column_name(r, column), shown(buffer, sizeof buffer, text, length, 40), DBL_MAX);
        return;
    case NUMBER_UNDERFLOW:
        fail(r, "line %zu, column '%s': '%s' underflows (not zero, but below %g in magnitude)",
             line, column_name(r, column), shown(buffer, sizeof buffer, text, length, 40),
             DBL_MIN);
        return;
    default:
        if (length == 0 || strcmp(text, "NA") == 0 || strcmp(text, "NaN") == 0)
            fail(r, "line %zu, column '%s': the value is missing", line,
                 column_name(r, column));
        else
            fail(r, "line %zu, column '%s': '%s' is not a finite decimal number", line,
                 column_name(r, column), shown(buffer, sizeof buffer, text, length, 40));
        return;
    }
    if (feature >= 0)
        t->X[row * t->d + (size_t)feature] = value;
    else
        t->y[row] = value;
}

static void on_record(int terminator, void *opaque)
{
    (void)terminator;
    reader *r = opaque;
    if (r->failed)
        return;
    size_t fields = r->field, line = r->record + 1;
    r->field = 0;
    if (r->record++ == 0) {
        if (r->n_columns == 0)
            fail(r, "line 1: the header is empty");
        else
            choose_columns(r);
        return;
    }
    if (fields != r->n_columns) {
        fail(r, "line %zu has %zu fields, the header has %zu", line, fields, r->n_columns);
        return;
    }
    r->out->n++;
}

void table_free(table *t)
{
    if (t->feature_names != NULL)
        for (size_t j = 0; j < t->d; ++j)
            free(t->feature_names[j]);
    free(t->feature_names);
    free(t->response_name);
    free(t->X);
    free(t->y);
    if (t->labels != NULL)
        for (size_t i = 0; i < t->n; ++i)
            free(t->labels[i]);
    free(t->labels);
    memset(t, 0, sizeof *t);
}

int table_read(const char *path, const table_request *request, table *out, char *error,
               size_t error_size)
{
    memset(out, 0, sizeof *out);
    reader r;
    memset(&r, 0, sizeof r);
    r.request = request;
    r.path = path;
    r.out = out;
    r.error = error;
    r.error_size = error_size;
    r.response_column = -1;
    int from_stdin = strcmp(path, "-") == 0;
    FILE *file = from_stdin ? stdin : fopen(path, "rb");
    if (file == NULL) {
        snprintf(error, error_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct csv_parser parser;
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        snprintf(error, error_size, "%s: cannot start the CSV parser", path);
        if (!from_stdin)
            fclose(file);
        return -1;
    }
    csv_set_delim(&parser, (unsigned char)(request->delimiter ? request->delimiter : ','));
    char buffer[1 << 16];
    size_t got;
    while (!r.failed && (got = fread(buffer, 1, sizeof buffer, file)) > 0)
        if (csv_parse(&parser, buffer, got, on_field, on_record, &r) != got)
            fail(&r, "line %zu: %s", r.record + 1, csv_strerror(csv_error(&parser)));
    if (!r.failed && ferror(file))
        fail(&r, "read error: %s", strerror(errno));
    if (!r.failed && csv_fini(&parser, on_field, on_record, &r) != 0)
        fail(&r, "line %zu: %s", r.record + 1, csv_strerror(csv_error(&parser)));
    csv_free(&parser);
    if (!from_stdin)
        fclose(file);
    if (!r.failed && r.record == 0)
        fail(&r, "the file is empty (no header)");
    if (!r.failed && out->n == 0)
        fail(&r, "no data rows after the header");
    for (size_t c = 0; c < r.n_columns; ++c)
        free(r.header[c]);
    free(r.header);
    free(r.feature_of);
    name_index_free(&r.columns);
    if (r.failed) {
        /* The unfinished row's label lies past n. */
        if (out->labels != NULL && r.capacity > out->n) {
            free(out->labels[out->n]);
            out->labels[out->n] = NULL;
        }
        table_free(out);
        return -1;
    }
    return 0;
}
