/*
 * cqt_uci: Fig. 6 of Makkuva, Oh, Kannan & Viswanath, "Breaking the gridlock in
 * Mixture-of-Experts: Consistent and Efficient Algorithms" (ICML 2019), on a UCI regression
 * data set: the test mean squared error of the tensor method (`cqt`) against joint EM, with
 * the test responses' variance as the reference (docs/REPRODUCTIONS.md, "Fig. 6").
 *
 * The paper's protocol: inputs whitened, responses scaled into (-1, 1), a random 75% of the
 * rows for training and the rest for testing, k = 3 and the hyper-parameters joint EM chose
 * (airfoil: sigma = 0.1, linear experts). Here the whitening (mean and Cholesky factor of the
 * covariance) and the scaling (the range) are the training rows', applied to the test rows;
 * the models have no intercepts (cqt's assumption). Each split is one trial:
 *
 *   cqt            the shipped defaults, the noise estimated;
 *   cqt sigma      the same with sigma given (the paper's hyper-parameter);
 *   joint EM       em on every block from one random start (experts on the unit sphere, gate
 *                  rows in the unit ball), the variance held at sigma^2, Newton gate
 *                  M-steps, 100 iterations: the paper's baseline as in its Fig. 3;
 *   em             libmoe's em with its defaults (start search, variances estimated).
 *
 * The file: whitespace-separated numbers, one row per line, the response last (the UCI
 * airfoil file as distributed is such a file; data/README.md).
 *
 * Build (against an installed libmoe; ctest builds it as paper_cqt_uci):
 *   cc -std=c11 -O2 examples/paper/cqt_uci.c $(pkg-config --cflags --libs moe) -lm -o cqt_uci
 * Usage: cqt_uci FILE [--trials T] [--seed S] [--sigma S] [--k K]
 * Exit status: 0 when every fit succeeded, 2 on an error. The comparison is reported, not
 * checked: the paper gives no numbers, only bars.
 */
#include <moe/moe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_D 16
#define MAX_K 8

static void fail(const char *what, const char *message)
{
    fprintf(stderr, "cqt_uci: %s: %s\n", what, message);
    exit(2);
}

/* The rows of FILE into *data (n x columns), every row with the same number of columns. */
static size_t read_table(const char *path, double **data, size_t *columns)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        fail(path, "cannot open");
    size_t n = 0, capacity = 0, width = 0;
    double *values = NULL;
    char line[4096];
    while (fgets(line, sizeof line, file) != NULL) {
        double row[MAX_D + 1];
        size_t count = 0;
        char *cursor = line, *end = NULL;
        for (;;) {
            double value = strtod(cursor, &end);
            if (end == cursor)
                break;
            if (count == MAX_D + 1)
                fail(path, "too many columns");
            row[count++] = value;
            cursor = end;
        }
        if (count == 0)
            continue;
        if (width == 0)
            width = count;
        if (count != width)
            fail(path, "rows of different lengths");
        if (n == capacity) {
            capacity = capacity ? 2 * capacity : 1024;
            values = realloc(values, capacity * width * sizeof(double));
            if (values == NULL)
                fail(path, "out of memory");
        }
        memcpy(values + n * width, row, width * sizeof(double));
        ++n;
    }
    fclose(file);
    if (width < 2)
        fail(path, "needs at least one feature and the response");
    *data = values;
    *columns = width;
    return n;
}

/* x <- L^-1 (x - mean) for the training rows' mean and covariance C = L L'. */
typedef struct whitening {
    size_t d;
    double mean[MAX_D], factor[MAX_D * MAX_D];
    double y_low, y_high;
} whitening;

static void fit_whitening(whitening *w, const double *data, size_t columns, const size_t *rows,
                          size_t n)
{
    size_t d = columns - 1;
    memset(w, 0, sizeof *w);
    w->d = d;
    w->y_low = INFINITY;
    w->y_high = -INFINITY;
    for (size_t r = 0; r < n; ++r) {
        const double *row = data + rows[r] * columns;
        for (size_t j = 0; j < d; ++j)
            w->mean[j] += row[j] / (double)n;
        if (row[d] < w->y_low)
            w->y_low = row[d];
        if (row[d] > w->y_high)
            w->y_high = row[d];
    }
    double covariance[MAX_D * MAX_D] = {0};
    for (size_t r = 0; r < n; ++r) {
        const double *row = data + rows[r] * columns;
        for (size_t a = 0; a < d; ++a)
            for (size_t b = 0; b <= a; ++b)
                covariance[a * d + b] +=
                    (row[a] - w->mean[a]) * (row[b] - w->mean[b]) / (double)(n - 1);
    }
    for (size_t a = 0; a < d; ++a)
        for (size_t b = 0; b <= a; ++b) {
            double sum = covariance[a * d + b];
            for (size_t c = 0; c < b; ++c)
                sum -= w->factor[a * d + c] * w->factor[b * d + c];
            if (a == b) {
                if (!(sum > 0.0))
                    fail("whitening", "the training features' covariance is singular");
                w->factor[a * d + a] = sqrt(sum);
            } else
                w->factor[a * d + b] = sum / w->factor[b * d + b];
        }
}

