#include "cli.h"
#include "row_message.h"
#include "atomic_file.h"
#include "svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char plot_help[] =
    "usage: moe plot MODEL.moe DATA.csv -o FIT.svg [--response NAME] [--sep C]\n"
    "\n"
    "Draw a fitted model against data as an SVG file.\n"
    "  one covariate:   the data coloured by their most probable expert, each\n"
    "                   expert's mean curve (classification: the class\n"
    "                   probabilities), and the gate probabilities in a panel below\n"
    "  several:         Gaussian: observed against predicted, coloured by expert;\n"
    "                   classification: the first two covariates, coloured by\n"
    "                   predicted class, misclassified rows ringed\n"
    "The response column is the one saved with the model unless --response names it.\n"
    "\n"
    "The file is replaced only once completely written.\n"
    "\n"
    "Exit status: 0 written, 1 the model cannot explain some row or the file cannot\n"
    "be written, 2 usage or input error.\n";

enum { GRID = 200, MAX_POINTS = 5000 };

/* Every stride-th row is drawn, so a plot stays a few hundred kilobytes. */
static size_t point_stride(size_t n)
{
    return n <= MAX_POINTS ? 1 : (n + MAX_POINTS - 1) / MAX_POINTS;
}

static void note_sampling(FILE *out, double x, double y, size_t n)
{
    if (point_stride(n) == 1)
        return;
    char note[96];
    snprintf(note, sizeof note, "points: every %zu-th of %zu rows", point_stride(n), n);
    svg_text(out, x, y, note, "start", 11);
}

typedef struct plot_data {
    const moe_model_t *model;
    const table *data;
    size_t K, d, classes;
    moe_family family;
    double *posterior; /* n x K */
} plot_data;

static const char *expert_name(size_t k, char *buffer, size_t size)
{
    snprintf(buffer, size, "expert %zu", k + 1);
    return buffer;
}

static size_t argmax(const double *values, size_t count)
{
    size_t best = 0;
    for (size_t k = 1; k < count; ++k)
        if (values[k] > values[best])
            best = k;
    return best;
}

/* Probability of each class (rows x classes) from predict's output. */
static void class_probabilities(moe_family family, size_t rows, size_t classes,
                                const double *predicted, double *out)
{
    for (size_t i = 0; i < rows; ++i)
        for (size_t c = 0; c < classes; ++c)
            out[i * classes + c] = family == MOE_FAMILY_LOGISTIC
                                       ? (c == 1 ? predicted[i] : 1.0 - predicted[i])
                                       : predicted[i * classes + c];
}

/* One covariate: the fit over x on top, the gate below. */
/* The axis of the one-covariate plot: the grid over the observed x, and its titles. */
typedef struct covariate_axis {
    double grid[GRID];
    double low, high;
    char title[128];
    const char *response;
} covariate_axis;

/* Gaussian experts: the points coloured by their most probable expert, each expert's
   mean curve and the mixture mean. */
static int draw_regression_panel(FILE *out, const plot_data *p, const covariate_axis *axis)
{
    const table *data = p->data;
    size_t K = p->K, n = data->n, p_inputs = moe_model_n_inputs(p->model);
    double *curves = malloc(GRID * K * sizeof(double)), predicted[GRID];
    double *experts = malloc(K * p_inputs * sizeof(double));
    if (curves == NULL || experts == NULL) {
        free(curves);
        free(experts);
        return usage_error("out of memory");
    }
    moe_model_get_experts(p->model, experts, K * p_inputs);
    int intercept = moe_model_has_intercept(p->model);
    for (size_t k = 0; k < K; ++k)
        for (size_t g = 0; g < GRID; ++g) {
            double t = (intercept ? experts[k * p_inputs] : 0.0) +
                       experts[k * p_inputs + (size_t)intercept] * axis->grid[g];
            curves[g * K + k] = t;
        }
    /* Each expert's curve is its mean, g(t), as predict's mixture mean is. */
    moe_model_inverse_link(p->model, GRID * K, curves, curves);
    moe_model_predict(p->model, GRID, axis->grid, 1, predicted, GRID);
    double y_low, y_high;
    svg_range(data->y, n, 1, &y_low, &y_high);
    svg_panel top;
    svg_panel_begin(&top, out, 80, 40, 620, 330, axis->low, axis->high, y_low, y_high,
                    axis->title, axis->response);
    for (size_t i = 0; i < n; i += point_stride(n))
        svg_point(&top, data->X[i], data->y[i], 2.5, svg_colour(argmax(p->posterior + i * K, K)),
                  NULL);
    note_sampling(out, 716, 100 + 20.0 * (double)K, n);
    char buffer[64];
    for (size_t k = 0; k < K; ++k)
        svg_line(&top, axis->grid, curves + k, GRID, K, svg_colour(k), 2.5, 0);
    svg_line(&top, axis->grid, predicted, GRID, 1, "#000000", 1.5, 1);
    for (size_t k = 0; k < K; ++k)
        svg_legend(out, 716, 60 + 20.0 * (double)k, svg_colour(k),
                   expert_name(k, buffer, sizeof buffer));
    svg_legend(out, 716, 60 + 20.0 * (double)K, "#000000", "mixture mean");
    free(curves);
    free(experts);
    return 0;
}

