#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *program_name = "moe";

int usage_error(const char *format, ...)
{
    /* The line goes out in one write: moe-mpi's ranks share stderr, and a line written in
       pieces interleaves with another rank's ("moe: moe: a.csv: ...a.csv: ..."). */
    va_list arguments, again;
    va_start(arguments, format);
    va_copy(again, arguments);
    int length = vsnprintf(NULL, 0, format, arguments);
    size_t name = strlen(program_name) + 2; /* "name: " */
    char *line = length >= 0 ? malloc(name + (size_t)length + 2) : NULL;
    if (line != NULL) {
        snprintf(line, name + 1, "%s: ", program_name);
        vsnprintf(line + name, (size_t)length + 1, format, again);
        memcpy(line + name + (size_t)length, "\n", 2);
        fputs(line, stderr);
        free(line);
    } else {
        fprintf(stderr, "%s: ", program_name);
        vfprintf(stderr, format, again);
        fputc('\n', stderr);
    }
    va_end(again);
    va_end(arguments);
    return EXIT_USAGE;
}

int fit_failure_code(moe_status status)
{
    int input = status == MOE_ERR_INVALID_ARGUMENT || status == MOE_ERR_NULL_POINTER ||
                status == MOE_ERR_EMPTY_INPUT || status == MOE_ERR_DIMENSION ||
                status == MOE_ERR_NON_FINITE || status == MOE_ERR_NEGATIVE_WEIGHT ||
                status == MOE_ERR_TOO_FEW_SAMPLES || status == MOE_ERR_INVALID_LABEL;
    return input ? EXIT_USAGE : EXIT_FIT_PROBLEM;
}

int fit_failure(moe_status status, const char *context, const char *message)
{
    int code = fit_failure_code(status);
    usage_error("%s%s: %s", context, code == EXIT_USAGE ? "input error" : "the fit failed",
                message);
    return code;
}

const char *option_value(int argc, char **argv, int *at)
{
    if (*at + 1 >= argc) {
        usage_error("%s needs a value", argv[*at]);
        return NULL;
    }
    return argv[++*at];
}

int model_data_argument(int argc, char **argv, int *at, const char *command,
                        model_data_arguments *a)
{
    const char *arg = argv[*at];
    if (strcmp(arg, "--response") == 0) {
        if ((a->response = option_value(argc, argv, at)) == NULL)
            return -EXIT_USAGE;
    } else if (strcmp(arg, "--sep") == 0) {
        const char *value = option_value(argc, argv, at);
        if (value == NULL)
            return -EXIT_USAGE;
        if ((a->delimiter = parse_delimiter(value)) == 0)
            return -usage_error("--sep: '%s' is not a one-character delimiter", value);
    } else if (arg[0] == '-' && arg[1] != '\0') {
        return 0;
    } else if (a->model_path == NULL) {
        a->model_path = arg;
    } else if (a->data_path == NULL) {
        a->data_path = arg;
    } else {
        return -usage_error("%s: too many arguments", command);
    }
    return 1;
}

const char **split_names(char *list, size_t *count)
{
    size_t capacity = 1;
    for (const char *c = list; *c; ++c)
        capacity += *c == ',';
    const char **names = malloc(capacity * sizeof(char *));
    if (names == NULL)
        return NULL;
    *count = 0;
    for (char *token = list;;) {
        char *comma = strchr(token, ',');
        if (comma != NULL)
            *comma = '\0';
        names[(*count)++] = token;
        if (comma == NULL)
            break;
        token = comma + 1;
    }
    return names;
}

char parse_delimiter(const char *text)
{
    if (strcmp(text, "tab") == 0 || strcmp(text, "\\t") == 0)
        return '\t';
    if (strlen(text) == 1 && text[0] != '"' && text[0] != '\n' && text[0] != '\r')
        return text[0];
    return 0;
}

typedef struct label_entry {
    const char *text;
    double number;
} label_entry;

static int numeric_order;

static int compare_labels(const void *a, const void *b)
{
    const label_entry *x = a, *y = b;
    if (numeric_order)
        return (x->number > y->number) - (x->number < y->number);
    return strcmp(x->text, y->text);
}

