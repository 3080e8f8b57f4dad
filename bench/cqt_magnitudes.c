/*
 * cqt_magnitudes: how close cqt's experts are to the true coefficients, in direction and in
 * size, against em on the same rows (docs/REPRODUCTIONS.md, "Magnitudes (issue 41)").
 *
 * Truths of the paper's synthetic law: experts uniform on the unit sphere of R^d times a
 * common norm (--norm, 1 as in the paper's assumption 2), gate rows uniform on the unit
 * sphere (the last zero; --orthogonal puts them in the complement of the experts' span),
 * x ~ N(0, I), y = a_z' x + sigma e, no intercepts. Settings per K (d = 10): K = 2 as the
 * paper's Table 2 (n = 2000, sigma = 0.1), K = 3 and 4 as its Figs. 3b-c (n = 8000, sigma =
 * 0.5); --n and --sigma override them for every K.
 *
 * Per fit, with the experts matched to the truth by the permutation of largest summed
 * cosine: the largest cosine distance 1 - cos, the largest Euclidean error ||a_hat - a||_2
 * ("coefficient error"), the norm ratio ||a_hat|| / ||a|| farthest from 1, cqt's
 * log-likelihood minus em's, and cqt's wall time over em's. Both fitters run with their
 * defaults and n_init = 1 (em's default start); --cqt NAME=VALUE sets a cqt option.
 *
 * usage: cqt_magnitudes [--trials T] [--K k] [--n N] [--sigma S] [--norm R] [--orthogonal]
 *                       [--seed S] [--cqt NAME=VALUE]... [--verbose]
 */
#define _POSIX_C_SOURCE 200809L

#include <moe/moe.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { D = 10, MAX_K = 4, MAX_OPTIONS = 16 };

typedef struct settings {
    size_t trials, only_k, n;
    double sigma, norm;
    int orthogonal, verbose;
    unsigned long long seed;
    const char *options[MAX_OPTIONS];
    size_t n_options;
} settings;

typedef struct fit_result {
    double cosine_distance, error, max_abs, ratio, loglik_gap, time_ratio;
    int failed;
} fit_result;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double dot(const double *a, const double *b, size_t d)
{
    double sum = 0.0;
    for (size_t j = 0; j < d; ++j)
        sum += a[j] * b[j];
    return sum;
}

static void unit_gaussian(moe_rng *rng, double *v, size_t d)
{
    for (size_t j = 0; j < d; ++j)
        v[j] = moe_rng_normal(rng);
    double length = sqrt(dot(v, v, d));
    for (size_t j = 0; j < d; ++j)
        v[j] /= length;
}

/* Experts (K x d) of norm `norm` and gate rows (K x d, last zero) of unit norm. */
static void make_truth(const settings *s, size_t K, moe_rng *rng, double *experts,
                       double *gate)
{
    for (size_t k = 0; k < K; ++k) {
        unit_gaussian(rng, experts + k * D, D);
        for (size_t j = 0; j < D; ++j)
            experts[k * D + j] *= s->norm;
    }
    memset(gate, 0, K * D * sizeof(double));
    for (size_t k = 0; k + 1 < K; ++k) {
        double *w = gate + k * D;
        unit_gaussian(rng, w, D);
        if (s->orthogonal) {
            /* Orthonormalise the experts, remove their span from w (twice, for rounding),
               then unit length. */
            double q[MAX_K][D];
            for (size_t i = 0; i < K; ++i) {
                memcpy(q[i], experts + i * D, sizeof q[i]);
                for (size_t l = 0; l < i; ++l) {
                    double c = dot(q[i], q[l], D);
                    for (size_t j = 0; j < D; ++j)
                        q[i][j] -= c * q[l][j];
                }
                double length = sqrt(dot(q[i], q[i], D));
                for (size_t j = 0; j < D; ++j)
                    q[i][j] /= length;
            }
            for (int pass = 0; pass < 2; ++pass)
                for (size_t i = 0; i < K; ++i) {
                    double c = dot(w, q[i], D);
                    for (size_t j = 0; j < D; ++j)
                        w[j] -= c * q[i][j];
                }
            double length = sqrt(dot(w, w, D));
            for (size_t j = 0; j < D; ++j)
                w[j] /= length;
        }
    }
}