/* Classification experts: each class's probability along x, and the observed rows at the
   probability of their own class. */
static int draw_classification_panel(FILE *out, const plot_data *p, const covariate_axis *axis)
{
    const table *data = p->data;
    size_t n = data->n, C = p->classes, width = moe_model_prediction_width(p->model);
    double *curves = malloc(GRID * C * sizeof(double));
    double *predicted = malloc(GRID * width * sizeof(double));
    double *row_proba = malloc(n * C * sizeof(double));
    double *row_predicted = malloc(n * width * sizeof(double));
    int code = 0;
    if (curves == NULL || predicted == NULL || row_proba == NULL || row_predicted == NULL) {
        code = usage_error("out of memory");
        goto done;
    }
    moe_model_predict(p->model, GRID, axis->grid, 1, predicted, GRID * width);
    class_probabilities(p->family, GRID, C, predicted, curves);
    moe_model_predict(p->model, n, data->X, 1, row_predicted, n * width);
    class_probabilities(p->family, n, C, row_predicted, row_proba);
    char y_title[160], buffer[64];
    snprintf(y_title, sizeof y_title, "P(%s = class | %s)", axis->response, axis->title);
    svg_panel top;
    svg_panel_begin(&top, out, 80, 40, 620, 330, axis->low, axis->high, 0.0, 1.0, axis->title,
                    y_title);
    note_sampling(out, 716, 80 + 20.0 * (double)C, n);
    for (size_t i = 0; i < n; i += point_stride(n)) {
        size_t observed = (size_t)data->y[i];
        svg_point(&top, data->X[i], row_proba[i * C + observed], 2.5, svg_colour(observed),
                  NULL);
    }
    for (size_t c = 0; c < C; ++c) {
        svg_line(&top, axis->grid, curves + c, GRID, C, svg_colour(c), 2.5, 0);
        svg_legend(out, 716, 60 + 20.0 * (double)c, svg_colour(c),
                   class_label(p->model, c, buffer, sizeof buffer));
    }
done:
    free(curves);
    free(predicted);
    free(row_proba);
    free(row_predicted);
    return code;
}

static int plot_one_covariate(FILE *out, const plot_data *p)
{
    const table *data = p->data;
    size_t K = p->K;
    int classification = is_class_family(p->family);
    covariate_axis axis;
    svg_range(data->X, data->n, 1, &axis.low, &axis.high);
    for (size_t g = 0; g < GRID; ++g)
        axis.grid[g] = axis.low + (axis.high - axis.low) * (double)g / (GRID - 1);
    char buffer[64];
    snprintf(axis.title, sizeof axis.title, "%s",
             feature_label(p->model, 0, buffer, sizeof buffer));
    axis.response = data->response_name != NULL ? data->response_name : "response";
    double *gate = malloc(GRID * K * sizeof(double));
    if (gate == NULL)
        return usage_error("out of memory");
    moe_model_gate_proba(p->model, GRID, axis.grid, 1, gate, GRID * K);
    int code = classification ? draw_classification_panel(out, p, &axis)
                              : draw_regression_panel(out, p, &axis);
    if (code == 0) {
        svg_panel bottom;
        svg_panel_begin(&bottom, out, 80, 440, 620, 170, axis.low, axis.high, 0.0, 1.0,
                        axis.title, "gate probability");
        for (size_t k = 0; k < K; ++k)
            svg_line(&bottom, axis.grid, gate + k, GRID, K,
                     classification ? "#555555" : svg_colour(k), 2.0,
                     classification ? (int)(k % 2) : 0);
        if (classification)
            for (size_t k = 0; k < K; ++k)
                svg_text(out, 706, 440 + 20.0 * (double)(k + 1),
                         expert_name(k, buffer, sizeof buffer), "start", 11);
    }
    free(gate);
    return code;
}

