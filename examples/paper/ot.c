/*
 * ot: the simulation of the optimal-transport aggregation paper (distributed learning of
 * mixtures of experts; docs/REPRODUCTIONS.md, "Distributed learning") with libmoe's `ot`
 * reduction:
 *
 *   K = 4, d = 20; true gate, expert coefficients and cluster centres with integer entries in
 *   [-5, 5], variances in {1, ..., 5}; x from a balanced mixture of N(centre_k, Sigma),
 *   Sigma_uv = (1/4)^|u - v|; y from the mixture of experts. 80% train, 20% test.
 *   G: em on all training rows. R, Mid, W: the training rows split at random into M equal
 *   shards, each fitted by em (the same options), then reduced by the transport MM
 *   (reduction = transport), the middle model and the weighted average, on a support of N/M
 *   training rows.
 *   Metrics on the test rows (means per row): the relaxed KL transport distance from the
 *   estimate to the truth, the log-likelihood, the parameter MSE (both in canonical order),
 *   the relative prediction error sum (y - yhat)^2 / sum y^2, the adjusted Rand index of the
 *   gate's most probable expert against the true labels; and the learning time (G: its fit;
 *   the others: the slowest local fit plus the reduction, as if the shards ran on M
 *   machines).
 *
 * Build (against an installed libmoe; ctest builds it as paper_ot, label long):
 *   cc -std=c11 -O2 examples/paper/ot.c $(pkg-config --cflags --libs moe) -lm -o ot
 * Usage: ot [--sizes N1,N2,...] [--machines M1,M2,...] [--sets S] [--first-set F]
 *           [--n-init R] [--trace] [--quick]
 * (defaults: N = 1e5, M = 4, 16, 64, 128, two sets, n_init = 5 as in the paper). The paper's
 * figures: Fig. 4 the defaults, Fig. 5 --sizes 5e5, Fig. 2 --sizes 1e6, Fig. 3 --machines 128
 * --sizes 1e5,5e5,1e6; --trace prints the transport MM's objective at every iteration of the
 * first set (Fig. 6). --first-set F runs sets F to F + S - 1 (set s's rows and fits are the
 * same in every run), so sets can run in separate processes. Each set's rows are the same for every M, so G is fitted once per set.
 * Exit status: 0 when every fit ran (the comparisons are printed, not judged), 2 on an error.
 */
#define _POSIX_C_SOURCE 200809L

#include <moe/moe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K = 4, D = 20, P = D + 1 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fail(const char *what, moe_status status, const char *message)
{
    fprintf(stderr, "ot: %s: %s (%s)\n", what, moe_strerror(status), message);
    exit(2);
}

typedef struct truth {
    double gate[K * P], experts[K * P], variances[K], centres[K * D];
} truth;

static int integer(moe_rng *rng, int low, int high)
{
    return low + (int)moe_rng_below(rng, (size_t)(high - low + 1));
}

static void make_truth(truth *t, moe_rng *rng)
{
    memset(t, 0, sizeof *t);
    for (int k = 0; k < K; ++k) {
        for (int j = 0; j < P; ++j) {
            t->experts[k * P + j] = integer(rng, -5, 5);
            if (k + 1 < K)
                t->gate[k * P + j] = integer(rng, -5, 5);
        }
        t->variances[k] = integer(rng, 1, 5);
        for (int j = 0; j < D; ++j)
            t->centres[k * D + j] = integer(rng, -5, 5);
    }
}

static moe_model_t *model_of(const double *gate, const double *experts, const double *variances)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    moe_status status = moe_model_create(&model, &spec);
    if (status == MOE_OK && gate != NULL) {
        status = moe_model_set_gate(model, gate, K * P);
        if (status == MOE_OK)
            status = moe_model_set_experts(model, experts, K * P);
        if (status == MOE_OK)
            status = moe_model_set_variances(model, variances, K);
    }
    if (status != MOE_OK)
        fail("model", status, moe_last_error());
    return model;
}

/* Rows: x around centre (i mod K) with AR(1) correlation 1/4, the true label, y. */
static void sample(const truth *t, const moe_model_t *model, size_t n, moe_rng *rng, double *X,
                   double *y, int *labels)
{
    const double rho = 0.25, innovation = sqrt(1.0 - rho * rho);
    double proba[K];
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * D;
        size_t cluster = i % K;
        double z = moe_rng_normal(rng);
        for (int j = 0; j < D; ++j) {
            if (j > 0)
                z = rho * z + innovation * moe_rng_normal(rng);
            x[j] = t->centres[cluster * D + j] + z;
        }
        moe_model_gate_proba(model, 1, x, D, proba, K);
        double u = moe_rng_uniform(rng);
        int k = 0;
        while (k + 1 < K && (u -= proba[k]) >= 0.0)
            ++k;
        labels[i] = k;
        double mean = t->experts[k * P];
        for (int j = 0; j < D; ++j)
            mean += t->experts[k * P + 1 + j] * x[j];
        y[i] = mean + sqrt(t->variances[k]) * moe_rng_normal(rng);
    }
}