/* The rows' whitened features (n x d) and scaled responses. */
static void apply_whitening(const whitening *w, const double *data, size_t columns,
                            const size_t *rows, size_t n, double *X, double *y)
{
    size_t d = w->d;
    for (size_t r = 0; r < n; ++r) {
        const double *row = data + rows[r] * columns;
        double *x = X + r * d;
        for (size_t a = 0; a < d; ++a) {
            double sum = row[a] - w->mean[a];
            for (size_t c = 0; c < a; ++c)
                sum -= w->factor[a * d + c] * x[c];
            x[a] = sum / w->factor[a * d + a];
        }
        y[r] = 2.0 * (row[d] - w->y_low) / (w->y_high - w->y_low) - 1.0;
    }
}

/* ---- Fits ---------------------------------------------------------------------------------- */

static void set(moe_fitter_t *fitter, const char *name, const char *value)
{
    if (moe_fitter_set_option(fitter, name, value) != MOE_OK)
        fail(name, moe_fitter_last_error(fitter));
}

static moe_model_t *new_model(size_t k, size_t d)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = k;
    spec.n_features = d;
    spec.intercept = 0;
    moe_model_t *model = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK)
        fail("moe_model_create", moe_last_error());
    return model;
}

typedef struct random_start {
    size_t k, d;
    double sigma;
    uint64_t seed;
} random_start;

/* Joint EM's start: experts uniform on the sphere, gate rows uniform in the unit ball. */
static moe_status random_parameters(void *user, moe_model_t *model, size_t restart,
                                    const moe_rows *rows)
{
    (void)rows;
    const random_start *start = user;
    moe_rng rng;
    moe_rng_seed(&rng, start->seed, 1000 + restart);
    size_t k = start->k, d = start->d;
    double A[MAX_K * MAX_D], W[MAX_K * MAX_D] = {0}, variances[MAX_K];
    for (size_t i = 0; i < k; ++i) {
        double length = 0.0;
        for (size_t j = 0; j < d; ++j) {
            A[i * d + j] = moe_rng_normal(&rng);
            length += A[i * d + j] * A[i * d + j];
        }
        for (size_t j = 0; j < d; ++j)
            A[i * d + j] /= sqrt(length);
        variances[i] = start->sigma * start->sigma;
    }
    for (size_t i = 0; i + 1 < k; ++i) {
        double length = 0.0;
        for (size_t j = 0; j < d; ++j) {
            W[i * d + j] = moe_rng_normal(&rng);
            length += W[i * d + j] * W[i * d + j];
        }
        double radius = pow(moe_rng_uniform(&rng), 1.0 / (double)d) / sqrt(length);
        for (size_t j = 0; j < d; ++j)
            W[i * d + j] *= radius;
    }
    moe_status status = moe_model_set_experts(model, A, k * d);
    if (status == MOE_OK)
        status = moe_model_set_gate(model, W, k * d);
    if (status == MOE_OK)
        status = moe_model_set_variances(model, variances, k);
    return status;
}

enum { CQT, CQT_SIGMA, JOINT, EM, METHODS };
static const char *const method_names[METHODS] = {"cqt", "cqt sigma", "joint EM", "em"};