/* Several covariates. */
static int plot_several(FILE *out, const plot_data *p)
{
    const table *data = p->data;
    size_t K = p->K, n = data->n, C = p->classes;
    char buffer[64];
    if (!is_class_family(p->family)) {
        double *predicted = malloc(n * sizeof(double));
        if (predicted == NULL)
            return usage_error("out of memory");
        moe_model_predict(p->model, n, data->X, data->d, predicted, n);
        double low_a, high_a, low_b, high_b;
        svg_range(data->y, n, 1, &low_a, &high_a);
        svg_range(predicted, n, 1, &low_b, &high_b);
        double low = low_a < low_b ? low_a : low_b, high = high_a > high_b ? high_a : high_b;
        char y_title[160];
        snprintf(y_title, sizeof y_title, "observed %s",
                 data->response_name != NULL ? data->response_name : "response");
        svg_panel panel;
        svg_panel_begin(&panel, out, 80, 40, 560, 560, low, high, low, high,
                        "predicted (mixture mean)", y_title);
        double diagonal[2] = {low, high};
        svg_line(&panel, diagonal, diagonal, 2, 1, "#000000", 1.0, 1);
        for (size_t i = 0; i < n; i += point_stride(n))
            svg_point(&panel, predicted[i], data->y[i], 2.5,
                      svg_colour(argmax(p->posterior + i * K, K)), NULL);
        note_sampling(out, 660, 100 + 20.0 * (double)K, n);
        for (size_t k = 0; k < K; ++k)
            svg_legend(out, 660, 60 + 20.0 * (double)k, svg_colour(k),
                       expert_name(k, buffer, sizeof buffer));
        svg_text(out, 660, 80 + 20.0 * (double)K, "colour: most probable expert", "start", 11);
        free(predicted);
        return 0;
    }
    size_t width = p->family == MOE_FAMILY_LOGISTIC ? 1 : C;
    double *predicted = malloc(n * width * sizeof(double)), *proba = malloc(n * C * sizeof(double));
    if (predicted == NULL || proba == NULL) {
        free(predicted);
        free(proba);
        return usage_error("out of memory");
    }
    moe_model_predict(p->model, n, data->X, data->d, predicted, n * width);
    class_probabilities(p->family, n, C, predicted, proba);
    double low_a, high_a, low_b, high_b;
    svg_range(data->X, n, data->d, &low_a, &high_a);
    svg_range(data->X + 1, n, data->d, &low_b, &high_b);
    char a_title[128], b_title[128];
    snprintf(a_title, sizeof a_title, "%s", feature_label(p->model, 0, buffer, sizeof buffer));
    snprintf(b_title, sizeof b_title, "%s", feature_label(p->model, 1, buffer, sizeof buffer));
    svg_panel panel;
    svg_panel_begin(&panel, out, 80, 40, 560, 560, low_a, high_a, low_b, high_b, a_title,
                    b_title);
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
        size_t best = argmax(proba + i * C, C);
        int miss = best != (size_t)data->y[i];
        wrong += (size_t)miss;
        if (i % point_stride(n) == 0)
            svg_point(&panel, data->X[i * data->d], data->X[i * data->d + 1], 3.0,
                      svg_colour(best), miss ? "#000000" : NULL);
    }
    note_sampling(out, 660, 100 + 20.0 * (double)C, n);
    for (size_t c = 0; c < C; ++c)
        svg_legend(out, 660, 60 + 20.0 * (double)c, svg_colour(c),
                   class_label(p->model, c, buffer, sizeof buffer));
    char note[96];
    snprintf(note, sizeof note, "ringed: misclassified (%zu of %zu)", wrong, n);
    svg_text(out, 660, 80 + 20.0 * (double)C, note, "start", 11);
    free(predicted);
    free(proba);
    return 0;
}

