#define _POSIX_C_SOURCE 200809L /* fileno, mmap */

#include "table.h"

#include "decimal.h"
#include "name_index.h"
#include "utf8.h"

#include <moe/model.h> /* MOE_NAME_MAX */

#include <csv.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* Bytes handed to libcsv at a time: long lines are cut so its field buffer can grow
   geometrically between calls (see feed_segment). */
enum { SEGMENT = 1 << 16 };

/* The parse in progress: libcsv calls back per field and per record. */
struct table_reader {
    const table_request *request;
    const char *name;
    table *out;
    struct csv_parser parser;
    size_t record;          /* records completed; 0 while reading the header */
    size_t field;           /* fields completed in the current record */
    size_t line;            /* physical line of the bytes being parsed */
    int after_cr;           /* the last byte fed was a CR (its LF may follow) */
    size_t record_line;     /* line where the current record starts */
    size_t n_columns;       /* of the header */
    size_t header_capacity;
    char **header;
    size_t *header_lines;   /* per column: the line where its name starts */
    name_index columns;     /* header name -> column */
    long *feature_of;       /* per column: feature index, or -1 */
    long response_column;
    size_t capacity;        /* rows allocated */
    size_t discarded;       /* rows the caller has used and dropped (streaming) */
    char delimiter;
    int fast;               /* the delimiter cannot be part of a number: rows of unquoted
                               fields may skip libcsv (fast_rows) */
    int between_records;    /* libcsv ended a record at the last byte it was given */
    int failed;
    char error[1024];
};

static void fail(table_reader *r, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail(table_reader *r, const char *format, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    va_list arguments;
    va_start(arguments, format);
    int used = snprintf(r->error, sizeof r->error, "%s: ", r->name);
    if (used >= 0 && (size_t)used < sizeof r->error)
        vsnprintf(r->error + used, sizeof r->error - (size_t)used, format, arguments);
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

/* fail() with "line L, column C: " first: the column by name in the data rows, by
   number in the header (and past the header's columns). */
static void fail_at(table_reader *r, size_t line, size_t column, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void fail_at(table_reader *r, size_t line, size_t column, const char *format, ...)
{
    if (r->failed)
        return;
    char message[768], name[128];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    if (r->record > 0 && column < r->n_columns)
        fail(r, "line %zu, column '%s': %s", line,
             shown(name, sizeof name, r->header[column], strlen(r->header[column]), 80), message);
    else
        fail(r, "line %zu, column %zu: %s", line, column + 1, message);
}

/* Line breaks in `text`: LF, CR LF and a lone CR count one each. */
static size_t count_breaks(const char *text, size_t length)
{
    size_t breaks = 0;
    for (size_t i = 0; i < length; ++i)
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == length || text[i + 1] != '\n')))
            ++breaks;
    return breaks;
}

static int classify(double parsed, int nonzero, double *value)
{
    if (!isfinite(parsed))
        return NUMBER_OVERFLOW;
    if (nonzero && fabs(parsed) < DBL_MIN)
        return NUMBER_UNDERFLOW;
    *value = parsed;
    return NUMBER_OK;
}

/* table_parse_number on `length` bytes, which need not end with a NUL. */
static int parse_cell(const char *text, size_t length, double *value)
{
    const char *end = text + length;
    while (text < end && (*text == ' ' || *text == '\t'))
        ++text;
    int nonzero = 0;
    double parsed = 0.0;
    const char *stop = decimal_parse(text, end, &parsed, &nonzero);
    while (stop != NULL && stop < end && (*stop == ' ' || *stop == '\t'))
        ++stop;
    if (stop != end)
        return NUMBER_NOT_DECIMAL;
    return classify(parsed, nonzero, value);
}

int table_parse_number(const char *text, double *value)
{
    return parse_cell(text, strlen(text), value);
}

