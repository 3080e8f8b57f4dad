/*
 * ismm_steep_gate: does ismm's streamed gate follow a steep one as em does on the same rows?
 *
 * The stream: K = 2, d = 1, x ~ N(0, 1), gate logit S x (expert 1 where it is positive),
 * experts y = 1 + 2 x and y = -1 - x with noise standard deviation 0.5. Stream s is drawn by
 * moe/rng.h from (seed 41, S x 1000 + s). em fits all its rows (default options); ismm
 * streams them through moe_fitter_partial_fit in pieces of 1000 rows with batch_size B and
 * every other option at its default (or --option name=value). Printed per slope and batch
 * size, worst over the streams: the fitted gate slopes of ismm and em, their ratio
 * ismm / em (the acceptance is at least 0.75), and the per-row log-likelihood of em minus
 * ismm's (nats; em maximises it, so ismm's gap is >= 0 up to em's tolerance).
 *
 * Usage: ismm_steep_gate [--streams N] [--rows R] [--slope S]... [--batch B]...
 *                        [--option name=value]... [--every]
 * Defaults: 20 streams, 1e6 rows, slopes 8, 15, 30, batches 1 and 256. --every prints each
 * stream. Exit status 0 if every worst ratio is at least 0.75, 1 if not, 2 on an error.
 */
#include <moe/moe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIECE 1000
#define MAX_LIST 8

static const char *option_names[MAX_LIST], *option_values[MAX_LIST];
static size_t n_options = 0;

static void fail(const char *what, moe_status status, const char *message)
{
    fprintf(stderr, "ismm_steep_gate: %s: %s (%s)\n", what, moe_strerror(status), message);
    exit(2);
}

static void draw_rows(double slope, size_t stream, size_t n, double *x, double *y)
{
    moe_rng rng;
    moe_rng_seed(&rng, 41, (uint64_t)(slope * 1000.0) + stream);
    for (size_t i = 0; i < n; ++i) {
        x[i] = moe_rng_normal(&rng);
        int first = moe_rng_uniform(&rng) < 1.0 / (1.0 + exp(-slope * x[i]));
        double mean = first ? 1.0 + 2.0 * x[i] : -1.0 - x[i];
        y[i] = mean + 0.5 * moe_rng_normal(&rng);
    }
}

static moe_model_t *empty_model(void)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = 1;
    moe_model_t *model = NULL;
    moe_status status = moe_model_create(&model, &spec);
    if (status != MOE_OK)
        fail("model", status, moe_last_error());
    return model;
}

/* The gate's slope for expert 1 = the one whose line has slope near 2 (the sign follows the
   experts' order). */
static double gate_slope(const moe_model_t *model)
{
    double gate[4], experts[4];
    moe_model_get_gate(model, gate, 4);
    moe_model_get_experts(model, experts, 4);
    double slope = gate[1] - gate[3];
    return fabs(experts[1] - 2.0) <= fabs(experts[3] - 2.0) ? slope : -slope;
}

static double mean_loglik(const moe_model_t *model, size_t n, const double *x, const double *y)
{
    double total = 0.0;
    moe_status status = moe_model_loglik(model, n, x, 1, y, NULL, &total);
    if (status != MOE_OK)
        fail("loglik", status, moe_last_error());
    return total / (double)n;
}

typedef struct result {
    double slope, loglik;
} result;

static result fit_em(size_t n, const double *x, const double *y)
{
    moe_model_t *model = empty_model();
    moe_fitter_t *em = NULL;
    moe_status status = moe_fitter_create(&em, "em");
    if (status == MOE_OK)
        status = moe_fitter_fit(em, model, n, x, 1, y, NULL);
    if (status != MOE_OK)
        fail("em", status, moe_last_error());
    result r = {gate_slope(model), mean_loglik(model, n, x, y)};
    moe_fitter_free(em);
    moe_model_free(model);
    return r;
}

static result stream_ismm(size_t n, const double *x, const double *y, size_t batch)
{
    moe_fitter_t *fitter = NULL;
    moe_status status = moe_fitter_create(&fitter, "ismm");
    char text[32];
    snprintf(text, sizeof text, "%zu", batch);
    if (status == MOE_OK)
        status = moe_fitter_set_option(fitter, "batch_size", text);
    for (size_t i = 0; i < n_options && status == MOE_OK; ++i)
        status = moe_fitter_set_option(fitter, option_names[i], option_values[i]);
    if (status != MOE_OK)
        fail("fitter", status, moe_last_error());
    moe_model_t *model = empty_model();
    for (size_t first = 0; first < n && status == MOE_OK; first += PIECE) {
        size_t count = n - first < PIECE ? n - first : PIECE;
        status = moe_fitter_partial_fit(fitter, model, count, x + first, 1, y + first, NULL);
    }
    if (status != MOE_OK)
        fail("partial_fit", status, moe_fitter_last_error(fitter));
    result r = {gate_slope(model), mean_loglik(model, n, x, y)};
    moe_model_free(model);
    moe_fitter_free(fitter);
    return r;
}

