/*
 * smoline: the synthetic experiment of Fruytier, Mokhtari & Sanghavi,
 * "Learning Mixtures of Experts with EM" (arXiv:2411.06056 v1, section 6,
 * Figs. 1-2): EM vs gradient EM vs gradient descent on a symmetric mixture
 * of two linear experts (SMoLinE), n = 1000, d = 10, ||beta*|| = ||w*|| = 4,
 * 50 iterations, averaged over 50 random instances.
 *
 * libmoe has no symmetric (beta_2 = -beta_1) model, so this program fits the
 * UNCONSTRAINED two-expert Gaussian MoE (3d free parameters instead of 2d),
 * with the truth written in libmoe's layout:
 *   gate    rows [w*, 0]        (row 1 is the reference, pi_0 = s(w*'x))
 *   experts [beta*, -beta*]     variances [1, 1] (known, never updated)
 *
 * Every iteration is one moe_fitter_fit call with max_iter = 1 and
 * init = model, so the parameters can be recorded after each iteration.
 *
 * Build (against an installed libmoe; ctest builds and runs it as paper_smoline):
 *   cc -std=c11 -O2 examples/paper/smoline.c $(pkg-config --cflags --libs moe) -lm -o smoline
 * Usage:
 *   smoline [--rho R] [--iterations T] [--instances M] [--quick] [--seed S]
 *           [--csv PATH] [--svg PATH]
 * Exit status: 0 if EM <= GEM <= GD on the mean objective gap at every
 * t <= 20, 1 if not, 2 on a library or usage error.
 */
#include <moe/moe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D 10             /* features */
#define K 2              /* experts */
#define N_SAMPLES 1000   /* rows per instance */
#define TRUE_NORM 4.0    /* ||beta*|| = ||w*|| */
#define CHECK_LAST_T 20  /* the ordering check covers t = 0..20 */
#define TIE_SLACK 1e-9   /* absolute slack for ties once converged */
#define LOG_FLOOR 1e-13  /* log panels: smaller values are round-off, not drawn */

enum { ALG_EM, ALG_GEM, ALG_GD, N_ALG };
static const char *const ALG_NAME[N_ALG] = {"em", "gem", "gd"};
static const char *const ALG_LABEL[N_ALG] = {"EM", "GEM", "GD"};

/* The four metrics of Figs. 1a, 1b, 2a, 2b. */
enum { M_GAP_STAR, M_GAP_LAST, M_ERR_BETA, M_ERR_W, N_METRIC };
static const char *const METRIC_NAME[N_METRIC] = {"gap_star", "gap_last", "relerr_beta",
                                                  "relerr_w"};

typedef struct config {
    double rho;         /* relative size of the start perturbation, per block */
    int iterations;     /* T */
    int instances;      /* averaged over */
    uint64_t seed;      /* base seed; instance i uses its own stream */
    const char *csv;
    const char *svg;
} config;

/* ------------------------------------------------------------------------ */
/* Errors: any library failure ends the program with status 2.              */
/* ------------------------------------------------------------------------ */

static void check_model(moe_status status, const char *what, const moe_model_t *model)
{
    if (status == MOE_OK)
        return;
    const char *detail = model ? moe_model_last_error(model) : "";
    if (!detail || !*detail)
        detail = moe_last_error();
    fprintf(stderr, "smoline: %s failed: %s (%s)\n", what, moe_strerror(status), detail);
    exit(2);
}

static void check_fitter(moe_status status, const char *what, const moe_fitter_t *fitter)
{
    if (status == MOE_OK)
        return;
    const char *detail = fitter ? moe_fitter_last_error(fitter) : "";
    if (!detail || !*detail)
        detail = moe_last_error();
    fprintf(stderr, "smoline: %s failed: %s (%s)\n", what, moe_strerror(status), detail);
    exit(2);
}

