/*
 * moe_mpi_fit with an "em" fitter, the exact em of every rank's rows, under mpirun
 * (tests/CMakeLists.txt: 1, 2, 3 and 4 ranks):
 *   exact  rows split in blocks sorted by a covariate (the split a one-shot reduction gets
 *          wrong): generated two-expert rows, two-regime rows and mcycle, with weights on
 *          one of them. Every rank returns the same model, bit for bit; its log-likelihood
 *          is rank 0's one-process em fit of all rows (same seed) within 1e-6 relative, and
 *          its standard errors (moe_mpi_vcov) are that fit's (moe_model_vcov) within 1e-3
 *          (the experts' alone when the gate is separated, as mcycle's is);
 *          the report's bytes a pass do not depend on the rows.
 *   failure  a NaN on the last rank, a row whose likelihood vanishes in the first pass, a
 *          rank without rows: every rank returns the same status and message (naming the
 *          row among all ranks' rows), no rank hangs, no model changes.
 * Prints "N passed, N failed" on rank 0; exit status 0 when everything passed.
 */
#include <moe/moe.h>
#include <moe/mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/mcycle.h"

static int passed = 0, failed = 0, rank = 0, size = 1;

static void expect(int ok, const char *format, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void expect(int ok, const char *format, ...)
{
    if (ok) {
        ++passed;
        return;
    }
    ++failed;
    va_list arguments;
    va_start(arguments, format);
    fprintf(stderr, "rank %d: FAIL: ", rank);
    vfprintf(stderr, format, arguments);
    fputc('\n', stderr);
    va_end(arguments);
}

#define EXPECT_OK(call) expect_ok((call), #call)
static void expect_ok(moe_status status, const char *call)
{
    expect(status == MOE_OK, "%s returned %d: %s", call, (int)status,
           strncmp(call, "moe_mpi_", 8) == 0 ? moe_mpi_last_error() : moe_last_error());
}

typedef struct rows {
    size_t n, d;
    double *X, *y, *weights; /* weights may be NULL */
} rows;

static moe_model_t *model_of(size_t K, size_t d)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    EXPECT_OK(moe_model_create(&model, &spec));
    return model;
}

static moe_fitter_t *em_fitter(void)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_OK(moe_fitter_create(&fitter, "em"));
    EXPECT_OK(moe_fitter_set_int(fitter, MOE_OPT_SEED, 11));
    /* Both fits stop near the optimum, so that their standard errors compare to 1e-3
       (at the default 1e-8 the two stopping points alone move a gate's by some 1e-3). */
    EXPECT_OK(moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-11));
    return fitter;
}

/* Rank r's block: uneven (the first rank takes a third more than its share). */
static void block(size_t n, size_t *first, size_t *count)
{
    size_t base = n / (size_t)size, extra = size > 1 ? base / 3 : 0;
    *first = rank == 0 ? 0 : (size_t)rank * base + extra;
    size_t end = rank == size - 1 ? n : (size_t)(rank + 1) * base + extra;
    *count = end - *first;
}

