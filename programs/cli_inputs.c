#define _POSIX_C_SOURCE 200809L /* strdup */

/* Which feature columns the gate and the experts see, and the experts' offset: the
   arguments --gate-features, --expert-features and --offset over the data's features. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The feature a list item names: a feature column's name, else a 0-based position among
   the features (a name wins over a position: a column may be called "2"). -1 if none. */
static long find_feature(const table *data, const char *item)
{
    for (size_t j = 0; j < data->d; ++j)
        if (strcmp(data->feature_names[j], item) == 0)
            return (long)j;
    if (item[0] == '\0' || strspn(item, "0123456789") != strlen(item) || strlen(item) > 9)
        return -1;
    long position = strtol(item, NULL, 10);
    return position < (long)data->d ? position : -1;
}

/* The message names what the option could have named: the features, and the header's
   columns when the item is none of them. */
static int unknown_feature(const char *option, const table *data, const char *item)
{
    if (data->response_name != NULL && strcmp(item, data->response_name) == 0)
        return usage_error("%s: '%s' is the response, not a feature", option, item);
    char features[400], columns[400];
    table_list_names(data->feature_names, data->d, features, sizeof features);
    for (size_t c = 0; c < data->n_columns; ++c)
        if (strcmp(data->column_names[c], item) == 0)
            return usage_error("%s: the column '%s' is not among the features --features "
                               "chose (%s)",
                               option, item, features);
    return usage_error("%s: '%s' is neither a feature column (%s) nor a position 0..%zu among "
                       "the %zu features; the header's columns: %s",
                       option, item, features, data->d == 0 ? 0 : data->d - 1, data->d,
                       table_list_names(data->column_names, data->n_columns, columns,
                                        sizeof columns));
}

/* d bytes from a list of names or positions; "none" (unless a feature has that name) is
   the empty set. */
static int resolve_list(const char *option, const char *list, const table *data,
                        unsigned char **out)
{
    *out = calloc(data->d > 0 ? data->d : 1, 1);
    char *copy = strdup(list);
    size_t count = 0;
    const char **items = copy != NULL ? split_names(copy, &count) : NULL;
    int code = *out == NULL || items == NULL ? usage_error("out of memory") : 0;
    int none = count == 1 && strcmp(items[0], "none") == 0 && find_feature(data, "none") < 0;
    for (size_t i = 0; code == 0 && !none && i < count; ++i) {
        long j = find_feature(data, items[i]);
        if (j < 0)
            code = unknown_feature(option, data, items[i]);
        else if ((*out)[j])
            code = usage_error("%s: the feature '%s' is listed twice", option,
                               data->feature_names[j]);
        else
            (*out)[j] = 1;
    }
    free(items);
    free(copy);
    return code;
}

/* Append to `list` (capacity enough) each item of `names` not yet in it, but the
   response's and, for a part's list, "none". */
static void add_columns(char *list, const char *names, const char *response, int part)
{
    char *copy = strdup(names);
    size_t count = 0;
    const char **items = copy != NULL ? split_names(copy, &count) : NULL;
    int none = part && count == 1 && strcmp(items[0], "none") == 0;
    for (size_t i = 0; items != NULL && !none && i < count; ++i) {
        /* resolve_list says why the response or an empty item is no feature. */
        if (items[i][0] == '\0' || strcmp(items[i], response) == 0)
            continue;
        int listed = 0;
        size_t length = strlen(items[i]);
        for (const char *at = list; !listed && *at != '\0';) {
            size_t span = strcspn(at, ",");
            listed = span == length && memcmp(at, items[i], length) == 0;
            at += span + (at[span] == ',');
        }
        if (!listed)
            sprintf(list + strlen(list), "%s%s", *list != '\0' ? "," : "", items[i]);
    }
    free(items);
    free(copy);
}

/* Whether a list holds a position (digits alone), which counts among every column but the
   response and so needs them all read. */
static int has_position(const char *list)
{
    for (const char *at = list; *at != '\0';) {
        size_t span = strcspn(at, ",");
        if (span > 0 && strspn(at, "0123456789") >= span)
            return 1;
        at += span + (at[span] == ',');
    }
    return 0;
}

char *model_columns(const fit_arguments *a)
{
    if (a->features != NULL || a->gate_features == NULL || a->expert_features == NULL ||
        has_position(a->gate_features) || has_position(a->expert_features) ||
        (a->offset != NULL && has_position(a->offset)) ||
        (a->trials != NULL && has_position(a->trials)))
        return NULL;
    size_t size = strlen(a->gate_features) + strlen(a->expert_features) +
                  (a->offset != NULL ? strlen(a->offset) : 0) +
                  (a->trials != NULL ? strlen(a->trials) : 0) + 4;
    char *list = calloc(size, 1);
    if (list == NULL)
        return NULL;
    add_columns(list, a->gate_features, a->response, 1);
    add_columns(list, a->expert_features, a->response, 1);
    if (a->offset != NULL)
        add_columns(list, a->offset, a->response, 0);
    if (a->trials != NULL)
        add_columns(list, a->trials, a->response, 0);
    return list;
}

int resolve_model_inputs(const fit_arguments *a, const table *data, model_inputs *out)
{
    memset(out, 0, sizeof *out);
    out->offset = out->trials = -1;
    int code = 0;
    if (a->offset != NULL && (out->offset = find_feature(data, a->offset)) < 0)
        code = unknown_feature("--offset", data, a->offset);
    if (code == 0 && a->trials != NULL && (out->trials = find_feature(data, a->trials)) < 0)
        code = unknown_feature("--trials", data, a->trials);
    if (code == 0 && out->trials >= 0 && out->trials == out->offset)
        code = usage_error("--trials and --offset name the same column '%s'",
                           data->feature_names[out->trials]);
    if (code == 0 && a->gate_features != NULL)
        code = resolve_list("--gate-features", a->gate_features, data, &out->gate_features);
    if (code == 0 && a->expert_features != NULL)
        code = resolve_list("--expert-features", a->expert_features, data,
                            &out->expert_features);
    if (code == 0 && out->expert_features != NULL && out->offset >= 0 &&
        out->expert_features[out->offset])
        code = usage_error("--expert-features lists '%s', the --offset column: the experts take "
                           "it with its coefficient fixed at 1",
                           data->feature_names[out->offset]);
    /* An offset (a log exposure) is not a covariate of the gate unless the user says so;
       the trials never are (the library holds them out of both parts). */
    if (code == 0 && (out->offset >= 0 || out->trials >= 0) && out->gate_features == NULL) {
        if ((out->gate_features = malloc(data->d)) == NULL)
            code = usage_error("out of memory");
        else {
            memset(out->gate_features, 1, data->d);
            if (out->offset >= 0)
                out->gate_features[out->offset] = 0;
        }
    }
    if (code == 0 && out->trials >= 0 && out->gate_features != NULL)
        out->gate_features[out->trials] = 0;
    if (code == 0 && out->trials >= 0 && out->expert_features != NULL)
        out->expert_features[out->trials] = 0;
    if (code != 0)
        free_model_inputs(out);
    return code;
}

void free_model_inputs(model_inputs *inputs)
{
    free(inputs->gate_features);
    free(inputs->expert_features);
    inputs->gate_features = inputs->expert_features = NULL;
    inputs->offset = inputs->trials = -1;
}

void spec_set_inputs(moe_model_spec *spec, const model_inputs *inputs)
{
    spec->gate_features = inputs->gate_features;
    spec->expert_features = inputs->expert_features;
    spec->offset_feature = inputs->offset;
    spec->trials_feature = inputs->trials;
}
