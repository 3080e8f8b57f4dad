/*
 * compare_fit: the libmoe side of the comparison with R's flexmix and
 * mixtools (bench/compare_flexmix drives both).
 *
 *   compare_fit generate --n N --d D --k K --seed S --out data.csv
 *       Draws a softmax-gated Gaussian mixture of experts with known truth:
 *       x ~ N(0, I_d); gate pi(x) = softmax(W [1, x]) with intercepts and
 *       slopes on every covariate (last expert the zero reference row);
 *       expert k: y = beta_k' [1, x] + sigma_k e. Experts are separated by
 *       their intercepts (4 apart) and have different noise levels. Writes a
 *       CSV with header x1..xD,y and every value as "%.17g", and prints the
 *       true parameters and their log-likelihood on the data.
 *
 *   compare_fit fit --data data.csv --k K [--n-init R] [--tol T]
 *                   [--max-iter M] [--seed S] [--threads T] [--set name=value]...
 *       Fits a Gaussian MoE with K experts (intercept on, gate on all the
 *       CSV's covariates) with the "em" estimator and prints one line
 *
 *         libmoe seconds=... loglik=... iterations=... total_iterations=...
 *                restarts=R converged=0|1 report_seconds=...
 *
 *       seconds is the wall time of moe_fitter_fit alone (all restarts, no
 *       CSV parsing); report_seconds is the fit report's own timing;
 *       iterations are those of the winning restart. Defaults: tol 1e-8,
 *       n_init 5, max_iter 10000, seed 0; --threads is passed to the
 *       fitter only when given. --set passes any other fitter option by
 *       name (moe_fitter_set_option), e.g. --set gate_solver=bound.
 *
 * Uses only the public API. Build (from the repository root):
 *   gcc -std=c11 -O2 -Wall -Wextra -Wpedantic -I include bench/compare_fit.c \
 *       -L build -lmoe -Wl,-rpath,$PWD/build -lm -o compare_fit
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "harness.h"

#include <moe/moe.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* PRNG: splitmix64 for uniforms, Marsaglia's polar method for normals.      */
/* ------------------------------------------------------------------------ */

typedef struct prng {
    uint64_t state;
    int has_spare;
    double spare;
} prng;