/* ---- Metrics ------------------------------------------------------------------------------ */

typedef struct metrics {
    double transport, loglik, mse, rpe, ari, seconds;
} metrics;

static double kl(double m1, double v1, double m2, double v2)
{
    return 0.5 * (log(v2 / v1) + v1 / v2 + (m2 - m1) * (m2 - m1) / v2 - 1.0);
}

static double adjusted_rand(const int *truth_labels, const int *labels, size_t n)
{
    double table[K][K] = {{0}}, rows[K] = {0}, columns[K] = {0};
    for (size_t i = 0; i < n; ++i) {
        table[truth_labels[i]][labels[i]] += 1.0;
        rows[truth_labels[i]] += 1.0;
        columns[labels[i]] += 1.0;
    }
    double index = 0.0, a = 0.0, b = 0.0, pairs = (double)n * ((double)n - 1.0) / 2.0;
    for (int i = 0; i < K; ++i) {
        for (int j = 0; j < K; ++j)
            index += table[i][j] * (table[i][j] - 1.0) / 2.0;
        a += rows[i] * (rows[i] - 1.0) / 2.0;
        b += columns[i] * (columns[i] - 1.0) / 2.0;
    }
    double expected = a * b / pairs, maximum = 0.5 * (a + b);
    return (index - expected) / (maximum - expected);
}

static metrics measure(const moe_model_t *estimate, const moe_model_t *true_model, size_t n,
                       const double *X, const double *y, const int *labels)
{
    metrics m = {0, 0, 0, 0, 0, 0};
    double *gate = malloc(n * K * sizeof(double)), *prediction = malloc(n * sizeof(double));
    int *assigned = malloc(n * sizeof(int));
    double experts[K * P], variances[K], true_experts[K * P], true_variances[K];
    moe_model_get_experts(estimate, experts, K * P);
    moe_model_get_variances(estimate, variances, K);
    moe_model_get_experts(true_model, true_experts, K * P);
    moe_model_get_variances(true_model, true_variances, K);
    moe_model_gate_proba(estimate, n, X, D, gate, n * K);
    moe_model_predict(estimate, n, X, D, prediction, n);
    moe_model_loglik(estimate, n, X, D, y, NULL, &m.loglik);
    m.loglik /= (double)n;
    double se = 0.0, sy = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double *x = X + i * D;
        double mean[K], true_mean[K];
        for (int k = 0; k < K; ++k) {
            mean[k] = experts[k * P];
            true_mean[k] = true_experts[k * P];
            for (int j = 0; j < D; ++j) {
                mean[k] += experts[k * P + 1 + j] * x[j];
                true_mean[k] += true_experts[k * P + 1 + j] * x[j];
            }
        }
        int best = 0;
        for (int k = 0; k < K; ++k) {
            double cheapest = INFINITY;
            for (int j = 0; j < K; ++j) {
                double cost = kl(mean[k], variances[k], true_mean[j], true_variances[j]);
                cheapest = cost < cheapest ? cost : cheapest;
            }
            m.transport += gate[i * K + k] * cheapest;
            if (gate[i * K + k] > gate[i * K + best])
                best = k;
        }
        assigned[i] = best;
        se += (y[i] - prediction[i]) * (y[i] - prediction[i]);
        sy += y[i] * y[i];
    }
    m.transport /= (double)n;
    m.rpe = se / sy;
    m.ari = adjusted_rand(labels, assigned, n);
    /* Parameter MSE in canonical order (the truth's is the same rule). */
    moe_model_t *a = NULL, *b = NULL;
    moe_model_clone(&a, estimate);
    moe_model_clone(&b, true_model);
    moe_model_canonicalize(a);
    moe_model_canonicalize(b);
    double pa[K * P], pb[K * P], sum = 0.0;
    moe_model_get_experts(a, pa, K * P);
    moe_model_get_experts(b, pb, K * P);
    for (int i = 0; i < K * P; ++i)
        sum += (pa[i] - pb[i]) * (pa[i] - pb[i]);
    moe_model_get_gate(a, pa, K * P);
    moe_model_get_gate(b, pb, K * P);
    for (int i = 0; i < K * P; ++i)
        sum += (pa[i] - pb[i]) * (pa[i] - pb[i]);
    moe_model_get_variances(a, pa, K);
    moe_model_get_variances(b, pb, K);
    for (int i = 0; i < K; ++i)
        sum += (pa[i] - pb[i]) * (pa[i] - pb[i]);
    m.mse = sum / (double)((2 * K - 1) * P + K);
    moe_model_free(a);
    moe_model_free(b);
    free(gate);
    free(prediction);
    free(assigned);
    return m;
}

