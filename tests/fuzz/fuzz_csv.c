/*
 * Fuzz harness of the moe tool's CSV reader (programs/table.c): the input is a CSV
 * file, read with several requests (response numeric or as class labels, all columns
 * or two named ones, three delimiters), once whole and once in small pieces.
 * Invariants checked beyond "no crash, no sanitizer report":
 *   - a failure leaves an empty table and a message "fuzz.csv: ..." whose line, when it
 *     names one, exists in the input;
 *   - a success has 1 <= rows < lines of input, the requested columns, names and labels
 *     that are not empty (with check_names 1 to MOE_NAME_MAX bytes of UTF-8), finite
 *     numbers that are zero or normal, and label lines in order within the input;
 *   - reading in pieces gives exactly the same table or the same message;
 *   - so does reading with threads, in ranges of a few bytes (one request per input, so
 *     that creating threads does not slow the fuzzing down much).
 */
#include "table.h"
#include "utf8.h"

#include <moe/model.h> /* MOE_NAME_MAX */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *two_features[] = {"a", "b"};

static const table_request requests[] = {
    {"y", 0, NULL, 0, ',', 1, 0, 0},
    {"y", 1, NULL, 0, ',', 1, 0, 0},
    {NULL, 0, NULL, 0, ';', 1, 0, 0},
    {"y", 0, two_features, 2, ',', 0, 0, 0},
    {"y", 1, two_features, 2, '\t', 0, 0, 0},
};

static const char file_name[] = "fuzz.csv";

static void check(int condition, const char *invariant)
{
    if (!condition) {
        fprintf(stderr, "fuzz_csv: broken invariant: %s\n", invariant);
        abort();
    }
}

/* An empty label is a missing value and the requests here never choose an unnamed
   column; with check_names names and labels are model names. */
static void check_name(const char *name, const table_request *request)
{
    size_t length = strlen(name);
    check(length >= 1, "a name or label is not empty");
    if (request->check_names) {
        check(length <= MOE_NAME_MAX, "a model name takes at most MOE_NAME_MAX bytes");
        check(utf8_invalid_offset(name, length) == length, "a model name is UTF-8");
    }
}