typedef struct plot_arguments {
    model_data_arguments files;
    const char *output;
} plot_arguments;

/* 0 when the arguments are complete, else the exit status (help printed: -1). */
static int parse_plot_arguments(int argc, char **argv, plot_arguments *a)
{
    for (int at = 1; at < argc; ++at) {
        const char *arg = argv[at];
        int taken = 0;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(plot_help, stdout);
            return -1;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            if ((a->output = option_value(argc, argv, &at)) == NULL)
                return EXIT_USAGE;
        } else if ((taken = model_data_argument(argc, argv, &at, "plot", &a->files)) < 0) {
            return -taken;
        } else if (taken == 0) {
            return usage_error("plot: unknown option %s (see moe plot --help)", arg);
        }
    }
    if (a->files.model_path == NULL || a->files.data_path == NULL || a->output == NULL)
        return usage_error("plot: a model, a data file and -o FILE.svg are needed");
    return 0;
}

/* The SVG into `output`, replaced only when the whole drawing succeeded. */
static int write_plot(const plot_data *p, const char *output, const char *response)
{
    atomic_file file;
    char error[600];
    if (atomic_file_open(&file, output, error, sizeof error) != 0) {
        fprintf(stderr, "moe: %s\n", error);
        return EXIT_FIT_PROBLEM;
    }
    const char *family = p->family == MOE_FAMILY_GAUSSIAN ? "Gaussian" : moe_family_name(p->family);
    char title[200];
    snprintf(title, sizeof title, "%s: a mixture of %zu %s expert%s", response, p->K, family,
             p->K == 1 ? "" : "s");
    int one = p->d == 1;
    svg_begin(file.stream, 860, one ? 670 : 660, title);
    int code = one ? plot_one_covariate(file.stream, p) : plot_several(file.stream, p);
    svg_end(file.stream);
    if (code != 0) {
        atomic_file_abandon(&file);
    } else if (atomic_file_commit(&file, error, sizeof error) != 0) {
        fprintf(stderr, "moe: %s\n", error);
        code = EXIT_FIT_PROBLEM;
    }
    return code;
}

int command_plot(int argc, char **argv)
{
    plot_arguments a = {{NULL, NULL, NULL, ','}, NULL};
    int code = parse_plot_arguments(argc, argv, &a);
    if (code != 0)
        return code < 0 ? 0 : code;
    moe_model_t *model = NULL;
    if (moe_model_load(&model, a.files.model_path) != MOE_OK)
        return usage_error("%s", moe_last_error());
    const char *response = a.files.response;
    if (response == NULL)
        response = moe_model_get_name(model, MOE_NAME_RESPONSE, 0);
    if (response == NULL) {
        moe_model_free(model);
        return usage_error("plot: the model has no response name; give --response");
    }
    if (moe_model_n_features(model) == 0 && is_class_family(moe_model_family(model))) {
        moe_model_free(model);
        return usage_error("plot: the model has no features to draw its classes against");
    }
    plot_data p;
    memset(&p, 0, sizeof p);
    p.model = model;
    p.family = moe_model_family(model);
    p.K = moe_model_n_experts(model);
    p.d = moe_model_n_features(model);
    p.classes = model_classes(model);
    table data;
    code = read_for_model(a.files.data_path, model, response, a.files.delimiter, &data);
    if (code != 0) {
        moe_model_free(model);
        return code;
    }
    p.data = &data;
    p.posterior = malloc(data.n * p.K * sizeof(double));
    if (p.posterior == NULL) {
        code = usage_error("out of memory");
    } else if (moe_model_posterior(model, data.n, data.X, data.d, data.y, p.posterior,
                                   data.n * p.K) != MOE_OK) {
        char buffer[1024];
        fprintf(stderr, "moe: %s\n", row_message(moe_last_error(), a.files.data_path, &data, 0,
                                                  buffer, sizeof buffer));
        code = EXIT_FIT_PROBLEM;
    } else {
        code = write_plot(&p, a.output, response);
    }
    free(p.posterior);
    table_free(&data);
    moe_model_free(model);
    return code;
}
