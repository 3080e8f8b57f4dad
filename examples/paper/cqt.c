/*
 * cqt: the synthetic experiments of Makkuva, Oh, Kannan & Viswanath, "Breaking the gridlock
 * in Mixture-of-Experts: Consistent and Efficient Algorithms" (ICML 2019), with libmoe's
 * `cqt` estimator (docs/REPRODUCTIONS.md, "Tensor method"):
 *
 *   Table 2   k = 2, d = 10, sigma = 0.1, n = 2000, x ~ N(0, I), gate orthogonal to the
 *             experts or not: RegressorFit and GatingFit.
 *   Table 1   the same with x from the mixture p N(mu1, I) + (1 - p) N(mu2, I). The paper
 *             uses the mixture's own score functions; libmoe's cqt has Gaussian scores only
 *             and a model without intercepts needs centred x, so this program centres x
 *             (which gives every expert an offset a_i' mean the model cannot hold): the
 *             numbers measure how far the Gaussian method carries, not the paper's method.
 *   Fig. 3a   GatingFit against the gate stage's iteration (k = 2, not orthogonal).
 *   Fig. 3b/c E(A, W) against iterations for cqt then gate EM, and for joint EM (em on every
 *             block, variance fixed at sigma^2) from random starts: k = 3 and 4, d = 10,
 *             n = 8000, sigma = 0.5, gates uniform on the sphere. Also em refined from cqt.
 *   Figs. 4-5 (--appendix) the same comparison at k = 3, d = 5, sigma = 0.5, gates orthogonal
 *             to the experts: linear at n = 1000, 5000, 10000 (Fig. 4), sigmoid and ReLU at
 *             n = 10000 (Fig. 5). Reported, not checked. Fig. 6 (UCI data) is not here.
 *
 * Experts are uniform on the unit sphere, the last gate row is zero, the noise is known to
 * the joint EM (as in the paper) and estimated by cqt. Metrics: RegressorFit = min over
 * experts of |cos| under the best permutation; GatingFit = |cos(w_hat, w*)| (k = 2);
 * E(A, W) = min over permutations of ||A - A*||_F + ||W - W*||_F with the truth's gate
 * re-referenced to the fitted reference expert.
 *
 * Build (against an installed libmoe; ctest builds it as paper_cqt, label long):
 *   cc -std=c11 -O2 examples/paper/cqt.c $(pkg-config --cflags --libs moe) -lm -o cqt
 * Usage: cqt [--trials T] [--quick] [--seed S] [--appendix] [--cqt-option name=value]...
 * (--cqt-option sets a cqt option on every cqt fit, to measure a setting against the default.)
 * Exit status: 0 if the checks printed as [ok] / [FAILED] hold (Table 2's thresholds, Fig.
 * 3a's settling, em refined from cqt no worse than cqt), 1 if not, 2 on an error.
 */
#include <moe/moe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_K 4
#define MAX_D 10

/* The experiment's dimension and link: d = 10 and linear for Tables 1-2 and Fig. 3, d = 5 for
   Figs. 4-5. */
static size_t dimension = 10;
static moe_link expert_link = MOE_LINK_IDENTITY;

typedef struct truth {
    size_t k;
    double sigma;
    double experts[MAX_K * MAX_D];
    double gate[MAX_K * MAX_D];
    /* Table 1's input mixture (p = 0: x ~ N(0, I)). */
    double p, mu1[MAX_D], mu2[MAX_D];
} truth;

static void fail(const char *what, moe_status status, const char *message)
{
    fprintf(stderr, "cqt: %s: %s (%s)\n", what, moe_strerror(status), message);
    exit(2);
}

static void normalise(double *v)
{
    double sum = 0.0;
    for (size_t j = 0; j < dimension; ++j)
        sum += v[j] * v[j];
    sum = sqrt(sum);
    for (size_t j = 0; j < dimension; ++j)
        v[j] /= sum;
}

static void sphere(moe_rng *rng, double *v)
{
    for (size_t j = 0; j < dimension; ++j)
        v[j] = moe_rng_normal(rng);
    normalise(v);
}

