/*
 * libmoe_mpi under mpirun (tests/CMakeLists.txt runs it with 1, 2 and 4 ranks):
 *   fit   every rank fits its block of one generated data set; every rank returns the same
 *         model, bit for bit; it recovers the truth; and rank 0 replays the collective in one
 *         process (the same local fits, the same support rows, moe_fitter_aggregate) and
 *         gets the same model, bit for bit.
 *   bad   the last rank's rows hold a NaN: every rank returns the same error status, names
 *         that rank, and nobody hangs.
 *   features, experts, support, root, null (mismatch: all five in turn)
 *         the last rank alone calls with another d, another K, another support, another
 *         root, or a NULL fitter: every rank returns the same error status and the same
 *         message, which names what differs (the rank, for the NULL fitter); nobody hangs
 *         or aborts.
 * Prints "N passed, N failed" on rank 0; exit status 0 when everything passed.
 */
#include <moe/moe.h>
#include <moe/mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 24000, D = 3, P = 4 };

static int passed = 0, failed = 0;

static void expect(int rank, int ok, const char *what)
{
    if (ok)
        ++passed;
    else {
        ++failed;
        fprintf(stderr, "rank %d: FAIL: %s\n", rank, what);
    }
}

/* The whole data set, the same on every rank (x ~ N(0, I), two experts, sd 0.5). */
static void generate(double *X, double *y)
{
    moe_rng rng;
    moe_rng_seed(&rng, 99, 0);
    for (size_t i = 0; i < N; ++i) {
        double *x = X + i * D;
        for (int j = 0; j < D; ++j)
            x[j] = moe_rng_normal(&rng);
        int first = moe_rng_uniform(&rng) < 1.0 / (1.0 + exp(-(2.0 * x[0] - x[1])));
        y[i] = (first ? 1.0 + 2.0 * x[2] : -1.0 + x[0] - x[2]) + 0.5 * moe_rng_normal(&rng);
    }
}

static moe_model_t *gaussian_of(size_t experts, size_t features)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = experts;
    spec.n_features = features;
    moe_model_t *model = NULL;
    moe_model_create(&model, &spec);
    return model;
}

static moe_model_t *gaussian(void)
{
    return gaussian_of(2, D);
}

static moe_fitter_t *ot_fitter(void)
{
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "ot");
    moe_fitter_set_option(fitter, "seed", "7");
    moe_fitter_set_option(fitter, "n_init", "2");
    return fitter;
}

/* Rank r's block of rows (uneven on purpose: the last rank has fewer). */
static void block(int rank, int size, size_t *first, size_t *count)
{
    size_t base = N / (size_t)size;
    *first = (size_t)rank * base;
    *count = rank == size - 1 ? N - *first - (size > 1 ? base / 3 : 0) : base;
}

static size_t model_bytes(const moe_model_t *model, unsigned char *buffer)
{
    size_t written = 0;
    moe_model_save_buffer(model, buffer, 4096, &written);
    return written;
}