/* ---- Fits ----------------------------------------------------------------------------------- */

static moe_model_t *fit_em(size_t n, const double *X, const double *y, const char *n_init,
                           uint64_t seed, double *seconds)
{
    moe_model_t *model = model_of(NULL, NULL, NULL);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "em");
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
    moe_fitter_set_option(fitter, "seed", text);
    moe_fitter_set_option(fitter, "n_init", n_init);
    moe_fitter_set_option(fitter, "max_iter", "1000");
    moe_fitter_set_option(fitter, "tol", "1e-6");
    double start = now();
    moe_status status = moe_fitter_fit(fitter, model, n, X, D, y, NULL);
    *seconds = now() - start;
    if (status != MOE_OK)
        fail("em", status, moe_fitter_last_error(fitter));
    moe_fitter_free(fitter);
    return model;
}

static size_t parse_list(const char *text, size_t *out, size_t capacity)
{
    size_t count = 0;
    char *copy = malloc(strlen(text) + 1), *save = NULL;
    strcpy(copy, text);
    for (char *token = strtok_r(copy, ",", &save); token && count < capacity;
         token = strtok_r(NULL, ",", &save))
        out[count++] = (size_t)strtod(token, NULL);
    free(copy);
    return count;
}

/* ---- One Monte-Carlo set -------------------------------------------------------------------- */

typedef struct dataset {
    size_t N, train, test;
    double *X, *y;
    int *labels;
    moe_model_t *true_model;
} dataset;

/* Set `set` of size N: the same rows whatever the machine counts, so G is fitted once. */
static void make_dataset(dataset *data, size_t N, size_t set)
{
    data->N = N;
    data->train = N * 4 / 5;
    data->test = N - data->train;
    data->X = malloc(N * D * sizeof(double));
    data->y = malloc(N * sizeof(double));
    data->labels = malloc(N * sizeof(int));
    if (!data->X || !data->y || !data->labels)
        fail("data", MOE_ERR_OUT_OF_MEMORY, "cannot allocate the rows");
    moe_rng rng;
    moe_rng_seed(&rng, 2024, set);
    truth t;
    make_truth(&t, &rng);
    data->true_model = model_of(t.gate, t.experts, t.variances);
    double *X = data->X, *y = data->y;
    int *labels = data->labels;
    sample(&t, data->true_model, N, &rng, X, y, labels);
    /* shuffle so the train/test split and the shards are random */
    for (size_t i = N; i > 1; --i) {
        size_t j = moe_rng_below(&rng, i);
        double tmp[D];
        memcpy(tmp, X + (i - 1) * D, sizeof tmp);
        memcpy(X + (i - 1) * D, X + j * D, sizeof tmp);
        memcpy(X + j * D, tmp, sizeof tmp);
        double ty = y[i - 1];
        y[i - 1] = y[j];
        y[j] = ty;
        int tl = labels[i - 1];
        labels[i - 1] = labels[j];
        labels[j] = tl;
    }
}

static void free_dataset(dataset *data)
{
    free(data->X);
    free(data->y);
    free(data->labels);
    moe_model_free(data->true_model);
}

static metrics measure_test(const moe_model_t *estimate, const dataset *data)
{
    return measure(estimate, data->true_model, data->test, data->X + data->train * D,
                   data->y + data->train, data->labels + data->train);
}

/* What the transport MM did (Fig. 6): its iterations, monotonicity and objective trace. */
typedef struct mm_record {
    double iterations, violations;
    size_t length;
    double *objective; /* per support row, entry 0 the start (winning restart) */
} mm_record;

static void record_mm(const moe_fitter_t *fitter, size_t S, mm_record *record)
{
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    record->iterations = (double)report.iterations;
    record->violations = (double)report.monotonicity_violations;
    size_t length = 0;
    moe_fitter_get_trace(fitter, NULL, 0, &length);
    record->objective = malloc((length > 0 ? length : 1) * sizeof(double));
    moe_fitter_get_trace(fitter, record->objective, length, &length);
    for (size_t i = 0; i < length; ++i)
        record->objective[i] = -record->objective[i] / (double)S; /* the trace holds -objective */
    record->length = length;
}