static void make_truth(truth *t, size_t k, double sigma, int orthogonal, moe_rng *rng)
{
    memset(t, 0, sizeof *t);
    t->k = k;
    t->sigma = sigma;
    double basis[MAX_K * MAX_D];
    for (size_t i = 0; i < k; ++i) {
        sphere(rng, t->experts + i * dimension);
        memcpy(basis + i * dimension, t->experts + i * dimension, sizeof(double) * dimension);
        for (size_t q = 0; q < i; ++q) {
            double dot = 0.0;
            for (size_t j = 0; j < dimension; ++j)
                dot += basis[i * dimension + j] * basis[q * dimension + j];
            for (size_t j = 0; j < dimension; ++j)
                basis[i * dimension + j] -= dot * basis[q * dimension + j];
        }
        normalise(basis + i * dimension);
    }
    for (size_t i = 0; i + 1 < k; ++i) {
        double *w = t->gate + i * dimension;
        sphere(rng, w);
        if (!orthogonal)
            continue;
        for (size_t q = 0; q < k; ++q) {
            double dot = 0.0;
            for (size_t j = 0; j < dimension; ++j)
                dot += w[j] * basis[q * dimension + j];
            for (size_t j = 0; j < dimension; ++j)
                w[j] -= dot * basis[q * dimension + j];
        }
        normalise(w);
    }
}

static void sample(const truth *t, size_t n, moe_rng *rng, double *X, double *y)
{
    for (size_t r = 0; r < n; ++r) {
        double *x = X + r * dimension;
        const double *mu = NULL;
        if (t->p > 0.0)
            mu = moe_rng_uniform(rng) < t->p ? t->mu1 : t->mu2;
        for (size_t j = 0; j < dimension; ++j)
            x[j] = moe_rng_normal(rng) + (mu != NULL ? mu[j] : 0.0);
        double logits[MAX_K], largest = -INFINITY, total = 0.0;
        for (size_t i = 0; i < t->k; ++i) {
            logits[i] = 0.0;
            for (size_t j = 0; j < dimension; ++j)
                logits[i] += t->gate[i * dimension + j] * x[j];
            if (logits[i] > largest)
                largest = logits[i];
        }
        for (size_t i = 0; i < t->k; ++i)
            total += logits[i] = exp(logits[i] - largest);
        double u = moe_rng_uniform(rng) * total;
        size_t z = 0;
        for (; z + 1 < t->k; ++z)
            if ((u -= logits[z]) < 0.0)
                break;
        double mean = 0.0;
        for (size_t j = 0; j < dimension; ++j)
            mean += t->experts[z * dimension + j] * x[j];
        if (expert_link == MOE_LINK_SIGMOID)
            mean = 1.0 / (1.0 + exp(-mean));
        else if (expert_link == MOE_LINK_RELU)
            mean = mean > 0.0 ? mean : 0.0;
        y[r] = mean + t->sigma * moe_rng_normal(rng);
    }
}

/* ---- Metrics ------------------------------------------------------------------------------- */

static int next_permutation(size_t *perm, size_t k)
{
    size_t i = k - 1;
    while (i > 0 && perm[i - 1] >= perm[i])
        --i;
    if (i == 0)
        return 0;
    size_t j = k - 1;
    while (perm[j] <= perm[i - 1])
        --j;
    size_t s = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = s;
    for (size_t a = i, b = k - 1; a < b; ++a, --b) {
        s = perm[a];
        perm[a] = perm[b];
        perm[b] = s;
    }
    return 1;
}

typedef struct metrics {
    double regressor_fit, gating_fit, error;
} metrics;