/* Every rank returns `expected`, with rank 0's message, which holds `fragment`. */
static void expect_same_failure(int rank, moe_status status, moe_status expected,
                                const char *fragment)
{
    expect(rank, status == expected, "every rank returns the expected error status");
    int codes[2] = {(int)status, -(int)status}, extremes[2];
    MPI_Allreduce(codes, extremes, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    expect(rank, extremes[0] == -extremes[1], "every rank returns the same status");
    char mine[512], roots[512];
    snprintf(mine, sizeof mine, "%s", moe_mpi_last_error());
    memcpy(roots, mine, sizeof roots);
    MPI_Bcast(roots, (int)sizeof roots, MPI_CHAR, 0, MPI_COMM_WORLD);
    expect(rank, strcmp(mine, roots) == 0, "every rank returns rank 0's message");
    expect(rank, strstr(mine, fragment) != NULL, "the message names what is wrong");
    if (rank == 0)
        printf("message: %s\n", mine);
}

/* The last rank alone calls moe_mpi_fit otherwise (`mode`); the call must fail alike. */
static void mismatch(const char *mode, int rank, int size, const double *X, const double *y)
{
    int odd = rank == size - 1;
    size_t first = 0, count = 0;
    block(rank, size, &first, &count);
    size_t experts = odd && strcmp(mode, "experts") == 0 ? 3 : 2;
    /* The odd rank has the larger d: its support rows would overrun root's buffer. */
    size_t features = !odd && strcmp(mode, "features") == 0 ? D - 1 : D;
    size_t support = odd && strcmp(mode, "support") == 0 ? 100 : 0;
    int root = odd && strcmp(mode, "root") == 0 ? 1 : 0;
    moe_fitter_t *fitter = ot_fitter();
    moe_model_t *model = gaussian_of(experts, features);
    moe_fitter_t *given = odd && strcmp(mode, "null") == 0 ? NULL : fitter;
    moe_status status = moe_mpi_fit(MPI_COMM_WORLD, root, given, model, count, X + first * D, D,
                                     y + first, NULL, support);
    char fragment[64];
    if (strcmp(mode, "null") == 0)
        snprintf(fragment, sizeof fragment, "rank %d: fitter or model is NULL", size - 1);
    else
        snprintf(fragment, sizeof fragment, "differ in %s",
                 strcmp(mode, "features") == 0  ? "the number of features d (2 and 3)"
                 : strcmp(mode, "experts") == 0 ? "the number of experts K (2 and 3)"
                 : strcmp(mode, "support") == 0 ? "support (0 and 100)"
                                                : "root (0 and 1)");
    expect_same_failure(rank, status,
                        strcmp(mode, "null") == 0 ? MOE_ERR_NULL_POINTER
                                                  : MOE_ERR_INVALID_ARGUMENT,
                        fragment);
    moe_model_free(model);
    moe_fitter_free(fitter);
}

/* The "fit" and "bad" cases. */
static void fit_case(int rank, int size, const double *X, const double *y, int bad)
{
    size_t first = 0, count = 0;
    block(rank, size, &first, &count);
    double *local_y = malloc(count * sizeof(double));
    memcpy(local_y, y + first, count * sizeof(double));
    if (bad && rank == size - 1)
        local_y[count / 2] = NAN;
    moe_fitter_t *fitter = ot_fitter();
    moe_model_t *model = gaussian();
    moe_status status =
        moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, count, X + first * D, D, local_y, NULL, 0);
    if (bad) {
        /* a NaN on the last rank: MOE_ERR_NON_FINITE everywhere, naming that rank */
        char expected[32];
        snprintf(expected, sizeof expected, "rank %d: ", size - 1);
        expect_same_failure(rank, status, MOE_ERR_NON_FINITE, expected);
    } else {
        expect(rank, status == MOE_OK, moe_mpi_last_error());
        unsigned char mine[4096], roots[4096];
        size_t length = model_bytes(model, mine);
        memcpy(roots, mine, length);
        unsigned long long root_length = length;
        MPI_Bcast(&root_length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        MPI_Bcast(roots, (int)root_length, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
        expect(rank, root_length == length && memcmp(roots, mine, length) == 0,
               "every rank holds root's model, bit for bit");
        double experts[2 * P];
        moe_model_get_experts(model, experts, 2 * P);
        static const double truth[2 * P] = {-1, 1, 0, -1, 1, 0, 0, 2};
        double error = 0.0;
        for (int i = 0; i < 2 * P; ++i)
            error += fabs(experts[i] - truth[i]);
        expect(rank, error < 0.15, "the experts are the truth's");
        if (rank == 0 && size > 1) {
            /* The collective replayed in one process. */
            moe_model_t **locals = calloc((size_t)size, sizeof *locals);
            size_t *rows = malloc((size_t)size * sizeof(size_t)), *counts = malloc((size_t)size * sizeof(size_t));
            double *shares = malloc((size_t)size * sizeof(double));
            size_t total = 0;
            for (int r = 0; r < size; ++r) {
                size_t f, c;
                block(r, size, &f, &c);
                rows[r] = c;
                total += c;
            }
            moe_mpi_support_counts((size_t)size, rows, total / (size_t)size, counts);
            size_t S = 0;
            for (int r = 0; r < size; ++r)
                S += counts[r];
            double *support_X = malloc(S * D * sizeof(double)), *support_y = malloc(S * sizeof(double));
            size_t at = 0;
            for (int r = 0; r < size; ++r) {
                size_t f, c;
                block(r, size, &f, &c);
                moe_fitter_t *em = NULL;
                moe_fitter_create(&em, "em");
                moe_fitter_set_option(em, "seed", "7");
                moe_fitter_set_option(em, "n_init", "2");
                locals[r] = gaussian();
                moe_fitter_fit(em, locals[r], c, X + f * D, D, y + f, NULL);
                moe_fitter_free(em);
                shares[r] = (double)c / (double)total;
                size_t *indices = malloc((counts[r] > 0 ? counts[r] : 1) * sizeof(size_t));
                moe_mpi_support_rows(7, r, c, counts[r], indices);
                for (size_t i = 0; i < counts[r]; ++i, ++at) {
                    memcpy(support_X + at * D, X + (f + indices[i]) * D, D * sizeof(double));
                    support_y[at] = y[f + indices[i]];
                }
                free(indices);
            }
            moe_fitter_t *reducer = ot_fitter();
            moe_model_t *replayed = gaussian();
            moe_status replay = moe_fitter_aggregate(reducer, replayed, (size_t)size,
                                                     (const moe_model_t *const *)locals, shares, S,
                                                     support_X, D, support_y, NULL);
            unsigned char bytes[4096];
            size_t replay_length = model_bytes(replayed, bytes);
            expect(rank, replay == MOE_OK && replay_length == length &&
                             memcmp(bytes, mine, length) == 0,
                   "the collective equals the reduction in one process");
            for (int r = 0; r < size; ++r)
                moe_model_free(locals[r]);
            free(locals);
            free(rows);
            free(counts);
            free(shares);
            free(support_X);
            free(support_y);
            moe_model_free(replayed);
            moe_fitter_free(reducer);
        }
    }
    free(local_y);
    moe_model_free(model);
    moe_fitter_free(fitter);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "fit";
    double *X = malloc(N * D * sizeof(double)), *y = malloc(N * sizeof(double));
    generate(X, y);
    static const char *const mismatches[] = {"features", "experts", "support", "root", "null"};
    if (strcmp(mode, "fit") == 0 || strcmp(mode, "bad") == 0)
        fit_case(rank, size, X, y, strcmp(mode, "bad") == 0);
    else if (strcmp(mode, "mismatch") == 0)
        for (size_t m = 0; m < sizeof mismatches / sizeof mismatches[0]; ++m)
            mismatch(mismatches[m], rank, size, X, y);
    else
        mismatch(mode, rank, size, X, y);
    int sums[2] = {passed, failed}, totals[2];
    MPI_Reduce(sums, totals, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", totals[0], totals[1]);
    int any = failed, all_failed = 0;
    MPI_Allreduce(&any, &all_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(X);
    free(y);
    MPI_Finalize();
    return all_failed == 0 ? 0 : 1;
}