static void sample(size_t n, size_t K, double sigma, const double *experts,
                   const moe_model_t *truth, moe_rng *rng, double *X, double *y)
{
    double proba[MAX_K];
    for (size_t i = 0; i < n * D; ++i)
        X[i] = moe_rng_normal(rng);
    for (size_t i = 0; i < n; ++i) {
        moe_model_gate_proba(truth, 1, X + i * D, D, proba, K);
        double u = moe_rng_uniform(rng);
        size_t z = 0;
        while (z + 1 < K && (u -= proba[z]) >= 0.0)
            ++z;
        y[i] = dot(experts + z * D, X + i * D, D) + sigma * moe_rng_normal(rng);
    }
}

/* The permutation (perm[true] = fitted) of largest summed cosine, by enumeration. */
static void best_permutation(size_t K, const double *fitted, const double *truth,
                             size_t *perm)
{
    size_t p[MAX_K];
    for (size_t i = 0; i < K; ++i)
        p[i] = i;
    double best = -INFINITY;
    for (;;) {
        double sum = 0.0;
        for (size_t i = 0; i < K; ++i) {
            const double *a = fitted + p[i] * D, *b = truth + i * D;
            sum += dot(a, b, D) / sqrt(dot(a, a, D) * dot(b, b, D));
        }
        if (sum > best) {
            best = sum;
            memcpy(perm, p, K * sizeof(size_t));
        }
        /* next permutation in lexicographic order */
        size_t i = K - 1;
        while (i > 0 && p[i - 1] > p[i])
            --i;
        if (i == 0)
            break;
        size_t j = K - 1;
        while (p[j] < p[i - 1])
            --j;
        size_t t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
        for (size_t a = i, b = K - 1; a < b; ++a, --b) {
            t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
    }
}

static moe_model_t *new_model(size_t K)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    spec.intercept = 0;
    moe_model_t *model = NULL;
    return moe_model_create(&model, &spec) == MOE_OK ? model : NULL;
}

/* One fit of `estimator` into *model; its wall time and log-likelihood. */
static int fit(const settings *s, const char *estimator, size_t K, size_t n, const double *X,
               const double *y, unsigned long long seed, moe_model_t **model, double *seconds,
               double *loglik)
{
    *model = new_model(K);
    moe_fitter_t *fitter = NULL;
    if (*model == NULL || moe_fitter_create(&fitter, estimator) != MOE_OK)
        return 1;
    char text[32];
    snprintf(text, sizeof text, "%llu", seed);
    int failed = moe_fitter_set_option(fitter, "seed", text) != MOE_OK ||
                 moe_fitter_set_option(fitter, "n_init", "1") != MOE_OK ||
                 moe_fitter_set_option(fitter, "threads", "1") != MOE_OK;
    for (size_t o = 0; !failed && strcmp(estimator, "cqt") == 0 && o < s->n_options; ++o) {
        char name[64];
        const char *equals = strchr(s->options[o], '=');
        size_t length = equals != NULL ? (size_t)(equals - s->options[o]) : 0;
        if (equals == NULL || length >= sizeof name) {
            fprintf(stderr, "--cqt %s: expected NAME=VALUE\n", s->options[o]);
            failed = 1;
            break;
        }
        memcpy(name, s->options[o], length);
        name[length] = '\0';
        if (moe_fitter_set_option(fitter, name, equals + 1) != MOE_OK) {
            fprintf(stderr, "--cqt %s: %s\n", s->options[o], moe_fitter_last_error(fitter));
            failed = 1;
        }
    }
    double start = now();
    if (!failed && moe_fitter_fit(fitter, *model, n, X, D, y, NULL) != MOE_OK) {
        fprintf(stderr, "%s: %s\n", estimator, moe_fitter_last_error(fitter));
        failed = 1;
    }
    *seconds = now() - start;
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    if (!failed && moe_fitter_get_report(fitter, &report) == MOE_OK)
        *loglik = report.loglik;
    moe_fitter_free(fitter);
    return failed;
}