static metrics measure(const truth *t, const moe_model_t *model)
{
    size_t k = t->k, order[MAX_K];
    double A[MAX_K * MAX_D], W[MAX_K * MAX_D];
    moe_model_get_experts(model, A, k * dimension);
    moe_model_get_gate(model, W, k * dimension);
    metrics m = {-1.0, 0.0, INFINITY};
    for (size_t i = 0; i < k; ++i)
        order[i] = i;
    do {
        double worst = INFINITY, expert_error = 0.0, gate_error = 0.0;
        size_t reference = 0;
        for (size_t i = 0; i < k; ++i)
            if (order[i] == k - 1)
                reference = i;
        for (size_t i = 0; i < k; ++i) {
            double dot = 0.0, length = 0.0;
            for (size_t j = 0; j < dimension; ++j) {
                double a = A[order[i] * dimension + j];
                dot += a * t->experts[i * dimension + j];
                length += a * a;
                double e = a - t->experts[i * dimension + j];
                double w = W[order[i] * dimension + j] -
                           (t->gate[i * dimension + j] - t->gate[reference * dimension + j]);
                expert_error += e * e;
                gate_error += w * w;
            }
            double cosine = fabs(dot) / sqrt(length);
            if (cosine < worst)
                worst = cosine;
        }
        if (worst > m.regressor_fit)
            m.regressor_fit = worst;
        double error = sqrt(expert_error) + sqrt(gate_error);
        if (error < m.error)
            m.error = error;
    } while (next_permutation(order, k));
    if (k == 2) {
        double dot = 0.0, length = 0.0;
        for (size_t j = 0; j < dimension; ++j) {
            double w = W[j] - W[dimension + j];
            dot += w * t->gate[j];
            length += w * w;
        }
        m.gating_fit = fabs(dot) / sqrt(length);
    }
    return m;
}

/* ---- Fits ---------------------------------------------------------------------------------- */

static moe_model_t *new_model(size_t k)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = k;
    spec.n_features = dimension;
    spec.intercept = 0;
    spec.link = expert_link;
    moe_model_t *model = NULL;
    moe_status status = moe_model_create(&model, &spec);
    if (status != MOE_OK)
        fail("moe_model_create", status, moe_last_error());
    return model;
}

static void set(moe_fitter_t *fitter, const char *name, const char *value)
{
    moe_status status = moe_fitter_set_option(fitter, name, value);
    if (status != MOE_OK)
        fail(name, status, moe_fitter_last_error(fitter));
}

/* Options given with --cqt-option name=value, set on every cqt fit (to measure defaults). */
#define MAX_OPTIONS 8
static size_t cqt_option_count = 0;
static char cqt_option_text[MAX_OPTIONS][64];
static const char *cqt_option_names[MAX_OPTIONS], *cqt_option_values[MAX_OPTIONS];

static int add_cqt_option(const char *text)
{
    if (cqt_option_count == MAX_OPTIONS || strlen(text) >= sizeof cqt_option_text[0])
        return 1;
    char *copy = cqt_option_text[cqt_option_count];
    strcpy(copy, text);
    char *equals = strchr(copy, '=');
    if (equals == NULL)
        return 1;
    *equals = '\0';
    cqt_option_names[cqt_option_count] = copy;
    cqt_option_values[cqt_option_count] = equals + 1;
    ++cqt_option_count;
    return 0;
}

/* cqt with the gate stage stopped after `iterations` (0: to convergence). */
static metrics fit_cqt(const truth *t, size_t n, const double *X, const double *y,
                       size_t iterations, int refine, uint64_t seed, moe_status *status_out)
{
    moe_model_t *model = new_model(t->k);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "cqt");
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
    set(fitter, "seed", text);
    set(fitter, "n_init", "1");
    for (size_t o = 0; o < cqt_option_count; ++o)
        set(fitter, cqt_option_names[o], cqt_option_values[o]);
    if (iterations > 0) {
        snprintf(text, sizeof text, "%zu", iterations);
        set(fitter, "max_iter", text);
        set(fitter, "gate_change_tol", "0");
    }
    if (refine)
        set(fitter, "refine", "1");
    moe_status status = moe_fitter_fit(fitter, model, n, X, dimension, y, NULL);
    metrics m = {0.0, 0.0, NAN};
    if (status == MOE_OK)
        m = measure(t, model);
    else if (status_out == NULL)
        fail("cqt", status, moe_fitter_last_error(fitter));
    if (status_out != NULL)
        *status_out = status;
    moe_fitter_free(fitter);
    moe_model_free(model);
    return m;
}