static uint64_t prng_next(prng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform on (0, 1), never 0 or 1. */
static double prng_uniform(prng *r)
{
    return ((double)(prng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double prng_normal(prng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * prng_uniform(r) - 1.0;
        v = 2.0 * prng_uniform(r) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    r->spare = v * f;
    r->has_spare = 1;
    return u * f;
}

/* ------------------------------------------------------------------------ */
/* Command-line helpers                                                      */
/* ------------------------------------------------------------------------ */

static int parse_size(const char *text, const char *name, size_t *out)
{
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end); /* accepts 1e5 */
    if (errno != 0 || end == text || *end != '\0' || !(value >= 0.0) || value > 9.0e15 ||
        value != floor(value)) {
        fprintf(stderr, "compare_fit: %s expects a non-negative integer, got '%s'\n", name, text);
        return 0;
    }
    *out = (size_t)value;
    return 1;
}

static int parse_real(const char *text, const char *name, double *out)
{
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(value)) {
        fprintf(stderr, "compare_fit: %s expects a number, got '%s'\n", name, text);
        return 0;
    }
    *out = value;
    return 1;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: compare_fit generate --n N --d D --k K --seed S --out data.csv\n"
            "       compare_fit fit --data data.csv --k K [--n-init R] [--tol T] "
            "[--max-iter M] [--seed S] [--threads T] [--set name=value]...\n");
}

static int check(moe_status status, const char *what)
{
    if (status == MOE_OK)
        return 1;
    const char *detail = moe_last_error();
    fprintf(stderr, "compare_fit: %s failed: %s%s%s\n", what, moe_strerror(status),
            detail[0] ? ": " : "", detail);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* generate                                                                  */
/* ------------------------------------------------------------------------ */

static int run_generate(size_t n, size_t d, size_t K, uint64_t seed, const char *path)
{
    const size_t p = d + 1;
    int ok = 0;
    prng r = {seed * UINT64_C(0x2545f4914f6cdd1d) + UINT64_C(0x853c49e6748fea9b), 0, 0.0};
    double *gate = calloc(K * p, sizeof(double));
    double *experts = calloc(K * p, sizeof(double));
    double *variances = calloc(K, sizeof(double));
    double *logits = calloc(K, sizeof(double));
    double *X = malloc(n * d * sizeof(double));
    double *y = malloc(n * sizeof(double));
    moe_model_t *truth = NULL;
    FILE *out = NULL;
    if (!gate || !experts || !variances || !logits || !X || !y) {
        fprintf(stderr, "compare_fit: out of memory\n");
        goto done;
    }

    /* Truth. Gate: intercepts near zero (balanced experts), slopes of norm
       about 1.5 so that the gate is neither flat nor a hard partition.
       Experts: intercepts 4 apart, slopes N(0, 1), sigma_k = 0.5 + 0.25 k. */
    for (size_t k = 0; k + 1 < K; ++k) {
        gate[k * p] = 0.3 * prng_normal(&r);
        for (size_t j = 1; j < p; ++j)
            gate[k * p + j] = 1.5 * prng_normal(&r) / sqrt((double)d);
    }
    for (size_t k = 0; k < K; ++k) {
        experts[k * p] = 4.0 * (double)k - 2.0 * (double)(K - 1);
        for (size_t j = 1; j < p; ++j)
            experts[k * p + j] = prng_normal(&r);
        double sigma = 0.5 + 0.25 * (double)k;
        variances[k] = sigma * sigma;
    }

    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = prng_normal(&r);
        size_t z = gated_expert(gate, K, d, x, prng_uniform(&r), logits);
        y[i] = expert_mean(experts, z, d, x) + sqrt(variances[z]) * prng_normal(&r);
    }

    out = fopen(path, "w");
    if (out == NULL) {
        fprintf(stderr, "compare_fit: cannot write %s: %s\n", path, strerror(errno));
        goto done;
    }
    for (size_t j = 0; j < d; ++j)
        fprintf(out, "x%zu,", j + 1);
    fputs("y\n", out);
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < d; ++j)
            fprintf(out, "%.17g,", X[i * d + j]);
        fprintf(out, "%.17g\n", y[i]);
    }
    if (ferror(out) || fclose(out) != 0) {
        out = NULL;
        fprintf(stderr, "compare_fit: error writing %s\n", path);
        goto done;
    }
    out = NULL;

    /* Report the truth and its log-likelihood on the data. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_GAUSSIAN;
    spec.n_experts = K;
    spec.n_features = d;
    spec.intercept = 1;
    double loglik = NAN;
    if (!check(moe_model_create(&truth, &spec), "moe_model_create") ||
        !check(moe_model_set_gate(truth, gate, K * p), "moe_model_set_gate") ||
        !check(moe_model_set_experts(truth, experts, K * p), "moe_model_set_experts") ||
        !check(moe_model_set_variances(truth, variances, K), "moe_model_set_variances") ||
        !check(moe_model_loglik(truth, n, X, d, y, NULL, &loglik), "moe_model_loglik"))
        goto done;
    printf("generated n=%zu d=%zu K=%zu seed=%llu out=%s\n", n, d, K, (unsigned long long)seed,
           path);
    for (size_t k = 0; k < K; ++k) {
        printf("truth expert %zu: sigma=%.4f beta=[", k + 1, sqrt(variances[k]));
        for (size_t j = 0; j < p; ++j)
            printf("%s%.4f", j ? ", " : "", experts[k * p + j]);
        printf("] gate=[");
        for (size_t j = 0; j < p; ++j)
            printf("%s%.4f", j ? ", " : "", gate[k * p + j]);
        printf("]\n");
    }
    printf("truth loglik=%.10f free_params=%zu\n", loglik, moe_model_n_free_params(truth));
    ok = 1;

done:
    if (out != NULL)
        fclose(out);
    moe_model_free(truth);
    free(gate);
    free(experts);
    free(variances);
    free(logits);
    free(X);
    free(y);
    return ok ? 0 : 1;
}

/* ------------------------------------------------------------------------ */
/* CSV reading                                                               */
/* ------------------------------------------------------------------------ */

/* Reads a header line and rows of numbers, all with the same number of
   columns (>= 2); the last column is y. */