static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (!p) {
        fprintf(stderr, "smoline: out of memory\n");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* PRNG: splitmix64 and Box-Muller, so every platform draws the same data.  */
/* ------------------------------------------------------------------------ */

typedef struct rng {
    uint64_t state;
    int has_spare;
    double spare;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform on (0, 1), never 0, so log() below is safe. */
static double rng_uniform(rng *r)
{
    return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal; Box-Muller gives two, the second is kept for the next call. */
static double rng_normal(rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    const double two_pi = 6.283185307179586476925286766559;
    double radius = sqrt(-2.0 * log(rng_uniform(r)));
    double angle = two_pi * rng_uniform(r);
    r->spare = radius * sin(angle);
    r->has_spare = 1;
    return radius * cos(angle);
}

/* A vector of norm `norm` in a uniformly random direction. */
static void rng_direction(rng *r, double *v, size_t len, double norm)
{
    double ss = 0.0;
    do {
        ss = 0.0;
        for (size_t j = 0; j < len; ++j) {
            v[j] = rng_normal(r);
            ss += v[j] * v[j];
        }
    } while (ss == 0.0);
    double scale = norm / sqrt(ss);
    for (size_t j = 0; j < len; ++j)
        v[j] *= scale;
}

/* ------------------------------------------------------------------------ */
/* Small vector helpers                                                     */
/* ------------------------------------------------------------------------ */

static double dot(const double *a, const double *b, size_t len)
{
    double s = 0.0;
    for (size_t j = 0; j < len; ++j)
        s += a[j] * b[j];
    return s;
}

static double norm2(const double *a, size_t len) { return sqrt(dot(a, a, len)); }

/* ||a - s * b||^2 */
static double dist2_scaled(const double *a, const double *b, double s, size_t len)
{
    double acc = 0.0;
    for (size_t j = 0; j < len; ++j) {
        double e = a[j] - s * b[j];
        acc += e * e;
    }
    return acc;
}

static double sigmoid(double t)
{
    if (t >= 0.0)
        return 1.0 / (1.0 + exp(-t));
    double e = exp(t);
    return e / (1.0 + e);
}

/*
 * lambda_max(E_n[x x']) by power iteration. libmoe computes the same number
 * internally for its safe steps; this copy only lets us check the steps the
 * fitters report (gd: 1/lam, gem: experts 1/lam and gate 4/lam).
 */
static double lambda_max(const double *X, size_t n)
{
    double S[D * D] = {0};
    for (size_t i = 0; i < n; ++i)
        for (size_t a = 0; a < D; ++a)
            for (size_t b = 0; b < D; ++b)
                S[a * D + b] += X[i * D + a] * X[i * D + b] / (double)n;
    double v[D], u[D], lam = 0.0;
    for (size_t j = 0; j < D; ++j)
        v[j] = 1.0 + 0.01 * (double)j;
    for (int it = 0; it < 1000; ++it) {
        for (size_t a = 0; a < D; ++a)
            u[a] = dot(S + a * D, v, D);
        double nu = norm2(u, D);
        for (size_t a = 0; a < D; ++a)
            v[a] = u[a] / nu;
        if (fabs(nu - lam) <= 1e-15 * nu)
            break;
        lam = nu;
    }
    return lam;
}

/* ------------------------------------------------------------------------ */
/* One instance: truth, data and the common starting point.                 */
/* ------------------------------------------------------------------------ */

typedef struct instance {
    size_t n;
    double *X;            /* n x D, row-major */
    double *y;
    double w_star[D];
    double beta_star[D];
    double L_star;        /* mean negative log-likelihood at the truth */
    moe_model_t *truth;
    moe_model_t *start;
} instance;

static moe_model_t *make_model(const double *w, const double *beta1, const double *beta2)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_GAUSSIAN;
    spec.n_experts = K;
    spec.n_features = D;
    spec.intercept = 0;
    moe_model_t *m = NULL;
    check_model(moe_model_create(&m, &spec), "moe_model_create", NULL);

    double gate[K * D] = {0};   /* row 1 stays zero: the reference expert */
    double experts[K * D];
    const double variances[K] = {1.0, 1.0};
    memcpy(gate, w, sizeof(double) * D);
    memcpy(experts, beta1, sizeof(double) * D);
    memcpy(experts + D, beta2, sizeof(double) * D);
    check_model(moe_model_set_gate(m, gate, K * D), "moe_model_set_gate", m);
    check_model(moe_model_set_experts(m, experts, K * D), "moe_model_set_experts", m);
    check_model(moe_model_set_variances(m, variances, K), "moe_model_set_variances", m);
    return m;
}

/* Mean negative log-likelihood, the paper's L. */
static double mean_nll(const moe_model_t *m, const instance *in)
{
    double ll = 0.0;
    check_model(moe_model_loglik(m, in->n, in->X, D, in->y, NULL, &ll), "moe_model_loglik", m);
    return -ll / (double)in->n;
}

/* Section 1.4 of the spec: x ~ N(0, I), z = +1 w.p. s(w*'x), y = z beta*'x + N(0, 1). */
static void draw_data(rng *r, instance *in)
{
    for (size_t i = 0; i < in->n; ++i) {
        double *x = in->X + i * D;
        for (size_t j = 0; j < D; ++j)
            x[j] = rng_normal(r);
        double sign = rng_uniform(r) < sigmoid(dot(in->w_star, x, D)) ? 1.0 : -1.0;
        in->y[i] = sign * dot(in->beta_star, x, D) + rng_normal(r);
    }
}

/* theta* + rho ||block|| u per block, u a random unit direction. */
static void perturb(rng *r, const double *block, double rho, double *out)
{
    double u[D];
    rng_direction(r, u, D, rho * norm2(block, D));
    for (size_t j = 0; j < D; ++j)
        out[j] = block[j] + u[j];
}

static void instance_init(instance *in, const config *cfg, int index)
{
    /* Each instance has its own stream, so instance i is the same whatever
       --instances says. */
    rng r = {cfg->seed + UINT64_C(0x632BE59BD9B4E019) * (uint64_t)(index + 1), 0, 0.0};
    in->n = N_SAMPLES;
    in->X = xcalloc(in->n * D, sizeof(double));
    in->y = xcalloc(in->n, sizeof(double));
    rng_direction(&r, in->beta_star, D, TRUE_NORM);
    rng_direction(&r, in->w_star, D, TRUE_NORM);
    draw_data(&r, in);

    double minus_beta[D], w0[D], b1[D], b2[D];
    for (size_t j = 0; j < D; ++j)
        minus_beta[j] = -in->beta_star[j];
    in->truth = make_model(in->w_star, in->beta_star, minus_beta);
    perturb(&r, in->w_star, cfg->rho, w0);
    perturb(&r, in->beta_star, cfg->rho, b1);
    perturb(&r, minus_beta, cfg->rho, b2);
    in->start = make_model(w0, b1, b2);
    in->L_star = mean_nll(in->truth, in);
}

static void instance_free(instance *in)
{
    moe_model_free(in->truth);
    moe_model_free(in->start);
    free(in->X);
    free(in->y);
}

/* ------------------------------------------------------------------------ */
/* Errors against the truth, after undoing libmoe's canonical reordering.   */
/* ------------------------------------------------------------------------ */

typedef struct errors {
    double beta;   /* ||[b1; b2] - [beta*; -beta*]|| / ||[beta*; -beta*]|| */
    double w;      /* ||w - w*|| / ||w*||, w = gate row of the beta* expert minus the other */
    int swapped;   /* canonical expert 1 plays beta* */
} errors;

static errors measure_errors(const moe_model_t *m, const instance *in)
{
    double gate[K * D], ex[K * D];
    check_model(moe_model_get_gate(m, gate, K * D), "moe_model_get_gate", m);
    check_model(moe_model_get_experts(m, ex, K * D), "moe_model_get_experts", m);

    /* The permutation of the two experts closest to [beta*, -beta*]. */
    double keep = dist2_scaled(ex, in->beta_star, 1.0, D) +
                  dist2_scaled(ex + D, in->beta_star, -1.0, D);
    double swap = dist2_scaled(ex + D, in->beta_star, 1.0, D) +
                  dist2_scaled(ex, in->beta_star, -1.0, D);
    errors e;
    e.swapped = swap < keep;
    size_t a = e.swapped ? 1 : 0;   /* expert matched to beta* */
    size_t b = 1 - a;

    e.beta = sqrt(e.swapped ? swap : keep) / (sqrt(2.0) * norm2(in->beta_star, D));
    /* Only gate differences are identified: the logit of "beta* expert vs the other". */
    double w[D];
    for (size_t j = 0; j < D; ++j)
        w[j] = gate[a * D + j] - gate[b * D + j];
    e.w = sqrt(dist2_scaled(w, in->w_star, 1.0, D)) / norm2(in->w_star, D);
    return e;
}

/* ------------------------------------------------------------------------ */
/* Fitters                                                                  */
/* ------------------------------------------------------------------------ */

/* Options common to the three estimators; steps stay at the library's safe defaults. */
static moe_fitter_t *make_fitter(const char *name, long long max_iter)
{
    moe_fitter_t *f = NULL;
    check_fitter(moe_fitter_create(&f, name), "moe_fitter_create", NULL);
    check_fitter(moe_fitter_set_int(f, MOE_OPT_INIT, MOE_INIT_MODEL), "set init", f);
    check_fitter(moe_fitter_set_int(f, MOE_OPT_N_INIT, 1), "set n_init", f);
    check_fitter(moe_fitter_set_int(f, MOE_OPT_UPDATE_VARIANCE, 0), "set update_variance", f);
    check_fitter(moe_fitter_set_double(f, MOE_OPT_TOLERANCE, 0.0), "set tol", f);
    check_fitter(moe_fitter_set_int(f, MOE_OPT_MAX_ITER, max_iter), "set max_iter", f);
    /* The paper's EM solves the gate M-step exactly (libmoe's default em takes one checked
       Newton step per iteration). */
    if (strcmp(name, "em") == 0)
        check_fitter(moe_fitter_set_option(f, "gate_solver", "newton"), "set gate_solver", f);
    return f;
}

/* Things that should not happen, collected over all runs and reported at the end. */
typedef struct diagnostics {
    size_t lib_violations[N_ALG];   /* report.monotonicity_violations, summed */
    double lib_worst[N_ALG];        /* report.worst_relative_decrease, max */
    size_t increases[N_ALG];        /* our own count of iterations that raised L */
    double max_increase[N_ALG];
    size_t swaps_first[N_ALG];      /* aligned permutation changed at t = 1 (canonical order) */
    size_t swaps_later[N_ALG];      /* ... at t >= 2: canonical order flipped mid-run */
    size_t gate_idle[N_ALG];        /* em: fits whose gate Newton took no step */
    int first_idle_t;               /* em: earliest t of such a fit, 0 if none */
    size_t separation[N_ALG];       /* report.separation_events, summed */
    size_t ridge[N_ALG];            /* report.ridge_fallbacks, summed */
    size_t line_fail[N_ALG];        /* report.line_search_failures, summed */
    double trace_start_diff[N_ALG]; /* max |trace[0] - our L before the fit| (mean scale) */
    double one_shot_diff[N_ALG];    /* max |one fit of T iterations - T fits of one| (mean L) */
    double step_dev[N_ALG];         /* max |report.step * lam - 1| (gem, gd) */
    double gate_step_dev[N_ALG];    /* max |report.gate_step * lam / 4 - 1| (gem) */
    size_t one_shot_len[N_ALG];     /* shortest trace of one fit with max_iter = T */
    double lam_min, lam_max;        /* range of our lambda_max over the instances */
} diagnostics;

/* Check one max_iter = 1 fit against what we know, and add to the diagnostics. */
static void audit_fit(const moe_fitter_t *f, int alg, int t, size_t n, double lam,
                      double L_before, diagnostics *dg)
{
    moe_fit_report rep = MOE_FIT_REPORT_INIT;
    check_fitter(moe_fitter_get_report(f, &rep), "moe_fitter_get_report", f);
    dg->lib_violations[alg] += rep.monotonicity_violations;
    if (rep.worst_relative_decrease > dg->lib_worst[alg])
        dg->lib_worst[alg] = rep.worst_relative_decrease;
    dg->separation[alg] += rep.separation_events;
    dg->ridge[alg] += rep.ridge_fallbacks;
    dg->line_fail[alg] += rep.line_search_failures;
    /* Exact EM should always solve the gate M-step; zero Newton steps means the
       warm start already met gate_tol, i.e. the gate was left where it was. */
    if (alg == ALG_EM && rep.inner_iterations == 0) {
        dg->gate_idle[alg]++;
        if (dg->first_idle_t == 0 || t < dg->first_idle_t)
            dg->first_idle_t = t;
    }
    /* The safe steps of spec section 3.4: experts (and gd) 1/lam, gem's gate 4/lam. */
    if (alg != ALG_EM)
        dg->step_dev[alg] = fmax(dg->step_dev[alg], fabs(rep.step * lam - 1.0));
    if (alg == ALG_GEM)
        dg->gate_step_dev[alg] = fmax(dg->gate_step_dev[alg], fabs(rep.gate_step * lam / 4.0 - 1.0));

    /* init = model must start exactly where the previous fit stopped. */
    size_t len = 0;
    check_fitter(moe_fitter_get_trace(f, NULL, 0, &len), "moe_fitter_get_trace", f);
    double *trace = xcalloc(len + 1, sizeof(double));
    check_fitter(moe_fitter_get_trace(f, trace, len, &len), "moe_fitter_get_trace", f);
    if (len >= 1) {
        double diff = fabs(-trace[0] / (double)n - L_before);
        if (diff > dg->trace_start_diff[alg])
            dg->trace_start_diff[alg] = diff;
    }
    free(trace);
}

/*
 * One algorithm on one instance: T fits of one iteration each from the
 * instance's start. L[t], eb[t], ew[t] receive the mean NLL and the relative
 * errors of iterate t = 0..T.
 */
static void run_algorithm(moe_fitter_t *f, int alg, const instance *in, double lam, int T,
                          double *L, double *eb, double *ew, diagnostics *dg)
{
    moe_model_t *m = NULL;
    check_model(moe_model_clone(&m, in->start), "moe_model_clone", in->start);
    L[0] = mean_nll(m, in);
    errors e = measure_errors(m, in);
    eb[0] = e.beta;
    ew[0] = e.w;
    for (int t = 1; t <= T; ++t) {
        check_fitter(moe_fitter_fit(f, m, in->n, in->X, D, in->y, NULL), "moe_fitter_fit", f);
        audit_fit(f, alg, t, in->n, lam, L[t - 1], dg);
        L[t] = mean_nll(m, in);
        int prev_swapped = e.swapped;
        e = measure_errors(m, in);
        eb[t] = e.beta;
        ew[t] = e.w;
        if (e.swapped != prev_swapped)
            ++*(t == 1 ? &dg->swaps_first[alg] : &dg->swaps_later[alg]);
        double rise = L[t] - L[t - 1];
        if (rise > 1e-12 * (1.0 + fabs(L[t - 1]))) {
            dg->increases[alg]++;
            if (rise > dg->max_increase[alg])
                dg->max_increase[alg] = rise;
        }
    }
    moe_model_free(m);
}

/*
 * The same T iterations as one fit: if the estimators really are stateless
 * between iterations, its trace reproduces the per-iteration L exactly. The
 * trace may be shorter: with tol = 0 a fit still stops once L stops changing.
 * Returns the largest difference (mean scale) and the trace length in *len.
 */
static double one_shot_difference(const char *name, const instance *in, int T, const double *L,
                                  size_t *len)
{
    moe_fitter_t *f = make_fitter(name, T);
    moe_model_t *m = NULL;
    check_model(moe_model_clone(&m, in->start), "moe_model_clone", in->start);
    check_fitter(moe_fitter_fit(f, m, in->n, in->X, D, in->y, NULL), "moe_fitter_fit", f);
    double *trace = xcalloc((size_t)T + 1, sizeof(double));
    check_fitter(moe_fitter_get_trace(f, trace, (size_t)T + 1, len), "moe_fitter_get_trace", f);
    double worst = 0.0;
    for (size_t t = 0; t < *len && t <= (size_t)T; ++t)
        worst = fmax(worst, fabs(-trace[t] / (double)in->n - L[t]));
    free(trace);
    moe_model_free(m);
    moe_fitter_free(f);
    return worst;
}

/* ------------------------------------------------------------------------ */
/* The experiment                                                           */
/* ------------------------------------------------------------------------ */

/* mean[((alg * N_METRIC) + metric) * (T + 1) + t] */
typedef struct results {
    int T;
    double *mean;
} results;

static double *cell(const results *r, int alg, int metric, int t)
{
    return r->mean + ((size_t)alg * N_METRIC + (size_t)metric) * (size_t)(r->T + 1) + (size_t)t;
}

static void run_experiment(const config *cfg, results *res, diagnostics *dg)
{
    const int T = cfg->iterations;
    moe_fitter_t *fit[N_ALG];
    for (int a = 0; a < N_ALG; ++a)
        fit[a] = make_fitter(ALG_NAME[a], 1);
    double *L = xcalloc((size_t)T + 1, sizeof(double));
    double *eb = xcalloc((size_t)T + 1, sizeof(double));
    double *ew = xcalloc((size_t)T + 1, sizeof(double));

    for (int i = 0; i < cfg->instances; ++i) {
        instance in;
        instance_init(&in, cfg, i);
        double lam = lambda_max(in.X, in.n);
        dg->lam_min = i == 0 ? lam : fmin(dg->lam_min, lam);
        dg->lam_max = i == 0 ? lam : fmax(dg->lam_max, lam);
        for (int a = 0; a < N_ALG; ++a) {
            run_algorithm(fit[a], a, &in, lam, T, L, eb, ew, dg);
            for (int t = 0; t <= T; ++t) {
                *cell(res, a, M_GAP_STAR, t) += (L[t] - in.L_star) / cfg->instances;
                *cell(res, a, M_GAP_LAST, t) += (L[t] - L[T]) / cfg->instances;
                *cell(res, a, M_ERR_BETA, t) += eb[t] / cfg->instances;
                *cell(res, a, M_ERR_W, t) += ew[t] / cfg->instances;
            }
            if (i < 2) {   /* cheap: two instances are enough to catch hidden state */
                size_t len = 0;
                double diff = one_shot_difference(ALG_NAME[a], &in, T, L, &len);
                dg->one_shot_diff[a] = fmax(dg->one_shot_diff[a], diff);
                if (i == 0 || len < dg->one_shot_len[a])
                    dg->one_shot_len[a] = len;
            }
        }
        instance_free(&in);
    }
    free(L);
    free(eb);
    free(ew);
    for (int a = 0; a < N_ALG; ++a)
        moe_fitter_free(fit[a]);
}

/* ------------------------------------------------------------------------ */
/* Table, with the spec's section 5.3 reference numbers (symmetric model)   */
/* ------------------------------------------------------------------------ */

#define N_REF 6
static const int REF_T[N_REF] = {0, 1, 2, 5, 10, 50};
/* [alg][metric][k]; NAN where the spec gives no number. */
static const double REF[N_ALG][N_METRIC][N_REF] = {
    {{1.846, 0.101, -0.0059, -0.0101, -0.0101, -0.0101},
     {NAN, NAN, NAN, NAN, NAN, NAN},
     {0.500, 0.109, 0.0275, 0.0249, 0.0249, 0.0249},
     {0.500, 0.348, 0.159, 0.116, 0.118, 0.118}},
    {{1.846, 0.273, 0.056, 0.0026, -0.0078, -0.0100},
     {NAN, NAN, NAN, NAN, NAN, NAN},
     {NAN, NAN, NAN, NAN, NAN, NAN},
     {0.500, 0.408, 0.333, 0.203, 0.146, 0.116}},
    {{1.846, 0.306, 0.110, 0.064, 0.032, -0.0085},
     {NAN, NAN, NAN, NAN, NAN, NAN},
     {NAN, NAN, NAN, NAN, NAN, NAN},
     {0.500, 0.477, 0.453, 0.391, 0.311, 0.142}},
};

/* The reference holds only for the spec's set-up (rho = 0.5, T = 50). */
static double reference(const config *cfg, int alg, int metric, int t)
{
    if (cfg->rho != 0.5 || cfg->iterations != 50)
        return NAN;
    for (int k = 0; k < N_REF; ++k)
        if (REF_T[k] == t)
            return REF[alg][metric][k];
    return NAN;
}

static void print_value(double v)
{
    if (isnan(v))
        printf(" %9s", "-");
    else
        printf(" %9.4g", v);
}

static void print_row(const config *cfg, const results *res, int a, int t)
{
    printf("%4d", t);
    print_value(*cell(res, a, M_GAP_STAR, t));
    print_value(reference(cfg, a, M_GAP_STAR, t));
    print_value(*cell(res, a, M_GAP_LAST, t));
    print_value(*cell(res, a, M_ERR_BETA, t));
    print_value(reference(cfg, a, M_ERR_BETA, t));
    print_value(*cell(res, a, M_ERR_W, t));
    print_value(reference(cfg, a, M_ERR_W, t));
    printf("\n");
}

static void print_table(const config *cfg, const results *res)
{
    static const int show_t[] = {0, 1, 2, 5, 10, 20, 50};
    const int T = cfg->iterations;
    for (int a = 0; a < N_ALG; ++a) {
        printf("\n%s\n", ALG_LABEL[a]);
        printf("%4s %9s %9s %9s %9s %9s %9s %9s\n", "t", "L-L*", "ref", "L-L^T", "err_beta",
               "ref", "err_w", "ref");
        int last = -1;
        for (size_t k = 0; k < sizeof show_t / sizeof show_t[0] && show_t[k] <= T; ++k)
            print_row(cfg, res, a, last = show_t[k]);
        if (last != T)   /* always end on the last iterate */
            print_row(cfg, res, a, T);
    }
    printf("\nNote: 'ref' is the spec's section 5.3 reference run (rho = 0.5, T = 50), made with\n"
           "the SYMMETRIC model (beta_2 = -beta_1, 2d = 20 free parameters). libmoe fits the\n"
           "unconstrained two-expert model, 3d = 30 free parameters, so the finite-sample\n"
           "plateau of L - L* is about -30/(2n) = -0.015 instead of -d/n = -0.010, and GEM/GD\n"
           "move each expert with its own responsibility-weighted gradient, which is slower\n"
           "than the symmetric model's pooled beta step.\n");
    if (cfg->rho == 1.0)
        printf("Spec reference for rho = 1 (symmetric model): EM reaches L - L* = -0.0100 by\n"
               "t = 5; GD is still at -0.002 at t = 50 with err_w = 0.26.\n");
}

/* ------------------------------------------------------------------------ */
/* The check: EM <= GEM <= GD on the mean objective gap, t <= 20            */
/* ------------------------------------------------------------------------ */

static int check_ordering(const config *cfg, const results *res)
{
    int last = cfg->iterations < CHECK_LAST_T ? cfg->iterations : CHECK_LAST_T;
    int failures = 0;
    printf("\nOrdering check on mean L - L* (slack %g):\n", TIE_SLACK);
    for (int t = 0; t <= last; ++t) {
        double em = *cell(res, ALG_EM, M_GAP_STAR, t);
        double gem = *cell(res, ALG_GEM, M_GAP_STAR, t);
        double gd = *cell(res, ALG_GD, M_GAP_STAR, t);
        int ok1 = em <= gem + TIE_SLACK;
        int ok2 = gem <= gd + TIE_SLACK;
        failures += !ok1 + !ok2;
        printf("  t=%2d  EM <= GEM: %s (%.6g vs %.6g)   GEM <= GD: %s (%.6g vs %.6g)\n", t,
               ok1 ? "PASS" : "FAIL", em, gem, ok2 ? "PASS" : "FAIL", gem, gd);
    }
    printf("Ordering check: %s (%d of %d comparisons failed)\n", failures ? "FAIL" : "PASS",
           failures, 2 * (last + 1));
    return failures == 0;
}

static void print_diagnostics(const diagnostics *dg, int T)
{
    printf("\nLibrary diagnostics (all instances):\n");
    printf("  lambda_max(E_n[xx']) by own power iteration: %.4f .. %.4f\n", dg->lam_min,
           dg->lam_max);
    for (int a = 0; a < N_ALG; ++a) {
        printf("  %-3s: monotonicity_violations %zu (worst rel. decrease %.3g); own count of"
               " L increases %zu (max %.3g)\n",
               ALG_LABEL[a], dg->lib_violations[a], dg->lib_worst[a], dg->increases[a],
               dg->max_increase[a]);
        if (a != ALG_EM)
            printf("       reported step vs 1/lam: max rel. dev. %.2g", dg->step_dev[a]);
        if (a == ALG_GEM)
            printf("; gate_step vs 4/lam: max rel. dev. %.2g", dg->gate_step_dev[a]);
        if (a != ALG_EM)
            printf("\n");
        printf("       separation events %zu, ridge fallbacks %zu, gate line-search failures"
               " %zu\n",
               dg->separation[a], dg->ridge[a], dg->line_fail[a]);
        printf("       aligned expert order changed: at t=1 (canonical reordering) %zu, at"
               " t>=2 (canonical order flipped mid-run) %zu\n",
               dg->swaps_first[a], dg->swaps_later[a]);
        if (a == ALG_EM)
            printf("       fits whose gate Newton took no step (gate frozen by gate_tol): %zu,"
                   " first at t=%d\n",
                   dg->gate_idle[a], dg->first_idle_t);
        printf("       max |trace[0] - previous L| %.3g; one fit with max_iter=T vs T fits of"
               " one: max |dL| %.3g (shortest trace %zu of %d)\n",
               dg->trace_start_diff[a], dg->one_shot_diff[a], dg->one_shot_len[a], T + 1);
    }
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                      */
/* ------------------------------------------------------------------------ */

static int write_csv(const char *path, const results *res)
{
    FILE *fp = fopen(path, "w");
    if (!fp) {
        fprintf(stderr, "smoline: cannot write %s\n", path);
        return 0;
    }
    fprintf(fp, "t");
    for (int a = 0; a < N_ALG; ++a)
        for (int m = 0; m < N_METRIC; ++m)
            fprintf(fp, ",%s_%s", ALG_NAME[a], METRIC_NAME[m]);
    fprintf(fp, "\n");
    for (int t = 0; t <= res->T; ++t) {
        fprintf(fp, "%d", t);
        for (int a = 0; a < N_ALG; ++a)
            for (int m = 0; m < N_METRIC; ++m)
                fprintf(fp, ",%.10g", *cell(res, a, m, t));
        fprintf(fp, "\n");
    }
    return fclose(fp) == 0;
}

/* ------------------------------------------------------------------------ */
/* SVG: four panels like Figs. 1a, 1b, 2a, 2b                               */
/* ------------------------------------------------------------------------ */

static const char *const COLOUR[N_ALG] = {"#1f77b4", "#d62728", "#2ca02c"};
static const char *const DASH[N_ALG] = {"none", "7,4", "2,3"};

typedef struct panel {
    const char *title;    /* SVG text, may hold entities */
    int metric;
    int log_y;
} panel;

/* Plot rectangle and data range of one panel. */
typedef struct frame {
    double left, top, width, height;
    double T;
    double lo, hi;   /* y range; log10 units for log panels */
    double step;     /* linear panels: the tick spacing the range was rounded to */
    int log_y;
} frame;

static double frame_x(const frame *f, double t) { return f->left + f->width * t / f->T; }

static double frame_y(const frame *f, double v)
{
    double u = f->log_y ? log10(v) : v;
    return f->top + f->height * (1.0 - (u - f->lo) / (f->hi - f->lo));
}

/* A "nice" tick spacing (1, 2 or 5 times a power of ten) giving about `want` ticks. */
static double nice_step(double span, int want)
{
    double raw = span / want;
    double p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
}

/* Data range of a metric over all algorithms; log panels skip round-off values. */
static void data_range(const results *res, const panel *p, frame *f)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int a = 0; a < N_ALG; ++a)
        for (int t = 0; t <= res->T; ++t) {
            double v = *cell(res, a, p->metric, t);
            if (p->log_y && !(v > LOG_FLOOR))
                continue;
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    if (!(lo <= hi)) {   /* nothing to draw */
        lo = p->log_y ? 1e-3 : 0.0;
        hi = 1.0;
    }
    if (p->log_y) {
        /* the slack keeps 1 + round-off from opening a whole extra decade */
        f->lo = floor(log10(lo) + 1e-9);
        f->hi = ceil(log10(hi) - 1e-9);
    } else {
        lo = fmin(lo, 0.0);   /* keep zero in view: (a) goes negative */
        f->step = nice_step(hi - lo, 6);
        f->lo = floor(lo / f->step) * f->step;
        f->hi = ceil(hi / f->step) * f->step;
    }
    if (f->hi <= f->lo)
        f->hi = f->lo + 1.0;
}

static void svg_y_ticks(FILE *fp, const frame *f)
{
    double right = f->left + f->width;
    if (f->log_y) {
        int decades = (int)(f->hi - f->lo);
        int every = decades > 8 ? 2 : 1;
        for (int e = (int)f->lo; e <= (int)f->hi; e += every) {
            double y = frame_y(f, pow(10.0, e));
            fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n",
                    f->left, y, right, y);
            fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='black'/>\n",
                    f->left - 5, y, f->left, y);
            fprintf(fp, "<text x='%.1f' y='%.1f' text-anchor='end' font-size='11'>10"
                        "<tspan dy='-5' font-size='8'>%d</tspan></text>\n",
                    f->left - 8, y + 4, e);
            for (int k = 2; k <= 9 && decades <= 3 && e < (int)f->hi; ++k) {
                double v = (double)k * pow(10.0, e), yk = frame_y(f, v);
                fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='black'/>\n",
                        f->left - 3, yk, f->left, yk);
                if (k == 2 || k == 5)
                    fprintf(fp, "<text x='%.1f' y='%.1f' text-anchor='end' font-size='10'>%g"
                                "</text>\n",
                            f->left - 6, yk + 4, v);
            }
        }
        return;
    }
    double step = f->step;
    for (double v = f->lo; v <= f->hi + 0.5 * step; v += step) {
        double shown = fabs(v) < 1e-9 * step ? 0.0 : v;
        double y = frame_y(f, shown);
        fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s'%s/>\n", f->left,
                y, right, y, shown == 0.0 ? "#888" : "#ddd",
                shown == 0.0 ? " stroke-dasharray='4,3'" : "");
        fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='black'/>\n",
                f->left - 5, y, f->left, y);
        fprintf(fp, "<text x='%.1f' y='%.1f' text-anchor='end' font-size='11'>%g</text>\n",
                f->left - 8, y + 4, shown);
    }
}