typedef struct random_start {
    size_t k;
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
    size_t k = start->k;
    double A[MAX_K * MAX_D], W[MAX_K * MAX_D] = {0}, variances[MAX_K];
    for (size_t i = 0; i < k; ++i) {
        sphere(&rng, A + i * dimension);
        variances[i] = start->sigma * start->sigma;
    }
    for (size_t i = 0; i + 1 < k; ++i) {
        sphere(&rng, W + i * dimension);
        double radius = pow(moe_rng_uniform(&rng), 1.0 / (double)dimension);
        for (size_t j = 0; j < dimension; ++j)
            W[i * dimension + j] *= radius;
    }
    moe_status status = moe_model_set_experts(model, A, k * dimension);
    if (status == MOE_OK)
        status = moe_model_set_gate(model, W, k * dimension);
    if (status == MOE_OK)
        status = moe_model_set_variances(model, variances, k);
    return status;
}

static metrics fit_joint(const truth *t, size_t n, const double *X, const double *y,
                         size_t iterations, uint64_t seed)
{
    moe_model_t *model = new_model(t->k);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "em");
    random_start start = {t->k, t->sigma, seed};
    moe_fitter_set_start(fitter, random_parameters, &start);
    char text[32];
    snprintf(text, sizeof text, "%zu", iterations);
    set(fitter, "max_iter", text);
    set(fitter, "n_init", "1");
    set(fitter, "update_variance", "0");
    set(fitter, "gate_solver", "newton");
    set(fitter, "tol", "0");
    moe_status status = moe_fitter_fit(fitter, model, n, X, dimension, y, NULL);
    if (status != MOE_OK)
        fail("em", status, moe_fitter_last_error(fitter));
    metrics m = measure(t, model);
    moe_fitter_free(fitter);
    moe_model_free(model);
    return m;
}

/* ---- Summaries ----------------------------------------------------------------------------- */

typedef struct summary {
    double sum, squares, max;
    size_t count;
} summary;

static void add(summary *s, double value)
{
    s->sum += value;
    s->squares += value * value;
    if (s->count == 0 || value > s->max)
        s->max = value;
    ++s->count;
}

static double mean_of(const summary *s)
{
    return s->count ? s->sum / (double)s->count : NAN;
}

static double sd_of(const summary *s)
{
    if (s->count < 2)
        return 0.0;
    double mean = mean_of(s);
    double variance = (s->squares - (double)s->count * mean * mean) / (double)(s->count - 1);
    return variance > 0.0 ? sqrt(variance) : 0.0;
}

static int checks_failed = 0;

static void check(int ok, const char *what)
{
    printf("  [%s] %s\n", ok ? "ok" : "FAILED", what);
    if (!ok)
        checks_failed = 1;
}

/*
 * Figs. 4 and 5 (the paper's appendix H.1): k = 3, d = 5, sigma = 0.5, E(A, W) against
 * iterations for cqt then gate EM and for joint EM; Fig. 4 linear at n = 1000, 5000, 10000,
 * Fig. 5 sigmoid and ReLU at n = 10000. Gates orthogonal to the experts (d = 2k - 1 is the
 * smallest d that allows it). Reported, not checked (docs/REPRODUCTIONS.md says why).
 */