size_t encode_labels(char **labels, size_t n, double *y, char ***classes)
{
    label_entry *entries = malloc(n * sizeof *entries);
    if (entries == NULL)
        return 0;
    numeric_order = 1;
    for (size_t i = 0; i < n; ++i) {
        entries[i].text = labels[i];
        if (table_parse_number(labels[i], &entries[i].number) != 0)
            numeric_order = 0;
    }
    qsort(entries, n, sizeof *entries, compare_labels);
    size_t count = 0;
    for (size_t i = 0; i < n; ++i)
        if (i == 0 || compare_labels(&entries[i - 1], &entries[i]) != 0)
            entries[count++] = entries[i];
    char **names = calloc(count, sizeof(char *));
    for (size_t c = 0; names != NULL && c < count; ++c)
        if ((names[c] = strdup(entries[c].text)) == NULL) {
            free_labels(names, c);
            names = NULL;
        }
    if (names == NULL) {
        free(entries);
        return 0;
    }
    for (size_t i = 0; i < n; ++i) {
        label_entry key = {labels[i], 0.0};
        if (numeric_order)
            table_parse_number(labels[i], &key.number);
        const label_entry *found = bsearch(&key, entries, count, sizeof *entries, compare_labels);
        y[i] = (double)(found - entries);
    }
    free(entries);
    *classes = names;
    return count;
}

void free_labels(char **classes, size_t count)
{
    if (classes == NULL)
        return;
    for (size_t c = 0; c < count; ++c)
        free(classes[c]);
    free(classes);
}

const char *feature_label(const moe_model_t *model, size_t j, char *buffer, size_t size)
{
    const char *name = moe_model_get_name(model, MOE_NAME_FEATURE, j);
    if (name != NULL)
        return name;
    snprintf(buffer, size, "x%zu", j + 1);
    return buffer;
}

const char *family_list(char *buffer, size_t size)
{
    size_t used = 0, count = moe_family_count();
    buffer[0] = '\0';
    for (size_t i = 0; i < count; ++i) {
        int written = snprintf(buffer + used, size - used, "%s%s",
                               i == 0 ? "" : i + 1 == count ? " or " : ", ",
                               moe_family_name(moe_family_at(i)));
        if (written < 0 || (size_t)written >= size - used)
            break;
        used += (size_t)written;
    }
    return buffer;
}

int is_class_family(moe_family family)
{
    return family == MOE_FAMILY_LOGISTIC || family == MOE_FAMILY_MULTINOMIAL;
}

size_t model_classes(const moe_model_t *model)
{
    switch (moe_model_family(model)) {
    case MOE_FAMILY_MULTINOMIAL: return moe_model_n_classes(model);
    case MOE_FAMILY_LOGISTIC: return 2;
    default: return 0;
    }
}

const char *class_label(const moe_model_t *model, size_t c, char *buffer, size_t size)
{
    const char *name = moe_model_get_name(model, MOE_NAME_CLASS, c);
    if (name != NULL)
        return name;
    snprintf(buffer, size, "%zu", c);
    return buffer;
}

/* The class whose label is `text`, or `classes` when none is. */
static size_t find_class(const moe_model_t *model, size_t classes, const char *text)
{
    char buffer[32];
    for (size_t c = 0; c < classes; ++c) {
        if (strcmp(class_label(model, c, buffer, sizeof buffer), text) == 0)
            return c;
        double number = 0.0; /* unnamed classes also match "1.0" for 1 */
        if (moe_model_get_name(model, MOE_NAME_CLASS, c) == NULL &&
            table_parse_number(text, &number) == 0 && number == (double)c)
            return c;
    }
    return classes;
}

int read_for_model(const char *path, const moe_model_t *model, const char *response,
                   char delimiter, table *out)
{
    size_t d = moe_model_n_features(model), classes = model_classes(model);
    const char **features = malloc((d > 0 ? d : 1) * sizeof(char *));
    if (features == NULL)
        return usage_error("out of memory");
    int named = 1;
    for (size_t j = 0; j < d; ++j)
        named = named && (features[j] = moe_model_get_name(model, MOE_NAME_FEATURE, j)) != NULL;
    table_request request = {response, response != NULL && classes > 0,
                             named ? features : NULL, named ? d : 0, delimiter, 0, 0, 0};
    char error[512];
    int failed = table_read(path, &request, out, error, sizeof error);
    free(features);
    if (failed)
        return usage_error("%s", error);
    int code = 0;
    if (out->d != d)
        code = usage_error("%s: %zu feature columns, the model has %zu", path, out->d, d);
    else if (request.response_as_text && (out->y = malloc(out->n * sizeof(double))) == NULL)
        code = usage_error("out of memory");
    for (size_t i = 0; code == 0 && request.response_as_text && i < out->n; ++i) {
        size_t c = find_class(model, classes, out->labels[i]);
        if (c == classes)
            code = usage_error("%s: line %zu, column '%s': '%s' is not one of the model's "
                               "classes", path, out->label_lines[i], response, out->labels[i]);
        out->y[i] = (double)c;
    }
    if (code != 0)
        table_free(out);
    return code;
}