/* One slope: every batch size over every stream; nonzero when a worst ratio is below 0.75. */
static int run_slope(double slope, size_t streams, size_t rows, const size_t *batches,
                     size_t n_batches, int every)
{
    double worst_ratio[MAX_LIST], worst_gap[MAX_LIST], ismm_at[MAX_LIST], em_at[MAX_LIST];
    double low[MAX_LIST], high[MAX_LIST];
    for (size_t b = 0; b < n_batches; ++b) {
        worst_ratio[b] = INFINITY;
        worst_gap[b] = -INFINITY;
        low[b] = INFINITY;
        high[b] = -INFINITY;
    }
    double *x = malloc(rows * sizeof(double)), *y = malloc(rows * sizeof(double));
    if (x == NULL || y == NULL)
        fail("rows", MOE_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t s = 0; s < streams; ++s) {
        draw_rows(slope, s, rows, x, y);
        result em = fit_em(rows, x, y);
        for (size_t b = 0; b < n_batches; ++b) {
            result r = stream_ismm(rows, x, y, batches[b]);
            double ratio = r.slope / em.slope, gap = em.loglik - r.loglik;
            if (every)
                printf("    stream %2zu  B %3zu  ismm %7.2f  em %7.2f  ratio %.3f  gap %.5f\n",
                       s, batches[b], r.slope, em.slope, ratio, gap);
            /* The worst is the ratio farthest from 1, either way. */
            if (fabs(log(ratio)) > fabs(log(worst_ratio[b])) || !isfinite(worst_ratio[b])) {
                worst_ratio[b] = ratio;
                ismm_at[b] = r.slope;
                em_at[b] = em.slope;
            }
            worst_gap[b] = fmax(worst_gap[b], gap);
            low[b] = fmin(low[b], r.slope);
            high[b] = fmax(high[b], r.slope);
        }
        fflush(stdout);
    }
    int failed = 0;
    for (size_t b = 0; b < n_batches; ++b) {
        int ok = worst_ratio[b] >= 0.75 && worst_ratio[b] <= 1.25;
        failed |= !ok;
        printf("  %5g  %5zu  %7.2f to %7.2f  %7.2f / %7.2f = %.3f  %.5f  %s\n", slope,
               batches[b], low[b], high[b], ismm_at[b], em_at[b], worst_ratio[b], worst_gap[b],
               ok ? "ok" : "FAILED");
    }
    fflush(stdout);
    free(x);
    free(y);
    return failed;
}

static void add_option(const char *text)
{
    const char *equals = strchr(text, '=');
    if (equals == NULL || n_options == MAX_LIST) {
        fprintf(stderr, "ismm_steep_gate: --option name=value (at most %d)\n", MAX_LIST);
        exit(2);
    }
    char *name = malloc((size_t)(equals - text) + 1);
    if (name == NULL)
        exit(2);
    memcpy(name, text, (size_t)(equals - text));
    name[equals - text] = '\0';
    option_names[n_options] = name;
    option_values[n_options++] = equals + 1;
}

int main(int argc, char **argv)
{
    size_t streams = 20, rows = 1000000, n_slopes = 0, n_batches = 0;
    double slopes[MAX_LIST];
    size_t batches[MAX_LIST];
    int every = 0;
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--streams") == 0 && a + 1 < argc)
            streams = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--rows") == 0 && a + 1 < argc)
            rows = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--slope") == 0 && a + 1 < argc && n_slopes < MAX_LIST)
            slopes[n_slopes++] = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--batch") == 0 && a + 1 < argc && n_batches < MAX_LIST)
            batches[n_batches++] = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--option") == 0 && a + 1 < argc)
            add_option(argv[++a]);
        else if (strcmp(argv[a], "--every") == 0)
            every = 1;
        else {
            fprintf(stderr, "usage: ismm_steep_gate [--streams N] [--rows R] [--slope S]... "
                            "[--batch B]... [--option name=value]... [--every]\n");
            return 2;
        }
    }
    if (n_slopes == 0) {
        slopes[0] = 8.0;
        slopes[1] = 15.0;
        slopes[2] = 30.0;
        n_slopes = 3;
    }
    if (n_batches == 0) {
        batches[0] = 1;
        batches[1] = 256;
        n_batches = 2;
    }
    printf("ismm against em, %zu streams of %zu rows (x ~ N(0, 1), experts 1 + 2x and -1 - x, "
           "noise 0.5); worst over the streams\n"
           "  slope  batch  ismm's slopes          worst: ismm / em = ratio  gap (nats/row)\n",
           streams, rows);
    int failed = 0;
    for (size_t i = 0; i < n_slopes; ++i)
        failed |= run_slope(slopes[i], streams, rows, batches, n_batches, every);
    return failed;
}