static void appendix_setting(const char *title, moe_link link, size_t n, size_t trials,
                             uint64_t seed, double *X, double *y)
{
    static const size_t iterations[] = {1, 2, 5, 10, 20, 50, 100};
    expert_link = link;
    dimension = 5;
    summary ours[7] = {{0}}, joint[7] = {{0}}, ours_end = {0}, refined = {0};
    size_t refused = 0, wins = 0;
    for (size_t trial = 0; trial < trials; ++trial) {
        moe_rng rng;
        /* Streams stay distinct across the settings for up to 40 trials. */
        moe_rng_seed(&rng, seed, 5000 + 1000 * (uint64_t)link + n / 1000 * 10 + trial);
        truth t;
        make_truth(&t, 3, 0.5, 1, &rng);
        sample(&t, n, &rng, X, y);
        moe_status status = MOE_OK;
        metrics end = fit_cqt(&t, n, X, y, 0, 0, seed + trial, &status);
        metrics em = fit_joint(&t, n, X, y, 100, seed + trial);
        if (status != MOE_OK) {
            ++refused;
            printf("    trial %zu: cqt refused (%s)\n", trial, moe_strerror(status));
            continue;
        }
        add(&ours_end, end.error);
        add(&refined, fit_cqt(&t, n, X, y, 0, 1, seed + trial, NULL).error);
        wins += end.error < em.error;
        for (int s = 0; s < 7; ++s) {
            add(&ours[s], fit_cqt(&t, n, X, y, iterations[s], 0, seed + trial, NULL).error);
            add(&joint[s], s == 6 ? em.error
                                  : fit_joint(&t, n, X, y, iterations[s], seed + trial).error);
        }
    }
    printf("\n%s: E(A, W), k = 3, d = 5, sigma = 0.5, n = %zu, %zu trials (mean +- sd)\n", title,
           n, trials);
    printf("  %-10s %-16s %-16s\n", "iteration", "cqt + gate EM", "joint EM");
    for (int s = 0; s < 7; ++s)
        printf("  %-10zu %.3f +- %.3f    %.3f +- %.3f\n", iterations[s], mean_of(&ours[s]),
               sd_of(&ours[s]), mean_of(&joint[s]), sd_of(&joint[s]));
    printf("  converged  %.3f +- %.3f (max %.3f); em refined from cqt %.3f +- %.3f; joint EM "
           "max at 100: %.3f\n",
           mean_of(&ours_end), sd_of(&ours_end), ours_end.max, mean_of(&refined),
           sd_of(&refined), joint[6].max);
    printf("  cqt below joint EM at the end in %zu of %zu fitted trials; cqt refused %zu\n", wins,
           trials - refused, refused);
}

static void appendix(size_t trials, uint64_t seed)
{
    double *X = malloc(10000 * 5 * sizeof(double)), *y = malloc(10000 * sizeof(double));
    if (X == NULL || y == NULL)
        exit(2);
    static const size_t sizes[] = {1000, 5000, 10000};
    for (int s = 0; s < 3; ++s)
        appendix_setting("Fig. 4 (linear)", MOE_LINK_IDENTITY, sizes[s], trials, seed, X, y);
    appendix_setting("Fig. 5 (sigmoid)", MOE_LINK_SIGMOID, 10000, trials, seed, X, y);
    appendix_setting("Fig. 5 (ReLU)", MOE_LINK_RELU, 10000, trials, seed, X, y);
    free(X);
    free(y);
}