/* The expert measures of a fitted model against the truth. */
static void measure(size_t K, const moe_model_t *model, const double *truth, fit_result *r)
{
    double fitted[MAX_K * D];
    size_t perm[MAX_K];
    moe_model_get_experts(model, fitted, K * D);
    best_permutation(K, fitted, truth, perm);
    r->cosine_distance = r->error = r->max_abs = 0.0;
    r->ratio = 1.0;
    for (size_t i = 0; i < K; ++i) {
        const double *a = fitted + perm[i] * D, *b = truth + i * D;
        double na = sqrt(dot(a, a, D)), nb = sqrt(dot(b, b, D));
        double distance = 1.0 - dot(a, b, D) / (na * nb), error = 0.0;
        for (size_t j = 0; j < D; ++j) {
            error += (a[j] - b[j]) * (a[j] - b[j]);
            if (fabs(a[j] - b[j]) > r->max_abs)
                r->max_abs = fabs(a[j] - b[j]);
        }
        error = sqrt(error);
        if (distance > r->cosine_distance)
            r->cosine_distance = distance;
        if (error > r->error)
            r->error = error;
        if (fabs(log(na / nb)) > fabs(log(r->ratio)))
            r->ratio = na / nb;
    }
}

static fit_result one_fit(const settings *s, size_t K, size_t n, double sigma, size_t trial)
{
    fit_result r = {0};
    moe_rng rng;
    unsigned long long seed = s->seed + 1000 * K + trial;
    moe_rng_seed(&rng, seed, 41);
    double experts[MAX_K * D], gate[MAX_K * D], variances[MAX_K];
    make_truth(s, K, &rng, experts, gate);
    for (size_t k = 0; k < K; ++k)
        variances[k] = sigma * sigma;
    moe_model_t *truth = new_model(K), *cqt = NULL, *em = NULL;
    double *X = malloc(n * D * sizeof(double)), *y = malloc(n * sizeof(double));
    if (truth == NULL || X == NULL || y == NULL) {
        r.failed = 1;
        return r;
    }
    moe_model_set_experts(truth, experts, K * D);
    moe_model_set_gate(truth, gate, K * D);
    moe_model_set_variances(truth, variances, K);
    sample(n, K, sigma, experts, truth, &rng, X, y);
    double cqt_seconds = 0.0, em_seconds = 0.0, cqt_loglik = NAN, em_loglik = NAN;
    r.failed = fit(s, "cqt", K, n, X, y, seed, &cqt, &cqt_seconds, &cqt_loglik) |
               fit(s, "em", K, n, X, y, seed, &em, &em_seconds, &em_loglik);
    if (!r.failed) {
        fit_result e = {0};
        measure(K, cqt, experts, &r);
        measure(K, em, experts, &e);
        r.loglik_gap = cqt_loglik - em_loglik;
        r.time_ratio = cqt_seconds / em_seconds;
        if (s->verbose)
            printf("  K %zu trial %2zu: cqt cos %.4f err %.3f maxabs %.3f ratio %.3f | em "
                   "cos %.4f err %.3f ratio %.3f | dL %.1f time x%.2f\n",
                   K, trial, r.cosine_distance, r.error, r.max_abs, r.ratio,
                   e.cosine_distance, e.error, e.ratio, r.loglik_gap, r.time_ratio);
    }
    moe_model_free(truth);
    moe_model_free(cqt);
    moe_model_free(em);
    free(X);
    free(y);
    return r;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t count)
{
    qsort(v, count, sizeof *v, compare);
    return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

static void row(const settings *s, size_t K)
{
    size_t n = s->n > 0 ? s->n : (K == 2 ? 2000 : 8000);
    double sigma = s->sigma > 0.0 ? s->sigma : (K == 2 ? 0.1 : 0.5);
    size_t count = 0, pointed = 0, close = 0, close_abs = 0, failed = 0;
    double *error = malloc(s->trials * sizeof(double)), *ratio = malloc(s->trials * sizeof(double));
    double *gap = malloc(s->trials * sizeof(double)), *time = malloc(s->trials * sizeof(double));
    double worst_error = 0.0, worst_ratio = 1.0, gap_low = INFINITY, gap_high = -INFINITY;
    for (size_t t = 0; t < s->trials; ++t) {
        fit_result r = one_fit(s, K, n, sigma, t);
        if (r.failed) {
            ++failed;
            continue;
        }
        pointed += r.cosine_distance < 0.1;
        close += r.error < 0.1;
        close_abs += r.max_abs < 0.1;
        error[count] = r.error;
        ratio[count] = r.ratio;
        gap[count] = r.loglik_gap;
        time[count] = r.time_ratio;
        if (r.error > worst_error)
            worst_error = r.error;
        if (fabs(log(r.ratio)) > fabs(log(worst_ratio)))
            worst_ratio = r.ratio;
        if (r.loglik_gap < gap_low)
            gap_low = r.loglik_gap;
        if (r.loglik_gap > gap_high)
            gap_high = r.loglik_gap;
        ++count;
    }
    if (count > 0)
        printf("| %zu | %zu | %.2f | %zu/%zu | %zu/%zu | %zu/%zu | %.3f / %.3f | %.3f / %.3f | "
               "%.0f to %.0f (median %.0f) | %.2f |%s\n",
               K, n, sigma, pointed, count, close, count, close_abs, count,
               median(error, count), worst_error, median(ratio, count), worst_ratio, gap_low,
               gap_high, median(gap, count), median(time, count),
               failed > 0 ? " some fits failed" : "");
    else
        printf("| %zu | %zu | %.2f | every fit failed |\n", K, n, sigma);
    fflush(stdout);
    free(error);
    free(ratio);
    free(gap);
    free(time);
}

int main(int argc, char **argv)
{
    settings s = {20, 0, 0, 0.0, 1.0, 0, 0, 4100, {NULL}, 0};
    for (int a = 1; a < argc; ++a) {
        const char *arg = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(arg, "--orthogonal") == 0)
            s.orthogonal = 1;
        else if (strcmp(arg, "--verbose") == 0)
            s.verbose = 1;
        else if (value != NULL && strcmp(arg, "--trials") == 0 && ++a)
            s.trials = strtoul(value, NULL, 10);
        else if (value != NULL && strcmp(arg, "--K") == 0 && ++a)
            s.only_k = strtoul(value, NULL, 10);
        else if (value != NULL && strcmp(arg, "--n") == 0 && ++a)
            s.n = strtoul(value, NULL, 10);
        else if (value != NULL && strcmp(arg, "--sigma") == 0 && ++a)
            s.sigma = strtod(value, NULL);
        else if (value != NULL && strcmp(arg, "--norm") == 0 && ++a)
            s.norm = strtod(value, NULL);
        else if (value != NULL && strcmp(arg, "--seed") == 0 && ++a)
            s.seed = strtoull(value, NULL, 10);
        else if (value != NULL && strcmp(arg, "--cqt") == 0 && s.n_options < MAX_OPTIONS && ++a)
            s.options[s.n_options++] = value;
        else {
            fprintf(stderr, "usage: cqt_magnitudes [--trials T] [--K k] [--n N] [--sigma S] "
                            "[--norm R] [--orthogonal] [--seed S] [--cqt NAME=VALUE]... "
                            "[--verbose]\n");
            return 2;
        }
    }
    if (s.trials == 0 || (s.only_k != 0 && (s.only_k < 2 || s.only_k > MAX_K)) ||
        !(s.norm > 0.0)) {
        fprintf(stderr, "cqt_magnitudes: trials >= 1, K in 2..4, norm > 0\n");
        return 2;
    }
    printf("d = %d, expert norm %g, gates %s, %zu trials per K, seed %llu\n", D, s.norm,
           s.orthogonal ? "orthogonal to the experts" : "on the unit sphere", s.trials, s.seed);
    printf("| K | n | sigma | cos dist < 0.1 | L2 error < 0.1 | max-abs error < 0.1 | L2 error "
           "median / worst | norm ratio median / worst | loglik cqt - em (nats) | time cqt / "
           "em (median) |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t K = 2; K <= MAX_K; ++K)
        if (s.only_k == 0 || s.only_k == K)
            row(&s, K);
    return 0;
}