static int same_on_every_rank(const double *values, size_t count)
{
    double *roots = malloc(count * sizeof(double));
    memcpy(roots, values, count * sizeof(double));
    MPI_Bcast(roots, (int)count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int same = memcmp(roots, values, count * sizeof(double)) == 0, all = 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    free(roots);
    return all;
}

/* The exact em of the ranks' blocks against rank 0's one-process fit of all rows. */
static void check_exact(const rows *all, size_t K, const char *name)
{
    size_t first = 0, count = 0, d = all->d;
    block(all->n, &first, &count);
    moe_model_t *model = model_of(K, d);
    moe_fitter_t *fitter = em_fitter();
    const double *w = all->weights != NULL ? all->weights + first : NULL;
    EXPECT_OK(moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, count, all->X + first * d, d,
                          all->y + first, w, 0));
    moe_mpi_report report = MOE_MPI_REPORT_INIT;
    EXPECT_OK(moe_mpi_get_report(&report));
    size_t P = moe_model_n_free_params(model);
    double *vcov = calloc(P * P, sizeof(double)), *expected = calloc(P * P, sizeof(double));
    EXPECT_OK(moe_mpi_vcov(MPI_COMM_WORLD, model, count, all->X + first * d, d,
                           all->y + first, w, 0.0, 0.0, vcov, P * P));
    double gate[64];
    EXPECT_OK(moe_model_get_gate(model, gate, K * (d + 1)));
    expect(same_on_every_rank(gate, K * (d + 1)), "%s: every rank holds the same gate", name);
    double reference[2] = {0.0, 0.0}; /* log-likelihood, largest standard error gap */
    if (rank == 0) {
        moe_model_t *whole = model_of(K, d);
        moe_fitter_t *one = em_fitter();
        EXPECT_OK(moe_fitter_fit(one, whole, all->n, all->X, d, all->y, all->weights));
        moe_fit_report fit = MOE_FIT_REPORT_INIT;
        EXPECT_OK(moe_fitter_get_report(one, &fit));
        reference[0] = fit.loglik;
        EXPECT_OK(moe_model_vcov(whole, all->n, all->X, d, all->y, all->weights, expected,
                                 P * P));
        /* A separated gate's standard errors measure how far it ran, not a spread: its
           coefficients come first in the information and are left out then. */
        size_t from = (fit.warnings & MOE_WARNING_GATE_SEPARATED) ? (K - 1) * (d + 1) : 0;
        for (size_t a = from; a < P; ++a) {
            double se = sqrt(vcov[a * P + a]), truth = sqrt(expected[a * P + a]);
            reference[1] = fmax(reference[1], fabs(se - truth) / truth);
            if (getenv("MOE_TEST_VERBOSE") != NULL)
                printf("  se %zu: %.6g %.6g\n", a, se, truth);
        }
        printf("%s on %d ranks: log-likelihood %.10f (one process %.10f), %zu iterations, "
               "%zu passes, %.0f bytes a pass, standard errors within %.2g\n",
               name, size, report.loglik, fit.loglik, report.iterations, report.passes,
               report.bytes / (double)report.passes, reference[1]);
        moe_fitter_free(one);
        moe_model_free(whole);
    }
    MPI_Bcast(reference, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    expect(fabs(report.loglik - reference[0]) <= 1e-6 * fabs(reference[0]),
           "%s: log-likelihood %.10g, one process %.10g", name, report.loglik, reference[0]);
    expect(reference[1] <= 1e-3, "%s: standard errors differ by %.3g relative", name,
           reference[1]);
    expect(report.method == MOE_MPI_METHOD_EM && report.passes > report.iterations,
           "%s: the report says exact em (method %d, %zu passes, %zu iterations)", name,
           report.method, report.passes, report.iterations);
    free(vcov);
    free(expected);
    moe_fitter_free(fitter);
    moe_model_free(model);
}

/* Two regimes along x, sorted by x: each rank holds one region. */
static void regimes(rows *r, size_t n, int weighted)
{
    moe_rng rng;
    moe_rng_seed(&rng, 21, 0);
    r->n = n;
    r->d = 1;
    r->X = malloc(n * sizeof(double));
    r->y = malloc(n * sizeof(double));
    r->weights = weighted ? malloc(n * sizeof(double)) : NULL;
    for (size_t i = 0; i < n; ++i) {
        double x = 60.0 * ((double)i + moe_rng_uniform(&rng)) / (double)n;
        double e = moe_rng_normal(&rng);
        int low = moe_rng_uniform(&rng) < 1.0 / (1.0 + exp((x - 30.0) / 4.0));
        r->X[i] = x;
        r->y[i] = low ? 2.0 + 0.1 * x + e : 40.0 - x + 4.0 * e;
        if (weighted)
            r->weights[i] = 0.5 + moe_rng_uniform(&rng);
    }
}

static void free_rows(rows *r)
{
    free(r->X);
    free(r->y);
    free(r->weights);
}

static void exact_case(void)
{
    rows r;
    regimes(&r, 3000, 1);
    check_exact(&r, 2, "two regimes, weighted");
    free_rows(&r);
    regimes(&r, 30000, 0); /* more rows than the start's sample */
    check_exact(&r, 2, "two regimes, 30000 rows");
    free_rows(&r);
    rows cycle = {MCYCLE_ROWS, 1, malloc(sizeof mcycle_times), malloc(sizeof mcycle_accel),
                  NULL};
    memcpy(cycle.X, mcycle_times, sizeof mcycle_times);
    memcpy(cycle.y, mcycle_accel, sizeof mcycle_accel);
    check_exact(&cycle, 3, "mcycle sorted by time");
    free_rows(&cycle);
}

/* Every rank fails alike, with a message holding `fragment`, and keeps its model. */
static void expect_failure(moe_status status, moe_status expected, const char *fragment,
                           const moe_model_t *model, const char *what)
{
    expect(status == expected, "%s: status %d, expected %d (%s)", what, (int)status,
           (int)expected, moe_mpi_last_error());
    char mine[512], roots[512];
    snprintf(mine, sizeof mine, "%s", moe_mpi_last_error());
    memcpy(roots, mine, sizeof roots);
    MPI_Bcast(roots, (int)sizeof roots, MPI_CHAR, 0, MPI_COMM_WORLD);
    expect(strcmp(mine, roots) == 0, "%s: rank 0 says '%s', this rank '%s'", what, roots, mine);
    expect(strstr(mine, fragment) != NULL, "%s: '%s' lacks '%s'", what, mine, fragment);
    double gate[4];
    EXPECT_OK(moe_model_get_gate(model, gate, 4));
    expect(gate[0] == 0.0 && gate[1] == 0.0, "%s: the model is unchanged", what);
    if (rank == 0)
        printf("%s: %s\n", what, mine);
}

static void failure_case(void)
{
    rows r;
    regimes(&r, 3000, 0);
    size_t first = 0, count = 0;
    block(r.n, &first, &count);
    size_t last_first = r.n - r.n / (size_t)size + (size > 1 ? 0 : 0);
    (void)last_first;
    char fragment[64];
    /* a NaN in the last rank's block, 5 rows before the end */
    r.X[r.n - 5] = NAN;
    snprintf(fragment, sizeof fragment, "row %zu", r.n - 5);
    moe_model_t *model = model_of(2, 1);
    moe_fitter_t *fitter = em_fitter();
    moe_status status = moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, count, r.X + first,
                                    1, r.y + first, NULL, 0);
    expect_failure(status, MOE_ERR_NON_FINITE, fragment, model, "a NaN");
    r.X[r.n - 5] = 59.9;
    /* a response no expert of the start explains, in the first rank's block */
    r.y[7] = 1e200;
    status = moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, count, r.X + first, 1, r.y + first,
                         NULL, 200); /* a sample without row 7 (support rows from seed 11) */
    expect(status != MOE_OK, "an unexplained response fails the fit (%s)",
           moe_mpi_last_error());
    expect_failure(status, status, "row", model, "an unexplained response");
    r.y[7] = 2.0;
    /* a rank without rows */
    status = moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, rank == size - 1 ? 0 : count,
                         r.X + first, 1, r.y + first, NULL, 0);
    if (size > 1)
        expect_failure(status, MOE_ERR_EMPTY_INPUT, "holds no rows", model, "an empty rank");
    moe_fitter_free(fitter);
    moe_model_free(model);
    free_rows(&r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "exact";
    if (strcmp(mode, "failure") == 0)
        failure_case();
    else
        exact_case();
    int sums[2] = {passed, failed}, totals[2];
    MPI_Reduce(sums, totals, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", totals[0], totals[1]);
    int all_failed = 0;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_failed == 0 ? 0 : 1;
}