int main(int argc, char **argv)
{
    size_t trials = 10;
    uint64_t seed = 1;
    int quick = 0, appendix_only = 0;
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--trials") == 0 && a + 1 < argc)
            trials = (size_t)strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
            seed = strtoull(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[a], "--appendix") == 0)
            appendix_only = 1;
        else if (strcmp(argv[a], "--cqt-option") == 0 && a + 1 < argc &&
                 add_cqt_option(argv[a + 1]) == 0)
            ++a;
        else {
            fprintf(stderr, "usage: cqt [--trials T] [--quick] [--seed S] [--appendix] "
                            "[--cqt-option name=value]...\n");
            return 2;
        }
    }
    if (quick)
        trials = 3;
    if (trials < 1)
        trials = 1;
    if (appendix_only) {
        appendix(trials, seed);
        return 0;
    }
    double *X = malloc(8000 * dimension * sizeof(double)), *y = malloc(8000 * sizeof(double));
    if (X == NULL || y == NULL)
        return 2;

    printf("Table 2: k = 2, d = 10, sigma = 0.1, n = 2000, %zu trials\n", trials);
    printf("  %-15s %-17s %-17s  paper (RegFit / GateFit)\n", "gate", "RegressorFit",
           "GatingFit");
    static const char *const paper2[] = {"0.90 +- 0.08 / 0.96 +- 0.02",
                                         "0.93 +- 0.03 / 0.96 +- 0.03"};
    for (int orthogonal = 0; orthogonal < 2; ++orthogonal) {
        summary regressor = {0}, gating = {0};
        for (size_t trial = 0; trial < trials; ++trial) {
            moe_rng rng;
            moe_rng_seed(&rng, seed, 100 * (uint64_t)orthogonal + trial);
            truth t;
            make_truth(&t, 2, 0.1, orthogonal, &rng);
            sample(&t, 2000, &rng, X, y);
            metrics m = fit_cqt(&t, 2000, X, y, 0, 0, seed + trial, NULL);
            add(&regressor, m.regressor_fit);
            add(&gating, m.gating_fit);
        }
        printf("  %-15s %.3f +- %.3f    %.3f +- %.3f     %s\n",
               orthogonal ? "orthogonal" : "not orthogonal", mean_of(&regressor),
               sd_of(&regressor), mean_of(&gating), sd_of(&gating), paper2[orthogonal]);
        check(mean_of(&regressor) >= 0.90 && mean_of(&gating) >= 0.93,
              orthogonal ? "Table 2 orthogonal: mean fits >= 0.90 / 0.93"
                         : "Table 2 not orthogonal: mean fits >= 0.90 / 0.93");
    }

    printf("\nTable 1: x from p N(mu1, I) + (1 - p) N(mu2, I), centred; Gaussian scores "
           "(the paper: the mixture's scores)\n");
    printf("  %-5s %-17s %-17s %-8s paper (RegFit / GateFit)\n", "p", "RegressorFit",
           "GatingFit", "refused");
    static const double ps[] = {0.1, 0.3, 0.5, 0.7, 0.9};
    static const char *const paper1[] = {"0.93 / 0.9", "0.94 / 0.97", "0.92 / 0.93",
                                         "0.92 / 0.96", "0.91 / 0.97"};
    for (int c = 0; c < 5; ++c) {
        summary regressor = {0}, gating = {0};
        size_t refused = 0;
        for (size_t trial = 0; trial < trials; ++trial) {
            moe_rng rng;
            moe_rng_seed(&rng, seed, 1000 + 100 * (uint64_t)c + trial);
            truth t;
            make_truth(&t, 2, 0.1, 0, &rng);
            t.p = ps[c];
            sphere(&rng, t.mu1);
            sphere(&rng, t.mu2);
            sample(&t, 2000, &rng, X, y);
            double mean[MAX_D] = {0};
            for (size_t r = 0; r < 2000; ++r)
                for (size_t j = 0; j < dimension; ++j)
                    mean[j] += X[r * dimension + j] / 2000.0;
            for (size_t r = 0; r < 2000; ++r)
                for (size_t j = 0; j < dimension; ++j)
                    X[r * dimension + j] -= mean[j];
            moe_status status = MOE_OK;
            metrics m = fit_cqt(&t, 2000, X, y, 0, 0, seed + trial, &status);
            if (status != MOE_OK) {
                ++refused;
                continue;
            }
            add(&regressor, m.regressor_fit);
            add(&gating, m.gating_fit);
        }
        printf("  %-5.1f %.3f +- %.3f    %.3f +- %.3f    %-8zu %s\n", ps[c], mean_of(&regressor),
               sd_of(&regressor), mean_of(&gating), sd_of(&gating), refused, paper1[c]);
    }

    printf("\nFig. 3a: GatingFit after t gate iterations (k = 2, not orthogonal, n = 2000)\n");
    static const size_t steps[] = {1, 2, 3, 4, 5, 10, 20};
    summary by_step[7] = {{0}};
    summary final_fit = {0};
    int settled = 1;
    for (size_t trial = 0; trial < trials; ++trial) {
        moe_rng rng;
        moe_rng_seed(&rng, seed, 2000 + trial);
        truth t;
        make_truth(&t, 2, 0.1, 0, &rng);
        sample(&t, 2000, &rng, X, y);
        double at_five = 0.0;
        for (int s = 0; s < 7; ++s) {
            metrics m = fit_cqt(&t, 2000, X, y, steps[s], 0, seed + trial, NULL);
            add(&by_step[s], m.gating_fit);
            if (steps[s] == 5)
                at_five = m.gating_fit;
        }
        metrics end = fit_cqt(&t, 2000, X, y, 0, 0, seed + trial, NULL);
        add(&final_fit, end.gating_fit);
        if (fabs(at_five - end.gating_fit) > 0.005)
            settled = 0;
    }
    printf("  t:      ");
    for (int s = 0; s < 7; ++s)
        printf(" %6zu", steps[s]);
    printf("    end\n  GateFit:");
    for (int s = 0; s < 7; ++s)
        printf(" %6.4f", mean_of(&by_step[s]));
    printf(" %6.4f\n", mean_of(&final_fit));
    check(settled, "Fig. 3a: GatingFit after 5 iterations within 0.005 of the end, every trial");

    static const size_t iterations[] = {1, 2, 5, 10, 20, 50, 100};
    for (size_t k = 3; k <= 4; ++k) {
        printf("\nFig. 3%c: E(A, W) against iterations, k = %zu, d = 10, n = 8000, sigma = 0.5, "
               "%zu trials (mean +- sd)\n",
               k == 3 ? 'b' : 'c', k, trials);
        summary ours[7] = {{0}}, joint[7] = {{0}}, ours_end = {0}, refined = {0};
        for (size_t trial = 0; trial < trials; ++trial) {
            moe_rng rng;
            moe_rng_seed(&rng, seed, 3000 + 100 * k + trial);
            truth t;
            make_truth(&t, k, 0.5, 0, &rng);
            sample(&t, 8000, &rng, X, y);
            for (int s = 0; s < 7; ++s) {
                add(&ours[s], fit_cqt(&t, 8000, X, y, iterations[s], 0, seed + trial, NULL).error);
                add(&joint[s], fit_joint(&t, 8000, X, y, iterations[s], seed + trial).error);
            }
            add(&ours_end, fit_cqt(&t, 8000, X, y, 0, 0, seed + trial, NULL).error);
            add(&refined, fit_cqt(&t, 8000, X, y, 0, 1, seed + trial, NULL).error);
        }
        printf("  %-10s %-16s %-16s\n", "iteration", "cqt + gate EM", "joint EM");
        for (int s = 0; s < 7; ++s)
            printf("  %-10zu %.3f +- %.3f    %.3f +- %.3f\n", iterations[s], mean_of(&ours[s]),
                   sd_of(&ours[s]), mean_of(&joint[s]), sd_of(&joint[s]));
        printf("  converged  %.3f +- %.3f (max %.3f); em refined from cqt %.3f +- %.3f; joint EM "
               "max at 100: %.3f\n",
               mean_of(&ours_end), sd_of(&ours_end), ours_end.max, mean_of(&refined),
               sd_of(&refined), joint[6].max);
        if (k == 4) {
            /* Reported, not checked: at n = 8000 the moment estimates of a four-expert
               mixture with a small mixing weight can miss an expert (docs/REPRODUCTIONS.md). */
            printf("  cqt's spread at k = 4: sd of E %.3f, max %.3f (the spec's reference run: "
                   "sd < 0.25, max < 1.5)\n",
                   sd_of(&ours_end), ours_end.max);
            check(mean_of(&refined) <= mean_of(&ours_end) + 1e-12,
                  "Fig. 3c: em refined from cqt no worse than cqt alone on the mean");
        }
    }
    free(X);
    free(y);
    printf("\n%s\n", checks_failed ? "SOME CHECKS FAILED" : "all checks passed");
    return checks_failed;
}