static void svg_x_ticks(FILE *fp, const frame *f)
{
    double bottom = f->top + f->height;
    double step = nice_step(f->T, 5);
    for (double t = 0.0; t <= f->T + 1e-9; t += step) {
        double x = frame_x(f, t);
        fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", x,
                f->top, x, bottom);
        fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='black'/>\n", x,
                bottom, x, bottom + 5);
        fprintf(fp, "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='11'>%g</text>\n",
                x, bottom + 18, t);
    }
}

/* One algorithm's curve; the path breaks where a log panel has nothing to show. */
static void svg_curve(FILE *fp, const frame *f, const results *res, int alg, int metric)
{
    fprintf(fp, "<path fill='none' stroke='%s' stroke-width='2' stroke-dasharray='%s' d='",
            COLOUR[alg], DASH[alg]);
    int pen_down = 0;
    for (int t = 0; t <= res->T; ++t) {
        double v = *cell(res, alg, metric, t);
        if (f->log_y && !(v > LOG_FLOOR)) {
            pen_down = 0;
            continue;
        }
        fprintf(fp, "%c%.1f,%.1f ", pen_down ? 'L' : 'M', frame_x(f, t), frame_y(f, v));
        pen_down = 1;
    }
    fprintf(fp, "'/>\n");
}

