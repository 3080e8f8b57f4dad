/*
 * fit_gaussian: the C version of
 *
 *   moe fit examples/data/regimes.csv --response response -k 2
 *
 * It reads the same bundled data (columns dose, age, response; 500 rows
 * drawn from two regression regimes, see examples/data/README.md), fits two
 * Gaussian experts with em and the library's default options, as the tool
 * does, so it prints the same coefficients and log-likelihood. It then sets
 * them beside the parameters that generated the data and round-trips the
 * model through a file.
 *
 * Build against an installed libmoe and run from the top of the source tree:
 *   cc examples/fit_gaussian.c $(pkg-config --cflags --libs moe) -lm -o fit_gaussian
 *   ./fit_gaussian [DATA.csv]
 * or with CMake: see examples/CMakeLists.txt (find_package(moe)), which
 * builds in the data file's full path.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */

#include <moe/moe.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MOE_EXAMPLES_DATA_DIR
#define DEFAULT_DATA MOE_EXAMPLES_DATA_DIR "/regimes.csv"
#else
#define DEFAULT_DATA "examples/data/regimes.csv" /* relative to the source tree */
#endif

#define K 2        /* experts */
#define D 2        /* features: dose, age */
#define P (D + 1)  /* inputs: intercept first, then the features */

static const char *const feature_names[D] = {"dose", "age"};
static const char *const response_name = "response";

/* ------------------------------------------------------------------------ */
/* The regimes that generated the data (examples/data/README.md)            */
/* ------------------------------------------------------------------------ */

/* Regime 0 is taken with probability 1 / (1 + exp(-(3 dose + 2 age))). */
static const double true_experts[K][P] = {
    {1.0, 2.0, 0.0},   /* 1 + 2 dose */
    {-2.0, 0.5, -1.0}, /* -2 + 0.5 dose - age */
};
static const double true_log_odds[P] = {0.0, 3.0, 2.0}; /* regime 0 against regime 1 */
static const double true_variance = 0.09;                /* noise 0.3 e, e ~ N(0, 1) */

/* ------------------------------------------------------------------------ */
/* Reading the CSV file (plain numbers, no quoting: enough for this file)   */
/* ------------------------------------------------------------------------ */

typedef struct table {
    double *X; /* n rows of dose, age */
    double *y;
    size_t n;
} table;

/* Split a line at commas in place; returns the number of fields (at most max). */
static size_t split(char *line, char **fields, size_t max)
{
    line[strcspn(line, "\r\n")] = '\0';
    size_t count = 0;
    for (char *field = line; count < max; ++count) {
        fields[count] = field;
        char *comma = strchr(field, ',');
        if (comma == NULL)
            return count + 1;
        *comma = '\0';
        field = comma + 1;
    }
    return count;
}

