#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "row_message.h"

#include <stdlib.h>
#include <string.h>

static const char predict_help[] =
    "usage: moe predict MODEL.moe DATA.csv [--proba] [--posterior --response NAME]\n"
    "\n"
    "Predict from a saved model for the rows of a CSV file; CSV on standard output.\n"
    "The feature columns are found by the names saved with the model (other\n"
    "columns are ignored); a model without names takes every column in order.\n"
    "\n"
    "  (default)      gaussian: the mixture mean; logistic and multinomial: the most\n"
    "                 probable class, printed with the labels of the training data\n"
    "  --proba        classification: one probability column per class\n"
    "  --posterior    the probability of each expert given x and y (needs --response)\n"
    "  --response N   the response column, for --posterior\n"
    "  --sep C        field delimiter (default ',')\n"
    "\n"
    "Exit status: 0 printed, 1 the model cannot explain some row (zero likelihood),\n"
    "2 usage or input error.\n";

/* A CSV cell: quoted when it holds the delimiter, a quote or a line break. */
static void print_cell(const char *text, char delimiter)
{
    if (strchr(text, delimiter) == NULL && strpbrk(text, "\"\r\n") == NULL) {
        fputs(text, stdout);
        return;
    }
    putchar('"');
    for (const char *c = text; *c; ++c) {
        if (*c == '"')
            putchar('"');
        putchar(*c);
    }
    putchar('"');
}

typedef struct predict_arguments {
    model_data_arguments files;
    int proba, posterior;
} predict_arguments;

/* 0 when the arguments are complete, else the exit status (help printed: -1). */
static int parse_predict_arguments(int argc, char **argv, predict_arguments *a)
{
    for (int at = 1; at < argc; ++at) {
        const char *arg = argv[at];
        int taken = 0;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(predict_help, stdout);
            return -1;
        } else if (strcmp(arg, "--proba") == 0) {
            a->proba = 1;
        } else if (strcmp(arg, "--posterior") == 0) {
            a->posterior = 1;
        } else if ((taken = model_data_argument(argc, argv, &at, "predict", &a->files)) < 0) {
            return -taken;
        } else if (taken == 0) {
            return usage_error("predict: unknown option %s (see moe predict --help)", arg);
        }
    }
    if (a->files.model_path == NULL || a->files.data_path == NULL)
        return usage_error("predict: a model and a data file are needed (see moe predict --help)");
    if (a->posterior && a->files.response == NULL)
        return usage_error("predict: --posterior needs --response");
    if (a->posterior && a->proba)
        return usage_error("predict: choose --proba or --posterior");
    return 0;
}

static void print_header(const moe_model_t *model, const predict_arguments *a)
{
    const char *response = moe_model_get_name(model, MOE_NAME_RESPONSE, 0);
    char buffer[32];
    if (a->posterior) {
        for (size_t k = 0; k < moe_model_n_experts(model); ++k) {
            if (k > 0)
                putchar(a->files.delimiter);
            printf("expert%zu", k + 1);
        }
    } else if (!is_class_family(moe_model_family(model))) {
        print_cell(response != NULL ? response : "prediction", a->files.delimiter);
    } else if (a->proba) {
        for (size_t c = 0; c < model_classes(model); ++c) {
            if (c > 0)
                putchar(a->files.delimiter);
            char label[1100];
            snprintf(label, sizeof label, "P(%s)", class_label(model, c, buffer, sizeof buffer));
            print_cell(label, a->files.delimiter);
        }
    } else {
        print_cell(response != NULL ? response : "class", a->files.delimiter);
    }
    putchar('\n');
}

/* Numbers per row (width of them), or class labels (classes not NULL). */
static void print_rows(const moe_model_t *model, const predict_arguments *a, size_t n,
                       const double *out, size_t width, const size_t *classes)
{
    char buffer[32];
    int logistic_proba = a->proba && moe_model_family(model) == MOE_FAMILY_LOGISTIC;
    for (size_t i = 0; i < n; ++i) {
        const double *row = out + i * width;
        if (classes != NULL) {
            print_cell(class_label(model, classes[i], buffer, sizeof buffer), a->files.delimiter);
        } else if (logistic_proba) {
            printf("%.17g%c%.17g", 1.0 - row[0], a->files.delimiter, row[0]);
        } else {
            for (size_t k = 0; k < width; ++k) {
                if (k > 0)
                    putchar(a->files.delimiter);
                printf("%.17g", row[k]);
            }
        }
        putchar('\n');
    }
}

/* What the arguments ask for, into out (n x width) or classes (n). */
static moe_status compute(const moe_model_t *model, const predict_arguments *a,
                          const table *data, double *out, size_t width, size_t *classes)
{
    size_t n = data->n, d = moe_model_n_features(model);
    if (a->posterior)
        return moe_model_posterior(model, n, data->X, d, data->y, out, n * width);
    if (classes != NULL)
        return moe_model_classify(model, n, data->X, d, classes, n);
    return moe_model_predict(model, n, data->X, d, out, n * width);
}

int command_predict(int argc, char **argv)
{
    predict_arguments a = {{NULL, NULL, NULL, ','}, 0, 0};
    int code = parse_predict_arguments(argc, argv, &a);
    if (code != 0)
        return code < 0 ? 0 : code;
    moe_model_t *model = NULL;
    if (moe_model_load(&model, a.files.model_path) != MOE_OK)
        return usage_error("%s", moe_last_error());
    int classification = is_class_family(moe_model_family(model));
    if (a.proba && !classification) {
        moe_model_free(model);
        return usage_error("predict: --proba is for logistic and multinomial models");
    }
    table data;
    code = read_for_model(a.files.data_path, model, a.posterior ? a.files.response : NULL,
                          a.files.delimiter, &data);
    if (code != 0) {
        moe_model_free(model);
        return code;
    }
    int labels = classification && !a.proba && !a.posterior;
    size_t width = a.posterior ? moe_model_n_experts(model) : moe_model_prediction_width(model);
    double *out = labels ? NULL : malloc(data.n * width * sizeof(double));
    size_t *classes = labels ? malloc(data.n * sizeof(size_t)) : NULL;
    moe_status status;
    if (labels ? classes == NULL : out == NULL) {
        code = usage_error("out of memory");
    } else if ((status = compute(model, &a, &data, out, width, classes)) != MOE_OK) {
        char buffer[1024];
        fprintf(stderr, "moe: %s\n", row_message(moe_last_error(), a.files.data_path, &data, 0,
                                                  buffer, sizeof buffer));
        code = status == MOE_ERR_NUMERICAL ? EXIT_FIT_PROBLEM : EXIT_USAGE;
    } else {
        print_header(model, &a);
        print_rows(model, &a, data.n, out, width, classes);
    }
    free(out);
    free(classes);
    table_free(&data);
    moe_model_free(model);
    return code;
}
