#include "row_message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits at *text as a size_t, advancing past them; 0 when there are none. */
static int read_index(const char **text, size_t *value)
{
    const char *at = *text;
    if (*at < '0' || *at > '9')
        return 0;
    char *end = NULL;
    unsigned long long parsed = strtoull(at, &end, 10);
    if (parsed > (unsigned long long)(size_t)-1)
        return 0;
    *value = (size_t)parsed;
    *text = end;
    return 1;
}

/* Whether `text` starts with `prefix`, advancing past it. */
static int skip(const char **text, const char *prefix)
{
    size_t length = strlen(prefix);
    if (strncmp(*text, prefix, length) != 0)
        return 0;
    *text += length;
    return 1;
}

const char *row_message(const char *message, const char *path, const table *data,
                        size_t first, char *buffer, size_t size)
{
    const char *at = message;
    size_t row = 0, column = 0;
    /* a message about the whole response column (a constant one) names the column */
    if (message != NULL && data->response_name != NULL && skip(&at, "the response ")) {
        snprintf(buffer, size, "%s: the response, column '%s', %s", path, data->response_name,
                 at);
        return buffer;
    }
    if (message == NULL || data->row_lines == NULL || !skip(&at, "row ") ||
        !read_index(&at, &row) || row >= data->n || first > data->n - 1 - row)
        return message;
    size_t line = data->row_lines[first + row];
    /* The cell's column by the header's name: the library counts X's columns, which are
       the features in the table's order. */
    const char *name = NULL, *weight = "";
    if (skip(&at, ", column ")) {
        if (!read_index(&at, &column) || column >= data->d)
            return message;
        name = data->feature_names[column];
    } else if (skip(&at, ", response")) {
        name = data->response_name;
    } else if (skip(&at, ", weight")) {
        weight = ", its weight"; /* not a column of the file */
    }
    if (!skip(&at, ": "))
        return message;
    if (name != NULL)
        snprintf(buffer, size, "%s: line %zu, column '%s': %s", path, line, name, at);
    else
        snprintf(buffer, size, "%s: line %zu%s: %s", path, line, weight, at);
    return buffer;
}
