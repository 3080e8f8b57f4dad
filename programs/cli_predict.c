#define _POSIX_C_SOURCE 200809L

#include "cli.h"

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

int command_predict(int argc, char **argv)
{
    const char *model_path = NULL, *data_path = NULL, *response = NULL;
    int proba = 0, posterior = 0;
    char delimiter = ',';
    for (int at = 1; at < argc; ++at) {
        const char *arg = argv[at];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(predict_help, stdout);
            return 0;
        } else if (strcmp(arg, "--proba") == 0) {
            proba = 1;
        } else if (strcmp(arg, "--posterior") == 0) {
            posterior = 1;
        } else if (strcmp(arg, "--response") == 0) {
            if ((response = option_value(argc, argv, &at)) == NULL)
                return EXIT_USAGE;
        } else if (strcmp(arg, "--sep") == 0) {
            const char *value = option_value(argc, argv, &at);
            if (value == NULL)
                return EXIT_USAGE;
            if ((delimiter = parse_delimiter(value)) == 0)
                return usage_error("--sep: '%s' is not a one-character delimiter", value);
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error("predict: unknown option %s (see moe predict --help)", arg);
        } else if (model_path == NULL) {
            model_path = arg;
        } else if (data_path == NULL) {
            data_path = arg;
        } else {
            return usage_error("predict: too many arguments");
        }
    }
    if (model_path == NULL || data_path == NULL)
        return usage_error("predict: a model and a data file are needed (see moe predict --help)");
    if (posterior && response == NULL)
        return usage_error("predict: --posterior needs --response");
    if (posterior && proba)
        return usage_error("predict: choose --proba or --posterior");

    moe_model_t *model = NULL;
    if (moe_model_load(&model, model_path) != MOE_OK)
        return usage_error("%s", moe_last_error());
    moe_family family = moe_model_family(model);
    int classification = family != MOE_FAMILY_GAUSSIAN;
    if (proba && !classification) {
        moe_model_free(model);
        return usage_error("predict: --proba is for logistic and multinomial models");
    }
    size_t d = moe_model_n_features(model), K = moe_model_n_experts(model);
    size_t classes = model_classes(model);
    table data;
    int code = read_for_model(data_path, model, posterior ? response : NULL, delimiter, &data);
    if (code != 0) {
        moe_model_free(model);
        return code;
    }
    size_t width = posterior ? K : family == MOE_FAMILY_MULTINOMIAL ? classes : 1;
    double *out = malloc(data.n * width * sizeof(double));
    moe_status status =
        out == NULL ? MOE_ERR_OUT_OF_MEMORY
        : posterior ? moe_model_posterior(model, data.n, data.X, d, data.y, out, data.n * width)
                    : moe_model_predict(model, data.n, data.X, d, out, data.n * width);
    if (status != MOE_OK) {
        fprintf(stderr, "moe: %s\n", moe_last_error());
        free(out);
        code = status == MOE_ERR_NUMERICAL ? EXIT_FIT_PROBLEM : EXIT_USAGE;
        goto done;
    }
    char buffer[32];
    /* Header. */
    if (posterior) {
        for (size_t k = 0; k < K; ++k) {
            if (k > 0)
                putchar(delimiter);
            printf("expert%zu", k + 1);
        }
    } else if (!classification) {
        print_cell(moe_model_get_name(model, MOE_NAME_RESPONSE, 0) != NULL
                       ? moe_model_get_name(model, MOE_NAME_RESPONSE, 0)
                       : "prediction",
                   delimiter);
    } else if (proba) {
        for (size_t c = 0; c < classes; ++c) {
            if (c > 0)
                putchar(delimiter);
            char label[1100];
            snprintf(label, sizeof label, "P(%s)", class_label(model, c, buffer, sizeof buffer));
            print_cell(label, delimiter);
        }
    } else {
        print_cell(moe_model_get_name(model, MOE_NAME_RESPONSE, 0) != NULL
                       ? moe_model_get_name(model, MOE_NAME_RESPONSE, 0)
                       : "class",
                   delimiter);
    }
    putchar('\n');
    for (size_t i = 0; i < data.n; ++i) {
        const double *row = out + i * width;
        if (posterior || !classification || (proba && family == MOE_FAMILY_MULTINOMIAL)) {
            for (size_t k = 0; k < width; ++k) {
                if (k > 0)
                    putchar(delimiter);
                printf("%.17g", row[k]);
            }
        } else if (proba) {
            printf("%.17g%c%.17g", 1.0 - row[0], delimiter, row[0]);
        } else {
            size_t best = 0;
            if (family == MOE_FAMILY_LOGISTIC)
                best = row[0] > 0.5;
            else
                for (size_t c = 1; c < classes; ++c)
                    if (row[c] > row[best])
                        best = c;
            print_cell(class_label(model, best, buffer, sizeof buffer), delimiter);
        }
        putchar('\n');
    }
    free(out);
done:
    table_free(&data);
    moe_model_free(model);
    return code;
}