static void svg_legend(FILE *fp, const frame *f)
{
    double x = f->left + f->width - 80, y = f->top + 10;
    fprintf(fp, "<rect x='%.1f' y='%.1f' width='72' height='58' fill='white' stroke='#aaa'/>\n",
            x, y);
    for (int a = 0; a < N_ALG; ++a) {
        double yy = y + 14 + 17 * a;
        fprintf(fp, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' "
                    "stroke-width='2' stroke-dasharray='%s'/>\n",
                x + 6, yy, x + 32, yy, COLOUR[a], DASH[a]);
        fprintf(fp, "<text x='%.1f' y='%.1f' font-size='11'>%s</text>\n", x + 38, yy + 4,
                ALG_LABEL[a]);
    }
}

static void svg_panel(FILE *fp, const results *res, const panel *p, double x0, double y0,
                      double w, double h)
{
    frame f = {x0 + 70, y0 + 35, w - 90, h - 85, (double)res->T, 0, 0, 0, p->log_y};
    data_range(res, p, &f);
    svg_y_ticks(fp, &f);
    svg_x_ticks(fp, &f);
    for (int a = 0; a < N_ALG; ++a)
        svg_curve(fp, &f, res, a, p->metric);
    fprintf(fp, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' "
                "stroke='black'/>\n",
            f.left, f.top, f.width, f.height);
    svg_legend(fp, &f);
    fprintf(fp, "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='13' "
                "font-weight='bold'>%s</text>\n",
            f.left + f.width / 2, y0 + 22, p->title);
    fprintf(fp, "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='12'>iteration t"
                "</text>\n",
            f.left + f.width / 2, f.top + f.height + 36);
    fprintf(fp, "<text transform='translate(%.1f,%.1f) rotate(-90)' text-anchor='middle' "
                "font-size='12'>%s</text>\n",
            x0 + 16, f.top + f.height / 2, p->log_y ? "mean (log scale)" : "mean");
}