static int read_csv(const char *path, size_t *n_out, size_t *d_out, double **X_out,
                    double **y_out)
{
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        fprintf(stderr, "compare_fit: cannot read %s: %s\n", path, strerror(errno));
        return 0;
    }
    char *line = NULL;
    size_t line_capacity = 0, columns = 0, n = 0, capacity = 0, line_number = 1;
    double *values = NULL, *row = NULL;
    int ok = 0;
    ssize_t length = getline(&line, &line_capacity, in);
    if (length <= 0) {
        fprintf(stderr, "compare_fit: %s is empty\n", path);
        goto done;
    }
    columns = 1;
    for (const char *c = line; *c; ++c)
        columns += *c == ',';
    if (columns < 2) {
        fprintf(stderr, "compare_fit: %s needs at least one covariate and y\n", path);
        goto done;
    }
    row = malloc(columns * sizeof(double));
    if (row == NULL)
        goto oom;
    while ((length = getline(&line, &line_capacity, in)) > 0) {
        ++line_number;
        char *cursor = line;
        while (*cursor == ' ' || *cursor == '\t')
            ++cursor;
        if (*cursor == '\n' || *cursor == '\r' || *cursor == '\0')
            continue; /* blank line */
        for (size_t j = 0; j < columns; ++j) {
            char *end = NULL;
            row[j] = strtod(cursor, &end);
            if (end == cursor || !isfinite(row[j])) {
                fprintf(stderr, "compare_fit: %s line %zu column %zu is not a finite number\n",
                        path, line_number, j + 1);
                goto done;
            }
            cursor = end;
            while (*cursor == ' ' || *cursor == '\t')
                ++cursor;
            if (j + 1 < columns) {
                if (*cursor != ',') {
                    fprintf(stderr, "compare_fit: %s line %zu has %zu columns, expected %zu\n",
                            path, line_number, j + 1, columns);
                    goto done;
                }
                ++cursor;
            }
        }
        if (*cursor != '\n' && *cursor != '\r' && *cursor != '\0') {
            fprintf(stderr, "compare_fit: %s line %zu has more than %zu columns\n", path,
                    line_number, columns);
            goto done;
        }
        if (n == capacity) {
            size_t grown = capacity ? 2 * capacity : 4096;
            double *bigger = realloc(values, grown * columns * sizeof(double));
            if (bigger == NULL)
                goto oom;
            values = bigger;
            capacity = grown;
        }
        memcpy(values + n * columns, row, columns * sizeof(double));
        ++n;
    }
    if (n == 0) {
        fprintf(stderr, "compare_fit: %s has no data rows\n", path);
        goto done;
    }
    {
        size_t d = columns - 1;
        double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
        if (X == NULL || y == NULL) {
            free(X);
            free(y);
            goto oom;
        }
        for (size_t i = 0; i < n; ++i) {
            memcpy(X + i * d, values + i * columns, d * sizeof(double));
            y[i] = values[i * columns + d];
        }
        *n_out = n;
        *d_out = d;
        *X_out = X;
        *y_out = y;
        ok = 1;
    }
    goto done;
oom:
    fprintf(stderr, "compare_fit: out of memory reading %s\n", path);
done:
    free(line);
    free(row);
    free(values);
    fclose(in);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* fit                                                                       */
/* ------------------------------------------------------------------------ */

#define MAX_SETTINGS 16
static const char *settings[MAX_SETTINGS]; /* "name=value" fitter options (--set) */
static size_t n_settings;

static int apply_settings(moe_fitter_t *fitter)
{
    for (size_t s = 0; s < n_settings; ++s) {
        char name[128];
        const char *equals = strchr(settings[s], '=');
        size_t length = equals == NULL ? 0 : (size_t)(equals - settings[s]);
        if (length == 0 || length >= sizeof name) {
            fprintf(stderr, "compare_fit: --set expects name=value, got '%s'\n", settings[s]);
            return 0;
        }
        memcpy(name, settings[s], length);
        name[length] = '\0';
        if (!check(moe_fitter_set_option(fitter, name, equals + 1), name))
            return 0;
    }
    return 1;
}

