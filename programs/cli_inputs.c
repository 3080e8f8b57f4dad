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

static int unknown_feature(const char *option, const table *data, const char *item)
{
    if (data->response_name != NULL && strcmp(item, data->response_name) == 0)
        return usage_error("%s: '%s' is the response, not a feature", option, item);
    return usage_error("%s: '%s' is neither a feature column nor a position 0..%zu among the "
                       "%zu features (--features chooses them; every column but the response "
                       "by default)",
                       option, item, data->d == 0 ? 0 : data->d - 1, data->d);
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

int resolve_model_inputs(const fit_arguments *a, const table *data, model_inputs *out)
{
    memset(out, 0, sizeof *out);
    out->offset = -1;
    int code = 0;
    if (a->offset != NULL && (out->offset = find_feature(data, a->offset)) < 0)
        code = unknown_feature("--offset", data, a->offset);
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
    /* An offset (a log exposure) is not a covariate of the gate unless the user says so. */
    if (code == 0 && out->offset >= 0 && out->gate_features == NULL) {
        if ((out->gate_features = malloc(data->d)) == NULL)
            code = usage_error("out of memory");
        else {
            memset(out->gate_features, 1, data->d);
            out->gate_features[out->offset] = 0;
        }
    }
    if (code != 0)
        free_model_inputs(out);
    return code;
}

void free_model_inputs(model_inputs *inputs)
{
    free(inputs->gate_features);
    free(inputs->expert_features);
    inputs->gate_features = inputs->expert_features = NULL;
    inputs->offset = -1;
}

void spec_set_inputs(moe_model_spec *spec, const model_inputs *inputs)
{
    spec->gate_features = inputs->gate_features;
    spec->expert_features = inputs->expert_features;
    spec->offset_feature = inputs->offset;
}