static int write_svg(const char *path, const config *cfg, const results *res)
{
    static const panel panels[4] = {
        {"(1a) L(&#952;&#7511;) &#8722; L(&#952;*)", M_GAP_STAR, 0},
        {"(1b) L(&#952;&#7511;) &#8722; L(&#952;&#7488;)", M_GAP_LAST, 1},
        {"(2a) &#8214;&#946;&#7511; &#8722; &#946;*&#8214; / &#8214;&#946;*&#8214;", M_ERR_BETA,
         1},
        {"(2b) &#8214;w&#7511; &#8722; w*&#8214; / &#8214;w*&#8214;", M_ERR_W, 1},
    };
    const double pw = 500, ph = 360, head = 40;
    FILE *fp = fopen(path, "w");
    if (!fp) {
        fprintf(stderr, "smoline: cannot write %s\n", path);
        return 0;
    }
    fprintf(fp, "<?xml version='1.0' encoding='UTF-8'?>\n"
                "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
                "font-family='sans-serif'>\n"
                "<rect width='100%%' height='100%%' fill='white'/>\n",
            2 * pw, 2 * ph + head);
    fprintf(fp, "<text x='%.0f' y='24' text-anchor='middle' font-size='15'>SMoLinE, "
                "unconstrained 2-expert libmoe model: n=%d, d=%d, rho=%g, %d instances, "
                "T=%d</text>\n",
            pw, N_SAMPLES, D, cfg->rho, cfg->instances, cfg->iterations);
    for (int k = 0; k < 4; ++k)
        svg_panel(fp, res, &panels[k], pw * (k % 2), head + ph * (k / 2), pw, ph);
    fprintf(fp, "</svg>\n");
    return fclose(fp) == 0;
}

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static void usage(FILE *fp)
{
    fprintf(fp, "usage: smoline [--rho R] [--iterations T] [--instances M] [--quick]\n"
                "               [--seed S] [--csv PATH] [--svg PATH]\n"
                "defaults: rho 0.5, T 50, 50 instances (--quick: 5), seed 1,\n"
                "          smoline.csv and smoline.svg in the current directory\n");
}