/* Fit one method on the training rows; the test MSE of its predicted mean. */
static double test_error(int method, size_t k, size_t d, double sigma, uint64_t seed,
                         const double *X, const double *y, size_t n, const double *test_X,
                         const double *test_y, size_t test_n, double *predicted)
{
    moe_model_t *model = new_model(k, d);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, method == CQT || method == CQT_SIGMA ? "cqt" : "em");
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
    set(fitter, "seed", text);
    random_start start = {k, d, sigma, seed};
    if (method == CQT_SIGMA) {
        snprintf(text, sizeof text, "%g", sigma);
        set(fitter, "sigma", text);
    } else if (method == JOINT) {
        moe_fitter_set_start(fitter, random_parameters, &start);
        set(fitter, "n_init", "1");
        set(fitter, "max_iter", "100");
        set(fitter, "update_variance", "0");
        set(fitter, "gate_solver", "newton");
    }
    if (moe_fitter_fit(fitter, model, n, X, d, y, NULL) != MOE_OK)
        fail(method_names[method], moe_fitter_last_error(fitter));
    if (moe_model_predict(model, test_n, test_X, d, predicted, test_n) != MOE_OK)
        fail("predict", moe_last_error());
    double error = 0.0;
    for (size_t r = 0; r < test_n; ++r)
        error += (test_y[r] - predicted[r]) * (test_y[r] - predicted[r]) / (double)test_n;
    moe_fitter_free(fitter);
    moe_model_free(model);
    return error;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        fail("usage", "cqt_uci FILE [--trials T] [--seed S] [--sigma S] [--k K]");
    size_t trials = 10, k = 3;
    uint64_t seed = 1;
    double sigma = 0.1;
    for (int a = 2; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--trials") == 0)
            trials = (size_t)strtoul(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--seed") == 0)
            seed = strtoull(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--sigma") == 0)
            sigma = strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--k") == 0)
            k = (size_t)strtoul(argv[a + 1], NULL, 10);
        else
            fail(argv[a], "unknown option");
    }
    if (trials == 0 || k < 2 || k > MAX_K || !(sigma > 0.0))
        fail("options", "trials >= 1, 2 <= k <= 8 and sigma > 0 are needed");
    double *data = NULL;
    size_t columns = 0, n = read_table(argv[1], &data, &columns), d = columns - 1;
    size_t train_n = (3 * n) / 4, test_n = n - train_n;
    size_t *order = malloc(n * sizeof(size_t));
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    double *predicted = malloc(test_n * sizeof(double));
    if (order == NULL || X == NULL || y == NULL || predicted == NULL)
        fail("memory", "out of memory");
    printf("Fig. 6: %s, %zu rows, d = %zu; k = %zu, sigma = %g; %zu random 75/25 splits\n",
           argv[1], n, d, k, sigma, trials);
    double sums[METHODS + 1] = {0}, squares[METHODS + 1] = {0};
    size_t wins = 0;
    for (size_t trial = 0; trial < trials; ++trial) {
        moe_rng rng;
        moe_rng_seed(&rng, seed, trial);
        for (size_t r = 0; r < n; ++r)
            order[r] = r;
        for (size_t r = n - 1; r > 0; --r) {
            size_t s = (size_t)(moe_rng_uniform(&rng) * (double)(r + 1));
            if (s > r)
                s = r;
            size_t swap = order[r];
            order[r] = order[s];
            order[s] = swap;
        }
        whitening w;
        fit_whitening(&w, data, columns, order, train_n);
        apply_whitening(&w, data, columns, order, n, X, y);
        const double *test_X = X + train_n * d, *test_y = y + train_n;
        double mean = 0.0, variance = 0.0, errors[METHODS];
        for (size_t r = 0; r < test_n; ++r)
            mean += test_y[r] / (double)test_n;
        for (size_t r = 0; r < test_n; ++r)
            variance += (test_y[r] - mean) * (test_y[r] - mean) / (double)test_n;
        for (int m = 0; m < METHODS; ++m) {
            errors[m] = test_error(m, k, d, sigma, seed + trial, X, y, train_n, test_X, test_y,
                                   test_n, predicted);
            sums[m] += errors[m];
            squares[m] += errors[m] * errors[m];
        }
        sums[METHODS] += variance;
        squares[METHODS] += variance * variance;
        wins += errors[CQT] < errors[JOINT];
    }
    printf("  %-12s test MSE (mean +- sd over splits)\n", "method");
    for (int m = 0; m <= METHODS; ++m) {
        double mean = sums[m] / (double)trials;
        double spread = trials > 1 ? (squares[m] - (double)trials * mean * mean) /
                                         (double)(trials - 1)
                                   : 0.0;
        printf("  %-12s %.4f +- %.4f\n", m < METHODS ? method_names[m] : "test variance", mean,
               spread > 0.0 ? sqrt(spread) : 0.0);
    }
    printf("  cqt below joint EM in %zu of %zu splits\n", wins, trials);
    free(order);
    free(X);
    free(y);
    free(predicted);
    free(data);
    return 0;
}
