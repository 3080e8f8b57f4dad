/*
 * The moe tool's CSV reader (programs/table.c): its fast path for plain lines (unquoted
 * fields, LF or CR LF) against libcsv's path, which it leaves everything else to.
 *
 * A line reaches the fast path only when its line break is within the bytes fed at
 * once; fed one byte at a time, every record goes through libcsv. So reading a buffer
 * whole and byte by byte compares the two paths on any input, errors included. Quoting
 * every cell compares them too, on files that mean the same table.
 *
 * Reading with threads cuts the rows into ranges parsed at once: with ranges of a few
 * bytes, the same inputs compare it to the serial read, tables and messages.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, unlink */

#include "table.h"

#include "support/runner.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t random_state;

static uint64_t next_random(void)
{
    uint64_t z = (random_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static unsigned below(unsigned bound)
{
    return (unsigned)(next_random() % bound);
}

/* A growing text. */
typedef struct text {
    char *bytes;
    size_t size, capacity;
} text;

static void append(text *t, const char *bytes, size_t size)
{
    if (t->size + size + 1 > t->capacity) {
        t->capacity = 2 * (t->size + size + 1);
        t->bytes = realloc(t->bytes, t->capacity);
        ck_assert_ptr_nonnull(t->bytes);
    }
    memcpy(t->bytes + t->size, bytes, size);
    t->size += size;
    t->bytes[t->size] = '\0';
}

static void append_string(text *t, const char *string)
{
    append(t, string, strlen(string));
}

/* What a read gave: the status and the table, or the message. */
typedef struct outcome {
    int status;
    table data;
    char error[1024];
} outcome;

enum { WHOLE = 0, BYTE_BY_BYTE = 1, RANDOM_PIECES = 2 };

static void read_as(const text *input, const table_request *request, int how, outcome *out)
{
    memset(out, 0, sizeof *out);
    if (how == WHOLE) {
        out->status = table_read_buffer(input->bytes, input->size, "t.csv", request, &out->data,
                                        out->error, sizeof out->error);
        return;
    }
    table_reader *reader = table_reader_begin("t.csv", request, &out->data);
    ck_assert_ptr_nonnull(reader);
    size_t at = 0;
    while (at < input->size) {
        size_t piece = how == BYTE_BY_BYTE ? 1 : 1 + below(200);
        if (piece > input->size - at)
            piece = input->size - at;
        table_reader_feed(reader, input->bytes + at, piece);
        at += piece;
    }
    out->status = table_reader_end(reader, out->error, sizeof out->error);
}

/* table_read_buffer with `threads` threads and ranges of at least `least` bytes. */
static void read_threaded(const text *input, const table_request *request, int threads,
                          size_t least, outcome *out)
{
    table_request threaded = *request;
    threaded.threads = threads;
    threaded.thread_bytes = least;
    memset(out, 0, sizeof *out);
    out->status = table_read_buffer(input->bytes, input->size, "t.csv", &threaded, &out->data,
                                    out->error, sizeof out->error);
}

static int same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Both reads gave the same table, bit for bit, or the same message. */
static void expect_same(const outcome *a, const outcome *b, const text *input)
{
    if (a->status != b->status || strcmp(a->error, b->error) != 0)
        ck_abort_msg("on '%.300s':\n  %d '%s'\n  %d '%s'", input->bytes, a->status, a->error,
                     b->status, b->error);
    if (a->status != 0)
        return;
    const table *x = &a->data, *y = &b->data;
    ck_assert_uint_eq(x->n, y->n);
    ck_assert_uint_eq(x->d, y->d);
    ck_assert(same_text(x->response_name, y->response_name));
    ck_assert_uint_eq(x->n_columns, y->n_columns);
    for (size_t c = 0; c < x->n_columns; ++c)
        ck_assert_str_eq(x->column_names[c], y->column_names[c]);
    for (size_t j = 0; j < x->d; ++j)
        ck_assert_str_eq(x->feature_names[j], y->feature_names[j]);
    if (x->n * x->d > 0 && memcmp(x->X, y->X, x->n * x->d * sizeof(double)) != 0)
        ck_abort_msg("features differ on '%.300s'", input->bytes);
    ck_assert((x->y == NULL) == (y->y == NULL));
    if (x->y != NULL && memcmp(x->y, y->y, x->n * sizeof(double)) != 0)
        ck_abort_msg("responses differ on '%.300s'", input->bytes);
    for (size_t i = 0; i < x->n; ++i)
        ck_assert_uint_eq(x->row_lines[i], y->row_lines[i]);
    ck_assert((x->labels == NULL) == (y->labels == NULL));
    for (size_t i = 0; x->labels != NULL && i < x->n; ++i) {
        ck_assert_str_eq(x->labels[i], y->labels[i]);
        ck_assert_uint_eq(x->label_lines[i], y->label_lines[i]);
    }
}

static void free_outcome(outcome *o)
{
    if (o->status == 0)
        table_free(&o->data);
}

/* A number as data files write them. */
static void random_number(char *cell, size_t size)
{
    double value = ldexp((double)(next_random() >> 11), -53) * 2 - 1;
    value *= pow(10.0, (int)below(21) - 10);
    switch (below(7)) {
    case 0:
        snprintf(cell, size, "%.17g", value);
        break;
    case 1:
        snprintf(cell, size, "%.3f", value);
        break;
    case 2:
        snprintf(cell, size, "%.6e", value);
        break;
    case 3:
        snprintf(cell, size, "%d", (int)below(2000) - 1000);
        break;
    case 4:
        snprintf(cell, size, "%+.12f", value);
        break;
    case 5:
        snprintf(cell, size, "%.25g", value);
        break;
    default:
        snprintf(cell, size, "%.15g", value);
        break;
    }
}

/* A table of random numbers (and a label column), written twice: plain, and with
   every cell quoted, which libcsv reads. */
static void write_tables(text *plain, text *quoted, size_t rows, const char *line_end,
                         int spaces)
{
    static const char *header[] = {"x1", "x2", "x3", "x4", "x5", "y", "class"};
    static const char *classes[] = {"setosa", "versicolor", "virginica", "a b"};
    enum { COLUMNS = sizeof header / sizeof *header };
    for (size_t c = 0; c < COLUMNS; ++c) {
        append_string(plain, header[c]);
        append_string(quoted, header[c]);
        append_string(plain, c + 1 < COLUMNS ? "," : line_end);
        append_string(quoted, c + 1 < COLUMNS ? "," : line_end);
    }
    for (size_t i = 0; i < rows; ++i)
        for (size_t c = 0; c < COLUMNS; ++c) {
            char cell[64];
            if (c + 1 < COLUMNS)
                random_number(cell, sizeof cell);
            else
                snprintf(cell, sizeof cell, "%s", classes[below(4)]);
            /* Spaces around an unquoted cell are dropped; inside quotes they are kept,
               and a number may have them. */
            const char *before = spaces && c + 1 < COLUMNS && below(4) == 0 ? " \t" : "";
            const char *after = spaces && c + 1 < COLUMNS && below(4) == 0 ? "  " : "";
            append_string(plain, before);
            append_string(plain, cell);
            append_string(plain, after);
            append_string(quoted, "\"");
            append_string(quoted, before);
            append_string(quoted, cell);
            append_string(quoted, after);
            append_string(quoted, "\"");
            const char *next = c + 1 < COLUMNS ? "," : line_end;
            append_string(plain, next);
            append_string(quoted, next);
        }
}

START_TEST(quoted_and_plain_files_give_one_table)
{
    random_state = 11;
    static const char *class_features[] = {"x1", "x2", "x3", "x4", "x5"};
    const table_request requests[] = {
        {"y", 0, class_features, 5, ',', 1, 0, 0},
        {"class", 1, class_features, 5, ',', 1, 0, 0},
        {"y", 0, NULL, 0, ',', 0, 0, 0}, /* the label column is then a feature: an error */
    };
    static const char *line_ends[] = {"\n", "\r\n"};
    for (int round = 0; round < 8; ++round) {
        text plain = {0}, quoted = {0};
        write_tables(&plain, &quoted, 300 + below(3000), line_ends[round % 2], round >= 4);
        for (size_t k = 0; k < sizeof requests / sizeof *requests; ++k) {
            outcome fast, slow, pieces, bytes;
            read_as(&plain, &requests[k], WHOLE, &fast);
            read_as(&quoted, &requests[k], WHOLE, &slow);
            read_as(&plain, &requests[k], RANDOM_PIECES, &pieces);
            read_as(&plain, &requests[k], BYTE_BY_BYTE, &bytes);
            ck_assert_int_eq(fast.status, k < 2 ? 0 : -1);
            expect_same(&fast, &slow, &plain);
            expect_same(&fast, &pieces, &plain);
            expect_same(&fast, &bytes, &plain);
            free_outcome(&fast);
            free_outcome(&slow);
            free_outcome(&pieces);
            free_outcome(&bytes);
        }
        free(plain.bytes);
        free(quoted.bytes);
    }
}
END_TEST

/* Cells, separators and line ends of all kinds, valid or not. */
static void random_input(text *input, char delimiter)
{
    /* "\xef\xbb\xbf\x31" is a byte-order mark, then 1. */
    static const char *cells[] = {
        "1", "-2.5", "1e400", "-1e-400", "0", ".5", "7.", "abc", "NA", "NaN", "", " 3 ",
        "\t4\t", "1e", "0x10", "+1.5e-3", "1.5.2", "2 3", "a", "b b", "\"q\"", "\"4\"",
        "\"x\"\"y\"", "\"1,2\"", "\"line\nbreak\"", "\" 5 \"", "x\"y", "\"open", "1\r2",
        "9007199254740993", "2.2250738585072011e-308", "1e-310", "\xef\xbb\xbf\x31", "\xff",
        "1 ", "  ", "\t", "-0", "1e23", "123456789012345678901234567890"};
    static const char *line_ends[] = {"\n", "\n", "\n", "\r\n", "\r\n", "\r", "\n\n",
                                      "\n  \n", "\r\n\r\n", "\n\t\n", " \n"};
    char separator[2] = {delimiter, '\0'};
    append_string(input, "a");
    append_string(input, separator);
    append_string(input, "b");
    if (below(8) != 0) { /* without it, a missing response */
        append_string(input, separator);
        append_string(input, "y");
    }
    append_string(input, "\n");
    size_t rows = below(8);
    for (size_t i = 0; i < rows; ++i) {
        size_t fields = below(6) == 0 ? 1 + below(5) : 3;
        for (size_t f = 0; f < fields; ++f) {
            /* Mostly numbers, so that rows get far enough to meet the odd cell. */
            if (below(3) == 0)
                append_string(input, cells[below(sizeof cells / sizeof *cells)]);
            else {
                char cell[64];
                random_number(cell, sizeof cell);
                append_string(input, cell);
            }
            if (below(40) == 0)
                append(input, "\0", 1);
            if (f + 1 < fields)
                append_string(input, separator);
        }
        if (i + 1 < rows || below(3) != 0)
            append_string(input, line_ends[below(sizeof line_ends / sizeof *line_ends)]);
    }
}

START_TEST(both_paths_agree_on_random_input)
{
    random_state = 99;
    static const char *two_features[] = {"a", "b"};
    const table_request requests[] = {
        {"y", 0, NULL, 0, ',', 1, 0, 0},   {"y", 1, NULL, 0, ',', 1, 0, 0},
        {NULL, 0, NULL, 0, ';', 1, 0, 0},  {"y", 0, two_features, 2, '\t', 0, 0, 0},
        {"y", 1, two_features, 2, ' ', 0, 0, 0},
    };
    for (int round = 0; round < 20000; ++round) {
        const table_request *request = &requests[below(sizeof requests / sizeof *requests)];
        text input = {0};
        random_input(&input, request->delimiter);
        outcome whole, bytes, threaded;
        read_as(&input, request, WHOLE, &whole);
        read_as(&input, request, BYTE_BY_BYTE, &bytes);
        expect_same(&whole, &bytes, &input);
        read_threaded(&input, request, 2 + (int)below(6), 1 + below(24), &threaded);
        expect_same(&whole, &threaded, &input);
        free_outcome(&whole);
        free_outcome(&bytes);
        free_outcome(&threaded);
        free(input.bytes);
    }
}
END_TEST

/* The message for `input` (NULL if it reads), the same read whole, byte by byte, and
   in random pieces. */
static void expect_message(const char *input, const char *message)
{
    const table_request request = {"y", 0, NULL, 0, ',', 1, 0, 0};
    text bytes = {0};
    append_string(&bytes, input);
    outcome whole, single, pieces;
    read_as(&bytes, &request, WHOLE, &whole);
    read_as(&bytes, &request, BYTE_BY_BYTE, &single);
    read_as(&bytes, &request, RANDOM_PIECES, &pieces);
    if (message == NULL)
        ck_assert_msg(whole.status == 0, "'%s' fails: %s", input, whole.error);
    else {
        ck_assert_msg(whole.status != 0, "'%s' reads", input);
        ck_assert_str_eq(whole.error, message);
    }
    expect_same(&whole, &single, &bytes);
    expect_same(&whole, &pieces, &bytes);
    for (size_t least = 1; least <= 8; least *= 2) {
        outcome threaded;
        read_threaded(&bytes, &request, least == 8 ? 64 : 3, least, &threaded);
        expect_same(&whole, &threaded, &bytes);
        free_outcome(&threaded);
    }
    free_outcome(&whole);
    free_outcome(&single);
    free_outcome(&pieces);
    free(bytes.bytes);
}

START_TEST(errors_name_the_line_and_column)
{
    random_state = 5;
    expect_message("a,b,y\n1,2,3\n4,x5,6\n", "t.csv: line 3, column 'b': 'x5' is not a finite "
                                             "decimal number");
    expect_message("a,b,y\r\n1,2,3\r\n4,5,6\r\n7,8,1.5.2\r\n",
                   "t.csv: line 4, column 'y': '1.5.2' is not a finite decimal number");
    expect_message("a,b,y\n1,2,3\n\n   \n4, 1e ,6\n",
                   "t.csv: line 5, column 'b': '1e' is not a finite decimal number");
    expect_message("a,b,y\n1,,3\n", "t.csv: line 2, column 'b': the value is missing");
    expect_message("a,b,y\n1,2,NA\n", "t.csv: line 2, column 'y': the value is missing");
    expect_message("a,b,y\n1, NaN ,3\n", "t.csv: line 2, column 'b': the value is missing");
    expect_message("a,b,y\n1,2,3\n-1e999,2,3\n",
                   "t.csv: line 3, column 'a': '-1e999' overflows (beyond 1.79769e+308 in "
                   "magnitude)");
    expect_message("a,b,y\n1,2,3\n1,2e-310,3\n",
                   "t.csv: line 3, column 'b': '2e-310' underflows (not zero, but below "
                   "2.22507e-308 in magnitude)");
    expect_message("a,b,y\n1,2,3\n1,2\n", "t.csv: line 3 has 2 fields, the header has 3");
    expect_message("a,b,y\n1,2,3,4\n", "t.csv: line 2 has 4 fields, the header has 3");
    expect_message("a,b,y\n1,abc,3,4\n",
                   "t.csv: line 2, column 'b': 'abc' is not a finite decimal number");
    expect_message("a,b,y\n1,0x10,3\n",
                   "t.csv: line 2, column 'b': '0x10' is not a finite decimal number");
    expect_message("a,b,y\n1,inf,3\n",
                   "t.csv: line 2, column 'b': 'inf' is not a finite decimal number");
    /* A line the fast path leaves to libcsv (a quote) between plain ones. */
    expect_message("a,b,y\n1,2,3\n\"4\",5,6\n7,8,x\n",
                   "t.csv: line 4, column 'y': 'x' is not a finite decimal number");
    expect_message("a,b,y\n1,2,3\n\"4\n\",5,6\n7,8,x\n",
                   "t.csv: line 3, column 'a': '4\\x0a' is not a finite decimal number");
    expect_message("a,b,y\n1,2,3\r4,5,x\n",
                   "t.csv: line 3, column 'y': 'x' is not a finite decimal number");
    expect_message("a,b,y\n1,2,3\n4,5 6,7\n",
                   "t.csv: line 3, column 'b': '5 6' is not a finite decimal number");
    expect_message("a,b,y\n1,2,3\n4,5x\"\",7\n",
                   "t.csv: line 3, column 'b': a stray quote (a field is either quoted as a "
                   "whole, with the quotes inside it doubled, or holds no quote)");
    expect_message("a,b,y\n1,2,3\n4,5,6", NULL);
    expect_message("a,b,y\n 1 ,\t2\t, +3.5e-1 \n\n", NULL);
    expect_message("a,b,y\n", "t.csv: no data rows after the header");

    text nul = {0};
    append(&nul, "a,b,y\n1,2\0,3\n", 13);
    const table_request request = {"y", 0, NULL, 0, ',', 1, 0, 0};
    outcome whole, single;
    read_as(&nul, &request, WHOLE, &whole);
    read_as(&nul, &request, BYTE_BY_BYTE, &single);
    ck_assert_str_eq(whole.error, "t.csv: line 2, column 'b': the cell '2\\x00' contains a NUL "
                                  "byte");
    expect_same(&whole, &single, &nul);
    free(nul.bytes);
}
END_TEST

START_TEST(values_and_lines_of_a_plain_file)
{
    static const char input[] = "a;b;y\r\n"
                                "1;2.5;-3e2\r\n"
                                "\r\n"
                                " 9007199254740993 ;\t0.1;1e23\r\n";
    const table_request request = {"y", 0, NULL, 0, ';', 1, 0, 0};
    table t;
    char error[256];
    ck_assert_int_eq(table_read_buffer(input, sizeof input - 1, "t.csv", &request, &t, error,
                                       sizeof error),
                     0);
    ck_assert_uint_eq(t.n, 2);
    ck_assert_uint_eq(t.d, 2);
    ck_assert(t.X[0] == 1.0 && t.X[1] == 2.5 && t.y[0] == -300.0);
    ck_assert(t.X[2] == 9007199254740992.0 && t.X[3] == 0.1 && t.y[1] == 1e23);
    table_free(&t);

    /* Labels keep their line, plain or quoted. */
    static const char labels[] = "a,y\n1,setosa\n\n2,\"virginica\"\n3,  a b  \n";
    const table_request by_label = {"y", 1, NULL, 0, ',', 1, 0, 0};
    ck_assert_int_eq(table_read_buffer(labels, sizeof labels - 1, "t.csv", &by_label, &t, error,
                                       sizeof error),
                     0);
    ck_assert_uint_eq(t.n, 3);
    ck_assert_str_eq(t.labels[0], "setosa");
    ck_assert_str_eq(t.labels[1], "virginica");
    ck_assert_str_eq(t.labels[2], "a b");
    ck_assert_uint_eq(t.label_lines[0], 2);
    ck_assert_uint_eq(t.label_lines[1], 4);
    ck_assert_uint_eq(t.label_lines[2], 5);
    table_free(&t);

    /* A delimiter that numbers contain: libcsv's splitting, not a number's end. */
    static const char dotted[] = "a.b\n1.5\n";
    const table_request by_dot = {NULL, 0, NULL, 0, '.', 1, 0, 0};
    ck_assert_int_eq(table_read_buffer(dotted, sizeof dotted - 1, "t.csv", &by_dot, &t, error,
                                       sizeof error),
                     0);
    ck_assert(t.n == 1 && t.d == 2 && t.X[0] == 1.0 && t.X[1] == 5.0);
    table_free(&t);
}
END_TEST

/* The serial read whole and reads with 2, 3, 4 and 7 threads of ranges of at least
   `least` bytes: the same table or the same message; returns the serial message. */
static void expect_threads_agree(const text *input, const table_request *request, size_t least,
                                 char *message, size_t size)
{
    outcome serial;
    read_as(input, request, WHOLE, &serial);
    static const int counts[] = {2, 3, 4, 7};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; ++c) {
        outcome threaded;
        read_threaded(input, request, counts[c], least, &threaded);
        expect_same(&serial, &threaded, input);
        free_outcome(&threaded);
    }
    if (message != NULL)
        snprintf(message, size, "%s", serial.error);
    free_outcome(&serial);
}

/* Rows of numbers and a label, each line ending in one of `ends`. */
static void write_rows(text *t, size_t rows, const char *const *ends, size_t n_ends)
{
    append_string(t, "x1,x2,y,class\n");
    for (size_t i = 0; i < rows; ++i) {
        for (int c = 0; c < 3; ++c) {
            char cell[64];
            random_number(cell, sizeof cell);
            append_string(t, cell);
            append_string(t, ",");
        }
        append_string(t, below(2) ? "one" : "two");
        append_string(t, ends[below((unsigned)n_ends)]);
    }
}

/* `input` with `replacement` in place of the cell (0-based) `column` of data row `row`. */
static void replace_cell(text *input, size_t row, size_t column, const char *replacement)
{
    size_t start = 0;
    for (size_t line = 0; line < row + 1; ++line)
        start += strcspn(input->bytes + start, "\n") + 1;
    for (size_t c = 0; c < column; ++c)
        start += strcspn(input->bytes + start, ",") + 1;
    ck_assert_uint_lt(start, input->size);
    text out = {0};
    append(&out, input->bytes, start);
    append_string(&out, replacement);
    /* the files here hold no NUL */
    append_string(&out, input->bytes + start + strcspn(input->bytes + start, ",\r\n"));
    free(input->bytes);
    *input = out;
}

START_TEST(threads_read_the_serial_table)
{
    random_state = 17;
    static const char *features[] = {"x1", "x2"};
    const table_request requests[] = {
        {"y", 0, features, 2, ',', 1, 0, 0},
        {"class", 1, NULL, 0, ',', 1, 0, 0},
        {"y", 0, NULL, 0, ',', 0, 0, 0}, /* the label column is then a feature: an error */
    };
    static const char *lf[] = {"\n"}, *crlf[] = {"\r\n"};
    static const char *mixed[] = {"\n", "\r\n", "\r", "\n\n", "\r\n  \r\n", "\n\t\n"};
    for (int shape = 0; shape < 12; ++shape) {
        text input = {0};
        /* A size that is a multiple of nothing in particular. */
        size_t rows = 1500 + below(700);
        if (shape % 3 == 0)
            write_rows(&input, rows, lf, 1);
        else if (shape % 3 == 1)
            write_rows(&input, rows, crlf, 1);
        else
            write_rows(&input, rows, mixed, sizeof mixed / sizeof *mixed);
        if (shape / 3 == 1) { /* the last line without its line end */
            while (input.size > 0 && (input.bytes[input.size - 1] == '\n' ||
                                      input.bytes[input.size - 1] == '\r' ||
                                      input.bytes[input.size - 1] == ' ' ||
                                      input.bytes[input.size - 1] == '\t'))
                input.bytes[--input.size] = '\0';
        } else if (shape / 3 == 2) {
            append_string(&input, "\n\n   \n\r\n"); /* blank lines at the end */
        } else if (shape / 3 == 3) {
            /* A quoted cell late in the file: the ranges from its own are read serially. */
            replace_cell(&input, rows / 2 + below((unsigned)rows / 4), 3, "\"two\"");
        }
        for (size_t q = 0; q < sizeof requests / sizeof *requests; ++q)
            expect_threads_agree(&input, &requests[q], 1000 + below(3000), NULL, 0);
        free(input.bytes);
    }

    /* Every cell quoted: read serially, the same table. */
    text plain = {0}, quoted = {0};
    write_tables(&plain, &quoted, 2000, "\r\n", 1);
    for (size_t q = 0; q < sizeof requests / sizeof *requests; ++q) {
        expect_threads_agree(&plain, &requests[q], 4096, NULL, 0);
        expect_threads_agree(&quoted, &requests[q], 4096, NULL, 0);
    }
    free(plain.bytes);
    free(quoted.bytes);
}
END_TEST

START_TEST(threads_give_the_serial_message)
{
    random_state = 23;
    static const char *features[] = {"x1", "x2"};
    const table_request request = {"y", 0, features, 2, ',', 1, 0, 0};
    static const char *lf[] = {"\n"}, *crlf[] = {"\r\n"};
    static const struct {
        size_t row, column;
        const char *cell, *message;
    } bad[] = {
        {1700, 1, "x5", "t.csv: line 1702, column 'x2': 'x5' is not a finite decimal number"},
        {1999, 2, "", "t.csv: line 2001, column 'y': the value is missing"},
        {1500, 2, "1,2", "t.csv: line 1502 has 5 fields, the header has 4"},
        {1234, 0, "1e999", "t.csv: line 1236, column 'x1': '1e999' overflows (beyond "
                           "1.79769e+308 in magnitude)"},
        {10, 1, "NA", "t.csv: line 12, column 'x2': the value is missing"},
    };
    char message[1024];
    for (size_t b = 0; b < sizeof bad / sizeof *bad; ++b)
        for (int ends = 0; ends < 2; ++ends) {
            text input = {0};
            write_rows(&input, 2000, ends ? crlf : lf, 1);
            replace_cell(&input, bad[b].row, bad[b].column, bad[b].cell);
            expect_threads_agree(&input, &request, 2000, message, sizeof message);
            ck_assert_str_eq(message, bad[b].message);
            /* A second bad cell later: the first one's message still. */
            if (bad[b].row < 1999) {
                replace_cell(&input, bad[b].row + 1 + below((unsigned)(1999 - bad[b].row)), 0,
                             "?");
                expect_threads_agree(&input, &request, 2000, message, sizeof message);
                ck_assert_str_eq(message, bad[b].message);
            }
            /* A row too short in the last line, which has no line end. */
            free(input.bytes);
            input = (text){0};
            write_rows(&input, 2000, ends ? crlf : lf, 1);
            append_string(&input, "1,2");
            expect_threads_agree(&input, &request, 2000, message, sizeof message);
            ck_assert_str_eq(message, "t.csv: line 2002 has 2 fields, the header has 4");
            free(input.bytes);
        }

    /* A quote in one range, a bad cell in a later one. */
    text input = {0};
    write_rows(&input, 2000, lf, 1);
    replace_cell(&input, 600, 3, "\"t\nwo\"");
    replace_cell(&input, 1800, 0, "z");
    expect_threads_agree(&input, &request, 2000, message, sizeof message);
    ck_assert_str_eq(message, "t.csv: line 1802, column 'x1': 'z' is not a finite decimal number");
    free(input.bytes);
}
END_TEST

/* table_read of a file maps it for threads: the table of the serial read. */
START_TEST(threads_read_a_file)
{
    random_state = 29;
    static const char *mixed[] = {"\n", "\r\n", "\n\n"};
    text input = {0};
    write_rows(&input, 30000, mixed, 3);
    char path[] = "/tmp/test_table_reader_XXXXXX";
    int descriptor = mkstemp(path);
    ck_assert_int_ge(descriptor, 0);
    FILE *file = fdopen(descriptor, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(input.bytes, 1, input.size, file), input.size);
    ck_assert_int_eq(fclose(file), 0);
    table_request request = {"class", 1, NULL, 0, ',', 1, 0, 0};
    outcome serial, threaded;
    memset(&serial, 0, sizeof serial);
    memset(&threaded, 0, sizeof threaded);
    serial.status = table_read(path, &request, &serial.data, serial.error, sizeof serial.error);
    request.threads = 3;
    request.thread_bytes = 100000;
    threaded.status =
        table_read(path, &request, &threaded.data, threaded.error, sizeof threaded.error);
    unlink(path);
    ck_assert_int_eq(serial.status, 0);
    ck_assert_uint_eq(serial.data.n, 30000);
    expect_same(&serial, &threaded, &input);
    free_outcome(&serial);
    free_outcome(&threaded);
    free(input.bytes);
}
END_TEST

/* The rules of table_parse_number before the fast parser (decimal notation checked,
   then strtod), kept here to hold the new one to them. */
static const char *old_decimal_end(const char *text, int *nonzero)
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

static int old_parse_number(const char *text, double *value)
{
    while (*text == ' ' || *text == '\t')
        ++text;
    int nonzero = 0;
    const char *end = old_decimal_end(text, &nonzero);
    while (end != NULL && (*end == ' ' || *end == '\t'))
        ++end;
    if (end == NULL || *end != '\0')
        return NUMBER_NOT_DECIMAL;
    double parsed = strtod(text, NULL); /* the test runs in the C locale */
    if (!isfinite(parsed))
        return NUMBER_OVERFLOW;
    if (nonzero && fabs(parsed) < DBL_MIN)
        return NUMBER_UNDERFLOW;
    *value = parsed;
    return NUMBER_OK;
}

START_TEST(parse_number_keeps_its_rules)
{
    random_state = 3;
    static const char alphabet[] = "0123456789000999+-.eE \txn";
    char cell[40];
    for (int round = 0; round < 1000000; ++round) {
        size_t length = below(16);
        for (size_t i = 0; i < length; ++i)
            cell[i] = alphabet[below(sizeof alphabet - 1)];
        if (below(4) == 0 && length < 30)
            length += (size_t)sprintf(cell + length, "e%d", (int)below(700) - 350);
        cell[length] = '\0';
        double got = 0.0, expected = 0.0;
        int status = table_parse_number(cell, &got), old = old_parse_number(cell, &expected);
        if (status != old || memcmp(&got, &expected, sizeof got) != 0)
            ck_abort_msg("'%s': %d %a, before %d %a", cell, status, got, old, expected);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("table_reader");
    TCase *cases = tcase_create("table_reader");
    tcase_set_timeout(cases, 300); /* sanitized builds are several times slower */
    tcase_add_test(cases, quoted_and_plain_files_give_one_table);
    tcase_add_test(cases, both_paths_agree_on_random_input);
    tcase_add_test(cases, errors_name_the_line_and_column);
    tcase_add_test(cases, values_and_lines_of_a_plain_file);
    tcase_add_test(cases, parse_number_keeps_its_rules);
    tcase_add_test(cases, threads_read_the_serial_table);
    tcase_add_test(cases, threads_give_the_serial_message);
    tcase_add_test(cases, threads_read_a_file);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