static double parse_number(const char *opt, const char *text, double lo, double hi)
{
    char *end = NULL;
    double v = text ? strtod(text, &end) : NAN;
    if (!text || end == text || *end != '\0' || !(v >= lo && v <= hi)) {
        fprintf(stderr, "smoline: %s needs a number in [%g, %g]\n", opt, lo, hi);
        usage(stderr);
        exit(2);
    }
    return v;
}

static config parse_args(int argc, char **argv)
{
    config cfg = {0.5, 50, 50, 1, "smoline.csv", "smoline.svg"};
    for (int i = 1; i < argc; ++i) {
        const char *opt = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(opt, "--rho")) {
            cfg.rho = parse_number(opt, val, 0.0, 100.0);
            ++i;
        } else if (!strcmp(opt, "--iterations")) {
            cfg.iterations = (int)parse_number(opt, val, 1, 100000);
            ++i;
        } else if (!strcmp(opt, "--instances")) {
            cfg.instances = (int)parse_number(opt, val, 1, 1000000);
            ++i;
        } else if (!strcmp(opt, "--seed")) {
            cfg.seed = (uint64_t)parse_number(opt, val, 0, 9007199254740991.0);
            ++i;
        } else if (!strcmp(opt, "--quick")) {
            cfg.instances = 5;
        } else if (!strcmp(opt, "--csv") && val) {
            cfg.csv = val;
            ++i;
        } else if (!strcmp(opt, "--svg") && val) {
            cfg.svg = val;
            ++i;
        } else if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "smoline: unknown or incomplete option '%s'\n", opt);
            usage(stderr);
            exit(2);
        }
    }
    return cfg;
}