static moe_model_t *reduce(const char *method, size_t M, moe_model_t *const *locals,
                           const double *shares, size_t S, const double *support_X,
                           const double *support_y, double *seconds, mm_record *record)
{
    moe_model_t *model = model_of(NULL, NULL, NULL);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "ot");
    moe_fitter_set_option(fitter, "reduction", method);
    moe_fitter_set_option(fitter, "tol", "1e-10");
    double start = now();
    moe_status status = moe_fitter_aggregate(fitter, model, M, (const moe_model_t *const *)locals,
                                             shares, S, support_X, D, support_y, NULL);
    *seconds = now() - start;
    if (status != MOE_OK)
        fail(method, status, moe_fitter_last_error(fitter));
    if (record != NULL)
        record_mm(fitter, S, record);
    moe_fitter_free(fitter);
    return model;
}

/* R, Mid and W from M local em fits on equal random shards; result[0..2]. */
static void distributed(const dataset *data, size_t M, const char *n_init, size_t set,
                        metrics *result, mm_record *record)
{
    size_t train = data->train;
    moe_model_t **locals = malloc(M * sizeof *locals);
    double *shares = malloc(M * sizeof(double)), slowest = 0.0, seconds = 0.0;
    for (size_t m = 0; m < M; ++m) {
        size_t first = m * train / M, last = (m + 1) * train / M;
        locals[m] = fit_em(last - first, data->X + first * D, data->y + first, n_init,
                           set + 1000 * m, &seconds);
        slowest = seconds > slowest ? seconds : slowest;
        shares[m] = (double)(last - first) / (double)train;
    }
    /* The support: N / M training rows (the shards are a random order, so the first rows are
       a random sample). */
    size_t S = train / M;
    static const char *const methods[] = {"transport", "middle", "average"};
    for (int r = 0; r < 3; ++r) {
        moe_model_t *reduced = reduce(methods[r], M, locals, shares, S, data->X, data->y,
                                      &seconds, r == 0 ? record : NULL);
        result[r] = measure_test(reduced, data);
        result[r].seconds = slowest + seconds;
        moe_model_free(reduced);
    }
    for (size_t m = 0; m < M; ++m)
        moe_model_free(locals[m]);
    free(locals);
    free(shares);
}

/* ---- Output --------------------------------------------------------------------------------- */

static void accumulate(metrics *sum, const metrics *value, size_t sets)
{
    sum->transport += value->transport / (double)sets;
    sum->loglik += value->loglik / (double)sets;
    sum->mse += value->mse / (double)sets;
    sum->rpe += value->rpe / (double)sets;
    sum->ari += value->ari / (double)sets;
    sum->seconds += value->seconds / (double)sets;
}

/* sum[0] is G, sum[1..3] R, Mid and W; mm the transport MM's means over the sets. */
static void print_machines(size_t N, size_t train, size_t test, size_t M, const metrics *sum,
                           const mm_record *mm)
{
    static const char *const names[] = {"G", "R", "Mid", "W"};
    printf("\nN = %zu (train %zu, test %zu), M = %zu\n  %-4s %12s %10s %12s %9s %7s %9s\n", N,
           train, test, M, "", "transport", "loglik", "param MSE", "RPE", "ARI", "time s");
    for (int e = 0; e < 4; ++e)
        printf("  %-4s %12.4f %10.4f %12.4g %9.5f %7.4f %9.3f\n", names[e], sum[e].transport,
               sum[e].loglik, sum[e].mse, sum[e].rpe, sum[e].ari, sum[e].seconds);
    /* The paper's qualitative claims, reported (docs/REPRODUCTIONS.md says where they hold):
       R about as good as G at small M, better than Mid and W. */
    printf("  R against G: log-likelihood %+.4f per row, ARI %+.4f; R %s Mid and W on "
           "the log-likelihood; learning time %.1fx shorter\n",
           sum[1].loglik - sum[0].loglik, sum[1].ari - sum[0].ari,
           sum[1].loglik > sum[2].loglik && sum[1].loglik > sum[3].loglik ? "beats"
                                                                          : "does not beat",
           sum[0].seconds / sum[1].seconds);
    printf("  transport MM: %.1f iterations (winning restart, mean), %.1f increases of its "
           "objective\n",
           mm->iterations, mm->violations);
}