static int read_table(const char *path, table *data)
{
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        perror(path);
        fprintf(stderr, "fit_gaussian: run from the top of the source tree, or pass the "
                        "path of regimes.csv\n");
        return 1;
    }
    char line[1024];
    char *fields[16];
    int column[D + 1] = {-1, -1, -1}; /* dose, age, response */
    size_t count = fgets(line, sizeof line, file) ? split(line, fields, 16) : 0;
    for (size_t c = 0; c < count; ++c)
        for (size_t j = 0; j <= D; ++j)
            if (strcmp(fields[c], j < D ? feature_names[j] : response_name) == 0)
                column[j] = (int)c;
    if (column[0] < 0 || column[1] < 0 || column[2] < 0) {
        fprintf(stderr, "fit_gaussian: %s needs the columns dose, age and response\n", path);
        fclose(file);
        return 1;
    }
    size_t capacity = 0;
    int rc = 0;
    memset(data, 0, sizeof *data);
    for (size_t row = 2; fgets(line, sizeof line, file) != NULL; ++row) {
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue; /* a blank line, e.g. at the end */
        if (data->n == capacity) {
            capacity = capacity ? 2 * capacity : 512;
            double *X = realloc(data->X, capacity * D * sizeof(double));
            if (X != NULL)
                data->X = X;
            double *y = realloc(data->y, capacity * sizeof(double));
            if (y != NULL)
                data->y = y;
            if (X == NULL || y == NULL) {
                fprintf(stderr, "fit_gaussian: out of memory\n");
                rc = 1;
                break;
            }
        }
        count = split(line, fields, 16);
        double values[D + 1];
        for (size_t j = 0; j <= D && rc == 0; ++j) {
            char *end = NULL;
            const char *text = (size_t)column[j] < count ? fields[column[j]] : "";
            values[j] = strtod(text, &end);
            if (end == text || *end != '\0') {
                fprintf(stderr, "fit_gaussian: %s line %zu: '%s' is not a number\n", path,
                        row, text);
                rc = 1;
            }
        }
        if (rc != 0)
            break;
        data->X[data->n * D] = values[0];
        data->X[data->n * D + 1] = values[1];
        data->y[data->n] = values[2];
        ++data->n;
    }
    fclose(file);
    if (rc == 0 && data->n == 0) {
        fprintf(stderr, "fit_gaussian: %s has no data rows\n", path);
        rc = 1;
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* Print a failure with both the static and the detailed message. */
static int failed(const char *what, moe_status status, const char *detail)
{
    fprintf(stderr, "fit_gaussian: %s failed: %s (status %d)", what, moe_strerror(status),
            (int)status);
    if (detail && detail[0])
        fprintf(stderr, ": %s", detail);
    fprintf(stderr, "\n");
    return 1;
}

#define CHECK(call, what)                                                \
    do {                                                                 \
        moe_status check_status_ = (call);                               \
        if (check_status_ != MOE_OK) {                                   \
            failed((what), check_status_, moe_last_error());             \
            goto done;                                                   \
        }                                                                \
    } while (0)

/* Which regime fitted expert 0 estimates: the closer set of coefficients (K = 2). */
static void align(const double *fitted, size_t match[K])
{
    double straight = 0.0, swapped = 0.0;
    for (size_t k = 0; k < K; ++k)
        for (size_t j = 0; j < P; ++j) {
            straight += pow(fitted[k * P + j] - true_experts[k][j], 2);
            swapped += pow(fitted[k * P + j] - true_experts[K - 1 - k][j], 2);
        }
    match[0] = straight <= swapped ? 0 : 1;
    match[1] = 1 - match[0];
}

int main(int argc, char **argv)
{
    int rc = 1;
    const char *data_path = argc > 1 ? argv[1] : DEFAULT_DATA;
    table data = {NULL, NULL, 0};
    double *pred = NULL, *pred_loaded = NULL;
    moe_model_t *model = NULL;
    moe_model_t *loaded = NULL;
    moe_fitter_t *fitter = NULL;
    char path[4096] = "";
    int have_file = 0;

    if (read_table(data_path, &data) != 0)
        goto done;
    size_t n = data.n;
    pred = malloc(sizeof(double) * n);
    pred_loaded = malloc(sizeof(double) * n);
    if (!pred || !pred_loaded) {
        fprintf(stderr, "fit_gaussian: out of memory\n");
        goto done;
    }
    printf("libmoe %s (header %s), data %s\n\n", moe_version_string(), MOE_VERSION_STRING,
           data_path);

    /* The model: 2 Gaussian experts on dose and age, with intercepts. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    CHECK(moe_model_create(&model, &spec), "moe_model_create");

    /* em with the default options (5 restarts, seed 0), as `moe fit` uses them. */
    CHECK(moe_fitter_create(&fitter, "em"), "moe_fitter_create(\"em\")");
    moe_status status = moe_fitter_fit(fitter, model, n, data.X, D, data.y, NULL);
    if (status != MOE_OK) {
        failed("moe_fitter_fit", status, moe_fitter_last_error(fitter));
        goto done;
    }

    moe_fit_report report = MOE_FIT_REPORT_INIT;
    CHECK(moe_fitter_get_report(fitter, &report), "moe_fitter_get_report");

    double gate[K * P], experts[K * P], variances[K];
    CHECK(moe_model_get_gate(model, gate, K * P), "moe_model_get_gate");
    CHECK(moe_model_get_experts(model, experts, K * P), "moe_model_get_experts");
    CHECK(moe_model_get_variances(model, variances, K), "moe_model_get_variances");

    /*
     * Fitted expert k estimates regime match[k]. The fitted gate holds each
     * expert's log-odds against the last one, so the true row of expert 0 is
     * regime match[0]'s log-odds against regime match[1].
     */
    size_t match[K];
    align(experts, match);
    static const char *const input_names[P] = {"(intercept)", "dose", "age"};
    printf("%-12s %10s %10s    %10s %10s\n", "", "expert 1", "expert 2", "regime", "regime");
    printf("%-12s %10s %10s    %10zu %10zu\n", "", "fitted", "fitted", match[0] + 1,
           match[1] + 1);
    double worst = 0.0;
    for (size_t j = 0; j < P; ++j) {
        printf("%-12s %10.4f %10.4f    %10.4f %10.4f\n", input_names[j], experts[j],
               experts[P + j], true_experts[match[0]][j], true_experts[match[1]][j]);
        for (size_t k = 0; k < K; ++k)
            worst = fmax(worst, fabs(experts[k * P + j] - true_experts[match[k]][j]));
    }
    printf("%-12s %10.4f %10.4f    %10.4f %10.4f\n", "variance", variances[0], variances[1],
           true_variance, true_variance);
    double sign = match[0] == 0 ? 1.0 : -1.0;
    printf("gate: log-odds of expert 1 against expert 2\n");
    for (size_t j = 0; j < P; ++j)
        printf("%-12s %10.4f %10s    %10.4f\n", input_names[j], gate[j], "",
               sign * true_log_odds[j] + 0.0); /* + 0.0: print a zero without its sign */
    printf("\nlargest expert coefficient error: %.4f\n", worst);

    moe_criteria criteria = MOE_CRITERIA_INIT;
    CHECK(moe_model_criteria(model, n, data.X, D, data.y, NULL, &criteria),
          "moe_model_criteria");
    printf("log-likelihood %.6f  AIC %.4f  BIC %.4f  ICL %.4f  (n = %zu)\n", criteria.loglik,
           criteria.aic, criteria.bic, criteria.icl, n);
    printf("em: %zu restarts (best %zu), %zu iterations, %s\n\n", report.n_restarts,
           report.best_restart + 1, report.iterations,
           report.converged ? "converged" : "not converged");

    /* Save to a temporary file, load it back, compare predictions. */
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !tmpdir[0])
        tmpdir = "/tmp";
    snprintf(path, sizeof path, "%s/fit_gaussian_XXXXXX", tmpdir);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("fit_gaussian: mkstemp");
        goto done;
    }
    close(fd);
    have_file = 1;

    CHECK(moe_model_save(model, path), "moe_model_save");
    CHECK(moe_model_load(&loaded, path), "moe_model_load");
    CHECK(moe_model_predict(model, n, data.X, D, pred, n), "moe_model_predict");
    CHECK(moe_model_predict(loaded, n, data.X, D, pred_loaded, n),
          "moe_model_predict (loaded)");
    double diff = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double e = fabs(pred[i] - pred_loaded[i]);
        if (!(e <= diff)) /* also catches NaN */
            diff = e;
    }
    printf("saved to %s and loaded back: largest prediction difference %g\n", path, diff);
    if (!(diff == 0.0)) {
        fprintf(stderr, "fit_gaussian: the loaded model predicts differently\n");
        goto done;
    }
    printf("predictions agree\n");
    rc = 0;

done:
    if (have_file)
        remove(path);
    moe_model_free(loaded);
    moe_model_free(model);
    moe_fitter_free(fitter);
    free(pred_loaded);
    free(pred);
    free(data.y);
    free(data.X);
    return rc;
}