static int run_fit(const char *path, size_t K, size_t n_init, double tol, size_t max_iter,
                   size_t seed, int have_threads, size_t threads)
{
    size_t n = 0, d = 0;
    double *X = NULL, *y = NULL;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    int ok = 0;
    if (!read_csv(path, &n, &d, &X, &y))
        return 1;

    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_GAUSSIAN;
    spec.n_experts = K;
    spec.n_features = d;
    spec.intercept = 1;
    if (!check(moe_model_create(&model, &spec), "moe_model_create") ||
        !check(moe_fitter_create(&fitter, "em"), "moe_fitter_create") ||
        !check(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, (long long)n_init), "n_init") ||
        !check(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, tol), "tol") ||
        !check(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, (long long)max_iter), "max_iter") ||
        !check(moe_fitter_set_int(fitter, MOE_OPT_SEED, (long long)seed), "seed") ||
        (have_threads &&
         !check(moe_fitter_set_int(fitter, MOE_OPT_THREADS, (long long)threads), "threads")) ||
        !apply_settings(fitter))
        goto done;

    double start = now();
    moe_status status = moe_fitter_fit(fitter, model, n, X, d, y, NULL);
    double seconds = now() - start;
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    if (status != MOE_OK) {
        fprintf(stderr, "compare_fit: moe_fitter_fit failed: %s: %s\n", moe_strerror(status),
                moe_fitter_last_error(fitter));
        goto done;
    }
    printf("libmoe seconds=%.6f loglik=%.10f iterations=%zu total_iterations=%zu restarts=%zu "
           "converged=%d report_seconds=%.6f threads=%zu\n",
           seconds, report.loglik, report.iterations, report.total_iterations,
           report.n_restarts, report.converged ? 1 : 0, report.seconds, threads);
    /* Details for the human reader, on stderr so stdout stays one line. */
    fprintf(stderr,
            "libmoe %s: n=%zu d=%zu K=%zu free_params=%zu best_restart=%zu "
            "monotonicity_violations=%zu degenerate_events=%zu separation_events=%zu\n",
            moe_version_string(), n, d, K, moe_model_n_free_params(model), report.best_restart,
            report.monotonicity_violations, report.degenerate_events, report.separation_events);
    {
        size_t p = moe_model_n_inputs(model);
        double *gate = malloc(K * p * sizeof(double));
        double *experts = malloc(K * p * sizeof(double));
        double *variances = malloc(K * sizeof(double));
        if (gate && experts && variances &&
            moe_model_get_gate(model, gate, K * p) == MOE_OK &&
            moe_model_get_experts(model, experts, K * p) == MOE_OK &&
            moe_model_get_variances(model, variances, K) == MOE_OK) {
            for (size_t k = 0; k < K; ++k) {
                fprintf(stderr, "libmoe expert %zu: sigma=%.4f beta=[", k + 1,
                        sqrt(variances[k]));
                for (size_t j = 0; j < p; ++j)
                    fprintf(stderr, "%s%.4f", j ? ", " : "", experts[k * p + j]);
                fprintf(stderr, "] gate=[");
                for (size_t j = 0; j < p; ++j)
                    fprintf(stderr, "%s%.4f", j ? ", " : "", gate[k * p + j]);
                fprintf(stderr, "]\n");
            }
        }
        free(gate);
        free(experts);
        free(variances);
    }
    ok = 1;

done:
    moe_fitter_free(fitter);
    moe_model_free(model);
    free(X);
    free(y);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    const char *mode = argv[1];
    size_t n = 0, d = 0, K = 0, seed = 0, n_init = 5, max_iter = 10000, threads = 1;
    int have_n = 0, have_d = 0, have_k = 0, have_threads = 0;
    double tol = 1e-8;
    const char *out = NULL, *data = NULL;
    for (int a = 2; a < argc; ++a) {
        const char *name = argv[a];
        if (a + 1 >= argc) {
            fprintf(stderr, "compare_fit: %s needs a value\n", name);
            usage();
            return 2;
        }
        const char *value = argv[++a];
        int good = 1;
        if (strcmp(name, "--n") == 0)
            good = parse_size(value, name, &n), have_n = 1;
        else if (strcmp(name, "--d") == 0)
            good = parse_size(value, name, &d), have_d = 1;
        else if (strcmp(name, "--k") == 0)
            good = parse_size(value, name, &K), have_k = 1;
        else if (strcmp(name, "--seed") == 0)
            good = parse_size(value, name, &seed);
        else if (strcmp(name, "--n-init") == 0)
            good = parse_size(value, name, &n_init);
        else if (strcmp(name, "--max-iter") == 0)
            good = parse_size(value, name, &max_iter);
        else if (strcmp(name, "--threads") == 0)
            good = parse_size(value, name, &threads), have_threads = 1;
        else if (strcmp(name, "--tol") == 0)
            good = parse_real(value, name, &tol);
        else if (strcmp(name, "--set") == 0 && n_settings < MAX_SETTINGS)
            settings[n_settings++] = value;
        else if (strcmp(name, "--out") == 0)
            out = value;
        else if (strcmp(name, "--data") == 0)
            data = value;
        else {
            fprintf(stderr, "compare_fit: unknown option %s\n", name);
            usage();
            return 2;
        }
        if (!good)
            return 2;
    }
    if (strcmp(mode, "generate") == 0) {
        if (!have_n || !have_d || !have_k || out == NULL || n == 0 || d == 0 || K == 0) {
            fprintf(stderr, "compare_fit generate: --n, --d, --k (all >= 1) and --out are "
                            "required\n");
            usage();
            return 2;
        }
        return run_generate(n, d, K, (uint64_t)seed, out);
    }
    if (strcmp(mode, "fit") == 0) {
        if (data == NULL || !have_k || K == 0) {
            fprintf(stderr, "compare_fit fit: --data and --k (>= 1) are required\n");
            usage();
            return 2;
        }
        return run_fit(data, K, n_init, tol, max_iter, seed, have_threads, threads);
    }
    fprintf(stderr, "compare_fit: unknown mode '%s'\n", mode);
    usage();
    return 2;
}