static void print_trace(size_t N, size_t M, const mm_record *record)
{
    printf("\nMM objective per support row, N = %zu, M = %zu (Fig. 6):", N, M);
    int monotone = 1;
    for (size_t i = 0; i < record->length; ++i) {
        printf("%s%.6g", i % 8 == 0 ? "\n  " : " ", record->objective[i]);
        if (i > 0 && record->objective[i] > record->objective[i - 1])
            monotone = 0;
    }
    printf("\n  %zu iterations after the start, %s\n", record->length - 1,
           monotone ? "non-increasing" : "NOT monotone");
}

typedef struct settings {
    size_t sizes[8], machines[8], n_sizes, n_machines, sets, first_set;
    const char *n_init;
    int trace;
} settings;

/* All sets at one N: G once per set, then every M on the same rows. */
static void run_size(const settings *config, size_t N)
{
    size_t n_machines = config->n_machines, sets = config->sets;
    metrics(*sum)[4] = calloc(n_machines, sizeof *sum);
    mm_record *mm = calloc(n_machines, sizeof *mm);
    size_t train = 0, test = 0;
    for (size_t set = config->first_set; set < config->first_set + sets; ++set) {
        dataset data;
        make_dataset(&data, N, set);
        train = data.train;
        test = data.test;
        double seconds = 0.0;
        moe_model_t *global = fit_em(train, data.X, data.y, config->n_init, set, &seconds);
        metrics g = measure_test(global, &data);
        g.seconds = seconds;
        moe_model_free(global);
        for (size_t mi = 0; mi < n_machines; ++mi) {
            size_t M = config->machines[mi];
            metrics result[3];
            mm_record record = {0, 0, 0, NULL};
            distributed(&data, M, config->n_init, set, result, &record);
            accumulate(&sum[mi][0], &g, sets);
            for (int e = 0; e < 3; ++e)
                accumulate(&sum[mi][1 + e], &result[e], sets);
            mm[mi].iterations += record.iterations / (double)sets;
            mm[mi].violations += record.violations / (double)sets;
            if (config->trace && set == config->first_set)
                print_trace(N, M, &record);
            /* Each set's rows as they come, for long runs watched as they go. */
            fprintf(stderr, "ot: N = %zu, set %zu, M = %zu: log-lik G %.4f R %.4f Mid %.4f W %.4f; "
                            "time G %.1f R %.1f s\n",
                    N, set, M, g.loglik, result[0].loglik, result[1].loglik, result[2].loglik,
                    g.seconds, result[0].seconds);
            free(record.objective);
            fflush(stdout);
        }
        free_dataset(&data);
        fprintf(stderr, "ot: N = %zu, set %zu done\n", N, set);
    }
    for (size_t mi = 0; mi < n_machines; ++mi)
        print_machines(N, train, test, config->machines[mi], sum[mi], &mm[mi]);
    fflush(stdout);
    free(sum);
    free(mm);
}

static int parse(int argc, char **argv, settings *config)
{
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--sizes") == 0 && a + 1 < argc)
            config->n_sizes = parse_list(argv[++a], config->sizes, 8);
        else if (strcmp(argv[a], "--machines") == 0 && a + 1 < argc)
            config->n_machines = parse_list(argv[++a], config->machines, 8);
        else if (strcmp(argv[a], "--sets") == 0 && a + 1 < argc)
            config->sets = (size_t)strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--n-init") == 0 && a + 1 < argc)
            config->n_init = argv[++a];
        else if (strcmp(argv[a], "--first-set") == 0 && a + 1 < argc)
            config->first_set = (size_t)strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--trace") == 0)
            config->trace = 1;
        else if (strcmp(argv[a], "--quick") == 0) {
            config->sizes[0] = 20000;
            config->n_sizes = 1;
            config->machines[0] = 4;
            config->machines[1] = 16;
            config->n_machines = 2;
            config->sets = 1;
        } else
            return 0;
    }
    for (size_t i = 0; i < config->n_machines; ++i)
        if (config->machines[i] == 0)
            return 0;
    return config->n_sizes > 0 && config->n_machines > 0 && config->sets > 0;
}

int main(int argc, char **argv)
{
    settings config = {{100000}, {4, 16, 64, 128}, 1, 4, 2, 0, "5", 0};
    if (!parse(argc, argv, &config)) {
        fprintf(stderr, "usage: ot [--sizes N,...] [--machines M,...] [--sets S] "
                        "[--first-set F] [--n-init R] [--trace] [--quick]\n");
        return 2;
    }
    printf("K = %d, d = %d; em with n_init = %s; Monte-Carlo sets %zu to %zu; means per test "
           "row\n",
           K, D, config.n_init, config.first_set, config.first_set + config.sets - 1);
    for (size_t si = 0; si < config.n_sizes; ++si)
        run_size(&config, config.sizes[si]);
    return 0;
}