/* Lines of the input as the reader counts them: LF, CR LF and a lone CR end one. */
static size_t count_lines(const uint8_t *data, size_t size)
{
    size_t lines = 1;
    for (size_t i = 0; i < size; ++i)
        if (data[i] == '\n' || (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n')))
            ++lines;
    return lines;
}

static void check_failure(const table *t, const char *error, size_t lines)
{
    size_t prefix = strlen(file_name);
    check(strncmp(error, file_name, prefix) == 0 && strncmp(error + prefix, ": ", 2) == 0 &&
              error[prefix + 2] != '\0',
          "a failure has a message naming the file");
    check(t->n == 0 && t->d == 0 && t->X == NULL && t->y == NULL && t->labels == NULL &&
              t->label_lines == NULL && t->feature_names == NULL && t->response_name == NULL,
          "a failure leaves an empty table");
    /* The reader names the line first ("FILE: line N..."); text after it may quote the
       header, whose names can hold ": line " themselves. */
    const char *line = strncmp(error + prefix, ": line ", 7) == 0 ? error + prefix : NULL;
    if (line != NULL) {
        unsigned long number = strtoul(line + 7, NULL, 10);
        check(number >= 1 && number <= lines, "a message names a line of the input");
    }
}

static void check_success(const table *t, const table_request *request, size_t lines)
{
    check(t->n >= 1 && t->n < lines, "rows: at least one, fewer than the lines");
    if (request->features != NULL) {
        check(t->d == request->n_features, "as many features as requested");
        for (size_t j = 0; j < t->d; ++j)
            check(strcmp(t->feature_names[j], request->features[j]) == 0,
                  "the requested features in order");
    }
    for (size_t j = 0; j < t->d; ++j)
        check_name(t->feature_names[j], request);
    for (size_t i = 0; i < t->n * t->d; ++i)
        check(isfinite(t->X[i]) && (t->X[i] == 0.0 || fabs(t->X[i]) >= DBL_MIN),
              "numbers are finite, zero or normal");
    if (request->response == NULL) {
        check(t->response_name == NULL && t->y == NULL && t->labels == NULL,
              "no response when none was asked for");
        return;
    }
    check(strcmp(t->response_name, request->response) == 0, "the response is named");
    if (!request->response_as_text) {
        check(t->labels == NULL, "no labels for a numeric response");
        for (size_t i = 0; i < t->n; ++i)
            check(isfinite(t->y[i]) && (t->y[i] == 0.0 || fabs(t->y[i]) >= DBL_MIN),
                  "responses are finite, zero or normal");
        return;
    }
    check(t->y == NULL, "no numbers for a text response");
    for (size_t i = 0; i < t->n; ++i) {
        check_name(t->labels[i], request);
        check(t->label_lines[i] >= 2 && t->label_lines[i] <= lines &&
                  (i == 0 || t->label_lines[i] > t->label_lines[i - 1]),
              "label lines are in order, past the header, within the input");
    }
}

static int same_table(const table *a, const table *b)
{
    if (a->n != b->n || a->d != b->d || (a->response_name == NULL) != (b->response_name == NULL) ||
        (a->y == NULL) != (b->y == NULL) || (a->labels == NULL) != (b->labels == NULL))
        return 0;
    if (a->response_name != NULL && strcmp(a->response_name, b->response_name) != 0)
        return 0;
    for (size_t j = 0; j < a->d; ++j)
        if (strcmp(a->feature_names[j], b->feature_names[j]) != 0)
            return 0;
    if (a->n * a->d > 0 && memcmp(a->X, b->X, a->n * a->d * sizeof(double)) != 0)
        return 0;
    if (a->y != NULL && memcmp(a->y, b->y, a->n * sizeof(double)) != 0)
        return 0;
    for (size_t i = 0; i < a->n; ++i)
        if (a->row_lines[i] != b->row_lines[i])
            return 0;
    for (size_t i = 0; a->labels != NULL && i < a->n; ++i)
        if (strcmp(a->labels[i], b->labels[i]) != 0 || a->label_lines[i] != b->label_lines[i])
            return 0;
    return 1;
}

/* The input in pieces of 1 to 13 bytes, cut differently for each input. */
static int read_in_pieces(const uint8_t *data, size_t size, const table_request *request,
                          table *out, char *error, size_t error_size)
{
    table_reader *reader = table_reader_begin(file_name, request, out);
    if (reader == NULL)
        return -2;
    size_t seed = size;
    for (size_t at = 0; at < size;) {
        seed = seed * 1103515245u + 12345u;
        size_t piece = 1 + (seed >> 16) % 13;
        piece = piece < size - at ? piece : size - at;
        table_reader_feed(reader, data + at, piece);
        at += piece;
    }
    return table_reader_end(reader, error, error_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t lines = count_lines(data, size);
    for (size_t q = 0; q < sizeof requests / sizeof requests[0]; ++q) {
        const table_request *request = &requests[q];
        table whole, pieces;
        char whole_error[1024] = "", pieces_error[1024] = "";
        int status = table_read_buffer(data, size, file_name, request, &whole, whole_error,
                                       sizeof whole_error);
        if (status != 0)
            check_failure(&whole, whole_error, lines);
        else
            check_success(&whole, request, lines);
        int pieces_status =
            read_in_pieces(data, size, request, &pieces, pieces_error, sizeof pieces_error);
        if (pieces_status != -2) {
            check(pieces_status == status, "pieces: the same outcome");
            check(status != 0 ? strcmp(whole_error, pieces_error) == 0
                              : same_table(&whole, &pieces),
                  "pieces: the same table or the same message");
            table_free(&pieces);
        }
        if (q == size % (sizeof requests / sizeof requests[0])) {
            table_request threaded = *request;
            threaded.threads = 2 + (int)(size % 3);
            threaded.thread_bytes = 1 + size % 7;
            table ranges;
            char ranges_error[1024] = "";
            int ranges_status = table_read_buffer(data, size, file_name, &threaded, &ranges,
                                                  ranges_error, sizeof ranges_error);
            check(ranges_status == status, "threads: the same outcome");
            check(status != 0 ? strcmp(whole_error, ranges_error) == 0
                              : same_table(&whole, &ranges),
                  "threads: the same table or the same message");
            table_free(&ranges);
        }
        table_free(&whole);
    }
    /* The number parser on its own, on the input as one cell. */
    char cell[64];
    size_t length = size < sizeof cell - 1 ? size : sizeof cell - 1;
    memcpy(cell, data, length);
    cell[length] = '\0';
    double value = 0.0;
    if (table_parse_number(cell, &value) == NUMBER_OK)
        check(isfinite(value) && (value == 0.0 || fabs(value) >= DBL_MIN),
              "a parsed number is finite, zero or normal");
    return 0;
}