/* Room for `rows` rows (at least one more than now when called as rows are read). */
static int grow(table_reader *r, size_t rows)
{
    table *t = r->out;
    size_t width = t->d > 0 ? t->d : 1;
    /* The first block holds up to 1024 rows but about 1 MB at most: a file of a
       hundred thousand columns and one row must not reserve a gigabyte. */
    size_t capacity = (1u << 17) / width;
    capacity = capacity < 1 ? 1 : capacity > 1024 ? 1024 : capacity;
    if (r->capacity != 0)
        capacity = r->capacity <= SIZE_MAX / 2 ? 2 * r->capacity : 0;
    if (capacity != 0 && capacity < rows)
        capacity = rows;
    double *X = capacity != 0 && capacity <= SIZE_MAX / sizeof(double) / width
                    ? realloc(t->X, capacity * width * sizeof(double))
                    : NULL;
    if (X != NULL)
        t->X = X;
    size_t *row_lines = X != NULL ? realloc(t->row_lines, capacity * sizeof(size_t)) : NULL;
    if (row_lines != NULL)
        t->row_lines = row_lines;
    int ok = X != NULL && row_lines != NULL;
    if (ok && r->request->response != NULL) {
        if (r->request->response_as_text) {
            char **labels = realloc(t->labels, capacity * sizeof(char *));
            if (labels != NULL) {
                for (size_t i = r->capacity; i < capacity; ++i)
                    labels[i] = NULL;
                t->labels = labels;
            }
            size_t *lines = labels != NULL ? realloc(t->label_lines, capacity * sizeof(size_t))
                                           : NULL;
            if (lines != NULL)
                t->label_lines = lines;
            ok = labels != NULL && lines != NULL;
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

static void header_field(table_reader *r, const char *text, size_t length, size_t line)
{
    /* A UTF-8 byte order mark (spreadsheets write one) is not part of the first name. */
    if (r->n_columns == 0 && length >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        text += 3;
        length -= 3;
    }
    if (memchr(text, '\0', length) != NULL) {
        fail(r, "line %zu, column %zu: the column name contains a NUL byte", line,
             r->n_columns + 1);
        return;
    }
    if (r->n_columns == r->header_capacity) {
        size_t capacity = r->header_capacity == 0 ? 64 : 2 * r->header_capacity;
        char **header = realloc(r->header, capacity * sizeof(char *));
        if (header != NULL)
            r->header = header;
        size_t *lines = header != NULL ? realloc(r->header_lines, capacity * sizeof(size_t))
                                       : NULL;
        if (lines != NULL)
            r->header_lines = lines;
        if (header == NULL || lines == NULL) {
            fail(r, "out of memory in the header");
            return;
        }
        r->header_capacity = capacity;
    }
    if ((r->header[r->n_columns] = copy_text(text, length)) == NULL) {
        fail(r, "out of memory in the header");
        return;
    }
    r->header_lines[r->n_columns] = line;
    r->n_columns++;
}

static long find_column(const table_reader *r, const char *name)
{
    size_t column = 0;
    return name_index_find(&r->columns, name, &column) ? (long)column : -1;
}

/* A column whose name becomes a model name: 1 to MOE_NAME_MAX bytes of UTF-8. */
static void check_column_name(table_reader *r, size_t column)
{
    const char *name = r->header[column];
    size_t length = strlen(name), line = r->header_lines[column];
    char buffer[160];
    if (length == 0)
        fail(r, "line %zu, column %zu: the column name is empty", line, column + 1);
    else if (length > MOE_NAME_MAX)
        fail(r, "line %zu, column %zu: the column name '%s' is %zu bytes long, at most %d "
                "are allowed", line, column + 1, shown(buffer, sizeof buffer, name, length, 40),
             length, MOE_NAME_MAX);
    else if (utf8_invalid_offset(name, length) < length)
        fail(r, "line %zu, column %zu: the column name '%s' is not valid UTF-8 (convert the "
                "file, e.g. with iconv)", line, column + 1,
             shown(buffer, sizeof buffer, name, length, 60));
}

const char *table_list_names(char *const *names, size_t count, char *buffer, size_t size)
{
    size_t used = 0;
    buffer[0] = '\0';
    for (size_t c = 0; c < count; ++c) {
        char name[64];
        shown(name, sizeof name, names[c], strlen(names[c]), 40);
        /* Room for this name and for the tail that says how many there are. */
        if (used + strlen(name) + 2 + 32 >= size) {
            snprintf(buffer + used, size - used, "%s... (%zu in all)", c > 0 ? ", " : "",
                     count);
            break;
        }
        used += (size_t)snprintf(buffer + used, size - used, "%s%s", c > 0 ? ", " : "", name);
    }
    return buffer;
}

/* A requested column the header lacks: the message lists the header's names, so a typo or
   a name with other case or spaces shows at once. */
static void missing_column(table_reader *r, const char *name)
{
    char wanted[160], names[400];
    fail(r, "no column named '%s'; the header's columns: %s",
         shown(wanted, sizeof wanted, name, strlen(name), 100),
         table_list_names(r->out->column_names, r->out->n_columns, names, sizeof names));
}

/* The header is complete: choose the columns. */
static void choose_columns(table_reader *r)
{
    const table_request *request = r->request;
    table *t = r->out;
    char buffer[160];
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
            fail(r, "line %zu, column %zu: the column name '%s' appears twice (also column %zu)",
                 r->header_lines[c], c + 1,
                 shown(buffer, sizeof buffer, r->header[c], strlen(r->header[c]), 100),
                 first + 1);
            return;
        }
    }
    t->column_names = calloc(r->n_columns > 0 ? r->n_columns : 1, sizeof(char *));
    if (t->column_names == NULL) {
        fail(r, "out of memory in the header");
        return;
    }
    t->n_columns = r->n_columns;
    for (size_t c = 0; c < r->n_columns; ++c)
        if ((t->column_names[c] = copy_text(r->header[c], strlen(r->header[c]))) == NULL) {
            fail(r, "out of memory in the header");
            return;
        }
    r->response_column = -1;
    if (request->response != NULL &&
        (r->response_column = find_column(r, request->response)) < 0) {
        missing_column(r, request->response);
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
                missing_column(r, request->features[j]);
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
    for (size_t c = 0; request->check_names && c < r->n_columns && !r->failed; ++c)
        if (r->feature_of[c] >= 0 || (long)c == r->response_column)
            check_column_name(r, c);
    for (size_t c = 0; c < r->n_columns && !r->failed; ++c)
        if (r->feature_of[c] >= 0 &&
            (t->feature_names[r->feature_of[c]] = copy_text(r->header[c], strlen(r->header[c]))) ==
                NULL)
            fail(r, "out of memory");
    if (!r->failed && r->response_column >= 0 &&
        (t->response_name = copy_text(request->response, strlen(request->response))) == NULL)
        fail(r, "out of memory");
}

/* A class label, kept as text; with check_names 1 to MOE_NAME_MAX bytes of UTF-8. */
static void label_field(table_reader *r, const char *text, size_t length, size_t line,
                        size_t column)
{
    table *t = r->out;
    char buffer[160];
    if (length == 0)
        fail_at(r, line, column, "the value is missing");
    else if (memchr(text, '\0', length) != NULL)
        fail_at(r, line, column, "the label '%s' contains a NUL byte",
                shown(buffer, sizeof buffer, text, length, 40));
    else if (r->request->check_names && length > MOE_NAME_MAX)
        fail_at(r, line, column, "the label '%s' is %zu bytes long, at most %d are allowed",
                shown(buffer, sizeof buffer, text, length, 40), length, MOE_NAME_MAX);
    else if (r->request->check_names && utf8_invalid_offset(text, length) < length)
        fail_at(r, line, column,
                "the label '%s' is not valid UTF-8 (convert the file, e.g. with iconv)",
                shown(buffer, sizeof buffer, text, length, 60));
    else if ((t->labels[t->n] = copy_text(text, length)) == NULL)
        fail(r, "out of memory");
    else
        t->label_lines[t->n] = line;
}

/* A field that starts on `line`, from libcsv or from fast_row: `text` need not end
   with a NUL. */
static void take_field(table_reader *r, const char *text, size_t length, size_t line)
{
    size_t column = r->field++;
    if (column == 0)
        r->record_line = line;
    if (r->record == 0) {
        header_field(r, text, length, line);
        return;
    }
    table *t = r->out;
    if (column >= r->n_columns)
        return; /* reported at the end of the record */
    if (column == 0 && t->n == r->capacity && grow(r, t->n + 1) != 0)
        return;
    long feature = r->feature_of[column];
    if (feature < 0 && (long)column != r->response_column)
        return; /* a column nobody asked for */
    char buffer[160];
    if ((long)column == r->response_column && r->request->response_as_text) {
        label_field(r, text, length, line, column);
        return;
    }
    if (memchr(text, '\0', length) != NULL) {
        fail_at(r, line, column, "the cell '%s' contains a NUL byte",
                shown(buffer, sizeof buffer, text, length, 40));
        return;
    }
    double value = 0.0;
    switch (parse_cell(text, length, &value)) {
    case NUMBER_OK:
        break;
    case NUMBER_OVERFLOW:
        fail_at(r, line, column, "'%s' overflows (beyond %g in magnitude)",
                shown(buffer, sizeof buffer, text, length, 40), DBL_MAX);
        return;
    case NUMBER_UNDERFLOW:
        fail_at(r, line, column, "'%s' underflows (not zero, but below %g in magnitude)",
                shown(buffer, sizeof buffer, text, length, 40), DBL_MIN);
        return;
    default:
        if (length == 0 || (length == 2 && memcmp(text, "NA", 2) == 0) ||
            (length == 3 && memcmp(text, "NaN", 3) == 0))
            fail_at(r, line, column, "the value is missing");
        else
            fail_at(r, line, column, "'%s' is not a finite decimal number",
                    shown(buffer, sizeof buffer, text, length, 40));
        return;
    }
    if (feature >= 0)
        t->X[t->n * t->d + (size_t)feature] = value;
    else
        t->y[t->n] = value;
}

static void on_field(void *data, size_t length, void *opaque)
{
    table_reader *r = opaque;
    if (r->failed)
        return;
    const char *text = data != NULL ? data : "";
    /* libcsv calls back at the byte that ends the field, on line r->line; the field's
       own line breaks lie between its start and that byte. */
    take_field(r, text, length, r->line - count_breaks(text, length));
}

static void end_record(table_reader *r)
{
    if (r->failed)
        return;
    size_t fields = r->field;
    r->field = 0;
    if (r->record++ == 0) {
        if (r->n_columns == 0)
            fail(r, "line %zu: the header is empty", r->record_line);
        else
            choose_columns(r);
        return;
    }
    if (fields != r->n_columns) {
        fail(r, "line %zu has %zu fields, the header has %zu", r->record_line, fields,
             r->n_columns);
        return;
    }
    r->out->row_lines[r->out->n++] = r->record_line;
}

static void on_record(int terminator, void *opaque)
{
    (void)terminator;
    table_reader *r = opaque;
    r->between_records = 1;
    end_record(r);
}

/* A space or tab that libcsv trims from an unquoted field (unless it delimits). */
static int blank(const table_reader *r, char c)
{
    return (c == ' ' || c == '\t') && c != r->delimiter;
}

/* Where the number of `column` of the row being read goes, or NULL (not a number). */
static double *number_slot(table_reader *r, size_t column)
{
    table *t = r->out;
    if (column >= r->n_columns)
        return NULL;
    long feature = r->feature_of[column];
    if (feature >= 0)
        return &t->X[t->n * t->d + (size_t)feature];
    if ((long)column == r->response_column && !r->request->response_as_text)
        return &t->y[t->n];
    return NULL;
}

/*
 * A record of unquoted fields on one line, [text, end) without its line break, split
 * and trimmed as libcsv does. A cell that is a valid number where one is wanted is
 * stored here; any other cell goes through take_field as libcsv's would, so labels,
 * skipped columns and every error are handled, and worded, in one place. The bytes up to
 * `readable` (the line break and the lines after it) may be read, not used.
 */
static void fast_row(table_reader *r, const char *text, const char *end, const char *readable,
                     size_t line)
{
    table *t = r->out;
    r->record_line = line;
    if (t->n == r->capacity && grow(r, t->n + 1) != 0)
        return;
    for (;;) {
        const char *start = text, *stop = NULL;
        while (start < end && blank(r, *start))
            ++start;
        double *slot = number_slot(r, r->field);
        if (slot != NULL) {
            double value = 0.0;
            int nonzero = 0;
            const char *after = decimal_parse_within(start, end, readable, &value, &nonzero);
            while (after != NULL && after < end && blank(r, *after))
                ++after;
            if (after != NULL && (after == end || *after == r->delimiter) &&
                classify(value, nonzero, slot) == NUMBER_OK) {
                r->field++;
                stop = after;
            }
        }
        if (stop == NULL) {
            stop = start;
            while (stop < end && *stop != r->delimiter)
                ++stop;
            const char *last = stop;
            while (last > start && blank(r, last[-1]))
                --last;
            take_field(r, start, (size_t)(last - start), line);
            if (r->failed)
                return;
        }
        if (stop == end)
            break;
        text = stop + 1;
    }
    end_record(r);
}

/* Where the next `byte` is at or after `at`: `*cached` when still ahead, so each byte
   is searched once however often fast_rows stops and resumes. */
static const unsigned char *next_byte(const unsigned char **cached, const unsigned char *at,
                                      const unsigned char *end, int byte)
{
    if (*cached == NULL || *cached < at) {
        const unsigned char *found = memchr(at, byte, (size_t)(end - at));
        *cached = found != NULL ? found : end;
    }
    return *cached;
}

/* Bytes already searched for quotes and CRs, within one table_reader_feed. */
typedef struct scan {
    const unsigned char *quote, *cr;
} scan;

/*
 * Whole lines from `at`, where libcsv is between records, read as records without
 * libcsv when they are plain: no quote, no CR but the one of a CR LF. Returns the start
 * of the first line left to libcsv (not plain, or its LF not among these bytes).
 */
static const unsigned char *fast_rows(table_reader *r, const unsigned char *at,
                                      const unsigned char *end, scan *searched)
{
    while (!r->failed && at < end) {
        const unsigned char *lf = memchr(at, '\n', (size_t)(end - at));
        if (lf == NULL || next_byte(&searched->quote, at, end, '"') < lf)
            return at;
        const unsigned char *stop = lf, *cr = next_byte(&searched->cr, at, end, '\r');
        if (cr < lf) {
            if (cr + 1 != lf)
                return at;
            stop = cr;
        }
        const unsigned char *first = at;
        while (first < stop && blank(r, (char)*first))
            ++first;
        /* libcsv skips a line of nothing but spaces and tabs. */
        if (first < stop)
            fast_row(r, (const char *)at, (const char *)stop, (const char *)end, r->line);
        r->line++;
        at = lf + 1;
    }
    return at;
}

/* A libcsv failure in the middle of the input; `at` is the offending byte. */
static void parse_failed(table_reader *r, const unsigned char *at)
{
    int status = csv_error(&r->parser);
    char shown_byte[16];
    if (status == CSV_EPARSE && *at == '"')
        fail_at(r, r->line, r->field,
                "a stray quote (a field is either quoted as a whole, with the quotes inside "
                "it doubled, or holds no quote)");
    else if (status == CSV_EPARSE)
        fail_at(r, r->line, r->field,
                "'%s' after the closing quote of a quoted field (the quotes inside a quoted "
                "field are doubled)",
                shown(shown_byte, sizeof shown_byte, (const char *)at, 1, 1));
    else
        fail_at(r, r->line, r->field, "%s", csv_strerror(status));
}

/* One piece of input within one physical line. */
static void feed_segment(table_reader *r, const unsigned char *bytes, size_t size)
{
    /* libcsv grows its field buffer by a fixed block; a block as large as the buffer
       makes the growth geometric (a 50 MB field would otherwise be copied some 400000
       times). Pieces are at most SEGMENT bytes, so one block covers a whole piece. */
    size_t buffer = csv_get_buffer_size(&r->parser);
    csv_set_blk_size(&r->parser, buffer > SEGMENT ? buffer : SEGMENT);
    size_t parsed = csv_parse(&r->parser, bytes, size, on_field, on_record, r);
    if (parsed != size && !r->failed)
        parse_failed(r, bytes + parsed);
}

int table_reader_feed(table_reader *r, const void *bytes, size_t size)
{
    const unsigned char *at = bytes, *end = at + size;
    scan searched = {NULL, NULL};
    while (!r->failed && at < end) {
        if (r->after_cr) {
            r->after_cr = 0;
            if (*at != '\n')
                r->line++; /* a lone CR ended the line (an LF would still belong to it) */
        }
        if (r->fast && r->between_records && r->record > 0) {
            at = fast_rows(r, at, end, &searched);
            if (r->failed || at == end)
                break;
        }
        r->between_records = 0; /* until libcsv ends a record again */
        const unsigned char *stop = at;
        size_t limit = (size_t)(end - at) < SEGMENT ? (size_t)(end - at) : SEGMENT;
        while (stop < at + limit && *stop != '\n' && *stop != '\r')
            ++stop;
        int line_end = stop < at + limit;
        size_t length = (size_t)(stop - at) + (size_t)line_end;
        feed_segment(r, at, length);
        if (line_end) {
            if (*stop == '\n')
                r->line++;
            else
                r->after_cr = 1;
        }
        at += length;
    }
    return r->failed ? -1 : 0;
}

static void count_unclosed(void *data, size_t length, void *opaque)
{
    *(size_t *)opaque = count_breaks(data != NULL ? data : "", length);
}

/* End of input: the last field and record, or the quoted field that never closed. */
static void finish(table_reader *r)
{
    if (r->after_cr) {
        r->after_cr = 0;
        r->line++;
    }
    if (csv_fini(&r->parser, on_field, on_record, r) == 0 || r->failed)
        return;
    /* The one way csv_fini fails: a quoted field open at the end. Finishing again
       without the strict end hands over that field, whose line breaks tell where it
       started. */
    size_t breaks = 0, field = r->field;
    csv_set_opts(&r->parser, CSV_STRICT | CSV_APPEND_NULL);
    csv_fini(&r->parser, count_unclosed, NULL, &breaks);
    fail_at(r, r->line - breaks, field, "the quoted field starting there is never closed");
}

table_reader *table_reader_begin(const char *name, const table_request *request, table *out)
{
    memset(out, 0, sizeof *out);
    table_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    if (csv_init(&r->parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        free(r);
        return NULL;
    }
    r->delimiter = request->delimiter ? request->delimiter : ',';
    csv_set_delim(&r->parser, (unsigned char)r->delimiter);
    /* A delimiter that a number may contain would end a number early; a quote or a line
       break as delimiter is libcsv's business. */
    r->fast = strchr("0123456789+-.eE\"\r\n", r->delimiter) == NULL;
    r->request = request;
    r->name = name;
    r->out = out;
    r->line = 1;
    r->response_column = -1;
    return r;
}

int table_reader_end(table_reader *r, char *error, size_t error_size)
{
    table *out = r->out;
    if (!r->failed)
        finish(r);
    csv_free(&r->parser);
    if (!r->failed && r->record == 0)
        fail(r, "the file is empty (no header)");
    if (!r->failed && out->n == 0 && r->discarded == 0)
        fail(r, "no data rows after the header");
    for (size_t c = 0; c < r->n_columns; ++c)
        free(r->header[c]);
    free(r->header);
    free(r->header_lines);
    free(r->feature_of);
    name_index_free(&r->columns);
    int failed = r->failed;
    if (failed) {
        snprintf(error, error_size, "%s", r->error);
        /* The unfinished row's label lies past n. */
        if (out->labels != NULL && r->capacity > out->n) {
            free(out->labels[out->n]);
            out->labels[out->n] = NULL;
        }
        table_free(out);
    }
    free(r);
    return failed ? -1 : 0;
}

int table_reader_header_done(const table_reader *r)
{
    return r != NULL && !r->failed && r->record > 0;
}

void table_reader_discard_rows(table_reader *r)
{
    table *t = r->out;
    if (t->n == 0)
        return;
    r->discarded += t->n;
    /* The row being read (fields > 0) has its values at index n: move them to 0. */
    if (r->field > 0 && r->record > 0) {
        if (t->d > 0)
            memmove(t->X, t->X + t->n * t->d, t->d * sizeof(double));
        if (t->y != NULL)
            t->y[0] = t->y[t->n];
        if (t->labels != NULL) {
            free(t->labels[0]);
            t->labels[0] = t->labels[t->n];
            t->labels[t->n] = NULL;
            t->label_lines[0] = t->label_lines[t->n];
        }
    }
    if (t->labels != NULL)
        for (size_t i = r->field > 0 ? 1 : 0; i < t->n; ++i) {
            free(t->labels[i]);
            t->labels[i] = NULL;
        }
    t->n = 0;
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
    free(t->label_lines);
    if (t->column_names != NULL)
        for (size_t c = 0; c < t->n_columns; ++c)
            free(t->column_names[c]);
    free(t->column_names);
    free(t->row_lines);
    memset(t, 0, sizeof *t);
}

/*
 * Reading with threads (table.h): the header serially, then the rows cut into ranges at
 * line ends, each parsed by a copy of the reader on a thread of its own (the first by
 * the reader itself), then joined in file order. A copy shares the reader's header and
 * column choice, which nobody writes any more, and writes only its own parser and rows;
 * the reader takes their rows once the copy's thread has been joined.
 */

/* Bytes fed to a parser at once, so that a copy sees soon that its rows are not wanted
   (the reader itself takes its range at once). */
enum { RANGE_PIECE = 1 << 20 };

typedef struct range {
    const unsigned char *begin, *end;
    table_reader reader;     /* the copy, reading into `rows` */
    table rows;
    const atomic_int *abandon; /* set when the rows of later ranges are not wanted */
    pthread_t thread;
    int parser_ready;        /* reader.parser holds memory to free */
    int started;             /* the thread runs */
    int usable;              /* read to its end without a quote or a failure */
} range;

/* The end of the line that holds the byte at `at`, or `end`. */
static const unsigned char *line_after(const unsigned char *at, const unsigned char *end)
{
    const unsigned char *lf = at < end ? memchr(at, '\n', (size_t)(end - at)) : NULL;
    return lf != NULL ? lf + 1 : end;
}

static void *read_range(void *argument)
{
    range *g = argument;
    table_reader *r = &g->reader;
    /* A line end may be inside a quoted field whose quote lies in an earlier range: a
       range with a quote is left to the serial read, as is everything after it. */
    if (memchr(g->begin, '"', (size_t)(g->end - g->begin)) != NULL)
        return NULL;
    const unsigned char *at = g->begin;
    while (at < g->end && !r->failed &&
           !atomic_load_explicit(g->abandon, memory_order_relaxed)) {
        const unsigned char *stop = line_after(g->end - at > RANGE_PIECE ? at + RANGE_PIECE
                                                                          : g->end - 1,
                                               g->end);
        table_reader_feed(r, at, (size_t)(stop - at));
        at = stop;
    }
    if (at == g->end && !r->failed) {
        finish(r); /* the last range's last line may have no line end */
        g->usable = !r->failed;
    }
    return NULL;
}

/* A copy of `reader`, whose header is read, for the bytes [begin, end): lines are
   counted from 1 in the range, the reader adds its own count when it takes the rows. */
static int range_begin(range *g, const table_reader *reader)
{
    g->reader = *reader;
    table_reader *r = &g->reader;
    memset(&g->rows, 0, sizeof g->rows);
    g->rows.d = reader->out->d;
    r->out = &g->rows;
    r->capacity = 0;
    r->discarded = 0;
    r->failed = 0;
    r->error[0] = '\0';
    r->field = 0;
    r->line = 1;
    r->after_cr = 0;
    r->between_records = 1;
    if (csv_init(&r->parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return -1;
    g->parser_ready = 1;
    csv_set_delim(&r->parser, (unsigned char)r->delimiter);
    return 0;
}

static void range_free(range *g)
{
    if (g->started)
        pthread_join(g->thread, NULL);
    g->started = 0;
    if (g->parser_ready)
        csv_free(&g->reader.parser);
    g->parser_ready = 0;
    /* The unfinished row's label lies past n. */
    if (g->rows.labels != NULL && g->reader.capacity > g->rows.n)
        free(g->rows.labels[g->rows.n]);
    table_free(&g->rows);
}

/* The rows of a range read whole, after those of the reader: its lines follow the
   reader's. */
static int take_rows(table_reader *r, range *g)
{
    table *t = r->out, *rows = &g->rows;
    size_t n = rows->n, offset = r->line - 1;
    if (n > 0 && t->n + n > r->capacity && grow(r, t->n + n) != 0)
        return -1;
    if (n * t->d > 0)
        memcpy(t->X + t->n * t->d, rows->X, n * t->d * sizeof(double));
    if (rows->y != NULL)
        memcpy(t->y + t->n, rows->y, n * sizeof(double));
    for (size_t i = 0; i < n; ++i)
        t->row_lines[t->n + i] = rows->row_lines[i] + offset;
    for (size_t i = 0; rows->labels != NULL && i < n; ++i) {
        t->labels[t->n + i] = rows->labels[i];
        rows->labels[i] = NULL;
        t->label_lines[t->n + i] = rows->label_lines[i] + offset;
    }
    t->n += n;
    r->line += g->reader.line - 1;
    return 0;
}

/* The header and any blank lines before it, a line at a time; returns where the rows
   start. */
static const unsigned char *read_header(table_reader *r, const unsigned char *at,
                                        const unsigned char *end)
{
    while (at < end && !r->failed && r->record == 0) {
        const unsigned char *stop = line_after(at, end);
        table_reader_feed(r, at, (size_t)(stop - at));
        at = stop;
    }
    return at;
}

/*
 * Where the ranges of [body, end) start: cuts[0] = body, cuts[count] = end, each cut
 * just after an LF, at least `least` bytes apart (but the last). Returns the count.
 */
static size_t cut_ranges(const unsigned char *body, const unsigned char *end, size_t parts,
                         size_t least, const unsigned char **cuts)
{
    size_t size = (size_t)(end - body), count = 0, last = 0;
    if (size / least < parts)
        parts = size / least;
    cuts[0] = body;
    for (size_t k = 1; k < parts; ++k) {
        size_t target = size / parts * k;
        if (target < last + least)
            target = last + least;
        if (target >= size)
            break;
        const unsigned char *cut = line_after(body + target - 1, end);
        if (cut == end)
            break;
        cuts[++count] = cut;
        last = (size_t)(cut - body);
    }
    cuts[++count] = end;
    return count;
}

/*
 * The rows of [body, end) in `count` ranges: the reader reads the first, copies the
 * others on threads; then the reader takes their rows in order, up to the first range
 * that is not usable (a quote, a failure, no thread), from which it reads the rest
 * itself: so a message is the serial read's.
 */
static void read_ranges(table_reader *r, const unsigned char **cuts, size_t count)
{
    range *ranges = calloc(count, sizeof *ranges);
    if (ranges == NULL) {
        table_reader_feed(r, cuts[0], (size_t)(cuts[count] - cuts[0]));
        return;
    }
    atomic_int abandon;
    atomic_init(&abandon, 0);
    for (size_t k = 1; k < count; ++k) {
        range *g = &ranges[k];
        g->begin = cuts[k];
        g->end = cuts[k + 1];
        g->abandon = &abandon;
        g->started = range_begin(g, r) == 0 && pthread_create(&g->thread, NULL, read_range, g) == 0;
    }
    size_t serial_from = count; /* the first range the reader reads itself past its own */
    if (memchr(cuts[0], '"', (size_t)(cuts[1] - cuts[0])) != NULL)
        serial_from = 0;
    else
        table_reader_feed(r, cuts[0], (size_t)(cuts[1] - cuts[0]));
    if (r->failed || serial_from == 0)
        atomic_store(&abandon, 1);
    for (size_t k = 1; k < count; ++k) {
        range *g = &ranges[k];
        if (g->started) {
            pthread_join(g->thread, NULL);
            g->started = 0;
        }
        if (!r->failed && serial_from == count && !(g->usable && take_rows(r, g) == 0)) {
            serial_from = k;
            atomic_store(&abandon, 1);
        }
        range_free(g);
    }
    free(ranges);
    if (!r->failed && serial_from < count)
        table_reader_feed(r, cuts[serial_from], (size_t)(cuts[count] - cuts[serial_from]));
}

/* table_reader_feed of a whole input, with threads when the request asks for them. */
static void feed_all(table_reader *r, const unsigned char *bytes, size_t size)
{
    const table_request *request = r->request;
    const unsigned char *end = bytes + size;
    if (request->threads <= 1) {
        table_reader_feed(r, bytes, size);
        return;
    }
    const unsigned char *body = read_header(r, bytes, end);
    /* Cut only where the serial read is between records: after an LF that ends the
       header's line or a later one, with no quote before it. An LF or CR delimiter
       would not end records. */
    size_t count = 0;
    const unsigned char *cuts[1025];
    if (!r->failed && r->record > 0 && r->field == 0 && r->delimiter != '\n' &&
        r->delimiter != '\r' && memchr(bytes, '"', (size_t)(body - bytes)) == NULL)
        count = cut_ranges(body, end, request->threads < 1024 ? (size_t)request->threads : 1024,
                           request->thread_bytes > 0 ? request->thread_bytes : 1u << 20, cuts);
    if (count >= 2)
        read_ranges(r, cuts, count);
    else if (!r->failed && body < end)
        table_reader_feed(r, body, (size_t)(end - body));
}

int table_read_buffer(const void *bytes, size_t size, const char *name,
                      const table_request *request, table *out, char *error,
                      size_t error_size)
{
    table_reader *r = table_reader_begin(name, request, out);
    if (r == NULL) {
        snprintf(error, error_size, "%s: out of memory", name);
        return -1;
    }
    feed_all(r, bytes, size);
    return table_reader_end(r, error, error_size);
}

int table_read_stream(FILE *file, const char *name, const table_request *request, table *out,
                      char *error, size_t error_size)
{
    table_reader *r = table_reader_begin(name, request, out);
    if (r == NULL) {
        snprintf(error, error_size, "%s: out of memory", name);
        return -1;
    }
    unsigned char buffer[1 << 16];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, file)) > 0)
        if (table_reader_feed(r, buffer, got) != 0)
            break;
    if (!r->failed && ferror(file))
        fail(r, "read error: %s", strerror(errno));
    return table_reader_end(r, error, error_size);
}

/* A regular file of `file` mapped whole for a read with threads: 0, or -1 (read it as a
   stream: not a regular file, empty, or not mapped). */
static int read_mapped(FILE *file, const char *name, const table_request *request, table *out,
                       char *error, size_t error_size, int *status)
{
    struct stat about;
    int descriptor = fileno(file);
    if (descriptor < 0 || fstat(descriptor, &about) != 0 || !S_ISREG(about.st_mode) ||
        about.st_size <= 0 || (uintmax_t)about.st_size > SIZE_MAX)
        return -1;
    size_t size = (size_t)about.st_size;
    void *bytes = mmap(NULL, size, PROT_READ, MAP_PRIVATE, descriptor, 0);
    if (bytes == MAP_FAILED)
        return -1;
    *status = table_read_buffer(bytes, size, name, request, out, error, error_size);
    munmap(bytes, size);
    return 0;
}

int table_read(const char *path, const table_request *request, table *out, char *error,
               size_t error_size)
{
    memset(out, 0, sizeof *out);
    int from_stdin = strcmp(path, "-") == 0;
    FILE *file = from_stdin ? stdin : fopen(path, "rb");
    if (file == NULL) {
        snprintf(error, error_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int status = 0;
    if (from_stdin || request->threads <= 1 ||
        read_mapped(file, path, request, out, error, error_size, &status) != 0)
        status = table_read_stream(file, path, request, out, error, error_size);
    if (!from_stdin)
        fclose(file);
    return status;
}