static double wall_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    config cfg = parse_args(argc, argv);
    double t0 = wall_seconds();
    printf("SMoLinE: EM vs gradient EM vs GD (libmoe %s, unconstrained 2-expert Gaussian MoE)\n",
           moe_version_string());
    printf("n=%d d=%d ||beta*||=||w*||=%g rho=%g T=%d instances=%d seed=%llu\n", N_SAMPLES, D,
           TRUE_NORM, cfg.rho, cfg.iterations, cfg.instances, (unsigned long long)cfg.seed);

    results res = {cfg.iterations, NULL};
    res.mean = xcalloc((size_t)N_ALG * N_METRIC * ((size_t)cfg.iterations + 1), sizeof(double));
    diagnostics dg;
    memset(&dg, 0, sizeof dg);
    run_experiment(&cfg, &res, &dg);

    print_table(&cfg, &res);
    int ordered = check_ordering(&cfg, &res);
    print_diagnostics(&dg, cfg.iterations);
    int csv_ok = write_csv(cfg.csv, &res);
    int svg_ok = write_svg(cfg.svg, &cfg, &res);
    int files_ok = csv_ok && svg_ok;
    if (files_ok)
        printf("\nWrote %s and %s\n", cfg.csv, cfg.svg);
    printf("Wall time: %.2f s\n", wall_seconds() - t0);
    free(res.mean);
    if (!files_ok)
        return 2;
    return ordered ? 0 : 1;
}
