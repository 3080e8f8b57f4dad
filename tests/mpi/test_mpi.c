/*
 * libmoe_mpi under mpirun (tests/CMakeLists.txt runs it with 1, 2 and 4 ranks):
 *   fit   every rank fits its block of one generated data set; every rank returns the same
 *         model, bit for bit; it recovers the truth; and rank 0 replays the collective in one
 *         process (the same local fits, the same support rows, moe_fitter_aggregate) and
 *         gets the same model, bit for bit.
 *   bad   the last rank's rows hold a NaN: every rank returns the same error status, names
 *         that rank, and nobody hangs.
 *   features, experts, support, root, null, gate_features, expert_features, offset
 *         (mismatch: all eight in turn)
 *         the last rank alone calls with another d, another K, another support, another
 *         root, a NULL fitter, a gate or experts that see other columns, or an offset:
 *         every rank returns the same error status and the same message, which names what
 *         differs (the rank, for the NULL fitter); nobody hangs or aborts, and every rank's
 *         model is left as it was.
 *   statistics  moe_mpi_fit's report, moe_mpi_criteria, moe_mpi_information and moe_mpi_vcov
 *         equal the single-process values on all rows (1e-9), for rows in random order
 *         (no shard warning) and sorted by a covariate (the warning).
 *   errors   the statistics' error paths: the same status and message on every rank.
 *   shuffle  moe_mpi_shuffle moves every row once, intact, in its documented order, the same
 *         for the same seed; sorted rows shuffled fit without the shard warning; its errors.
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

/* A library call that must succeed: the failure names the call, its status and the message
   of the library that set it. */
#define EXPECT_OK(call) expect_ok((call), #call)
static void expect_ok(moe_status status, const char *call)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *message = strncmp(call, "moe_mpi_", 8) == 0 ? moe_mpi_last_error()
                                                            : moe_last_error();
    char what[512];
    snprintf(what, sizeof what, "%s returned %d (%s): %s", call, (int)status,
             moe_strerror(status), message);
    expect(rank, status == MOE_OK, what);
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
    EXPECT_OK(moe_model_create(&model, &spec));
    return model;
}

static moe_model_t *gaussian(void)
{
    return gaussian_of(2, D);
}

static moe_fitter_t *ot_fitter(void)
{
    moe_fitter_t *fitter = NULL;
    EXPECT_OK(moe_fitter_create(&fitter, "ot"));
    EXPECT_OK(moe_fitter_set_option(fitter, "seed", "7"));
    EXPECT_OK(moe_fitter_set_option(fitter, "n_init", "2"));
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
    EXPECT_OK(moe_model_save_buffer(model, buffer, 4096, &written));
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
    /* The inputs' modes: the odd rank's gate or experts see other columns, or it has an
       offset; the parameter arrays keep their size, so only the inputs tell them apart. */
    static const unsigned char without_first[D] = {0, 1, 1};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = experts;
    spec.n_features = features;
    if (odd && strcmp(mode, "gate_features") == 0)
        spec.gate_features = without_first;
    if (odd && strcmp(mode, "expert_features") == 0)
        spec.expert_features = without_first;
    if (odd && strcmp(mode, "offset") == 0)
        spec.offset_feature = 0;
    moe_model_t *model = NULL;
    EXPECT_OK(moe_model_create(&model, &spec));
    unsigned char before[4096], after[4096];
    size_t before_size = model_bytes(model, before);
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
                 : strcmp(mode, "gate_features") == 0   ? "the gate's features"
                 : strcmp(mode, "expert_features") == 0 ? "the experts' features"
                 : strcmp(mode, "offset") == 0          ? "the offset feature (0 and -1)"
                                                        : "root (0 and 1)");
    expect_same_failure(rank, status,
                        strcmp(mode, "null") == 0 ? MOE_ERR_NULL_POINTER
                                                  : MOE_ERR_INVALID_ARGUMENT,
                        fragment);
    size_t after_size = model_bytes(model, after);
    expect(rank, before_size == after_size && memcmp(before, after, before_size) == 0,
           "a refused call leaves every rank's model as it was");
    moe_model_free(model);
    moe_fitter_free(fitter);
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Every rank fits the rows [first, first + count) of X, y (M rows in all): moe_mpi_fit's
   report, moe_mpi_criteria and moe_mpi_vcov equal the single-process values on all M rows
   with the result. Returns whether the report says the shards differ. */
static int check_statistics(int rank, size_t M, size_t d, const double *X, const double *y,
                            size_t first, size_t count, const char *split)
{
    char what[160];
    moe_fitter_t *fitter = ot_fitter();
    moe_model_t *model = gaussian_of(2, d);
    moe_status status =
        moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, count, X + first * d, d, y + first, NULL, 0);
    snprintf(what, sizeof what, "%s: the fit: %s", split, moe_mpi_last_error());
    expect(rank, status == MOE_OK, what);
    moe_mpi_report report;
    memset(&report, 0xab, sizeof report);
    expect(rank, moe_mpi_report_init(&report, MOE_MPI_REPORT_VERSION) == MOE_OK &&
                     report.version == MOE_MPI_REPORT_VERSION && report.ranks == 0 &&
                     report.loglik == 0.0 && report.seconds == 0.0,
           "moe_mpi_report_init gives the macro's report");
    expect(rank, moe_mpi_report_init(&report, 0) == MOE_ERR_UNSUPPORTED &&
                     moe_mpi_report_init(NULL, 1) == MOE_ERR_NULL_POINTER,
           "moe_mpi_report_init refuses version 0 and NULL");
    expect(rank, moe_mpi_report_init(&report, MOE_MPI_REPORT_VERSION) == MOE_OK,
           "moe_mpi_report_init again");
    expect(rank, moe_mpi_get_report(&report) == MOE_OK, "the report of the fit");
    double loglik = 0.0;
    EXPECT_OK(moe_model_loglik(model, M, X, d, y, NULL, &loglik));
    snprintf(what, sizeof what, "%s: the report's log-likelihood %.17g is all rows' %.17g", split,
             report.loglik, loglik);
    expect(rank, close_to(report.loglik, loglik) && report.n_obs == (double)M, what);
    expect(rank, report.seconds > 0.0, "the report's time is above 0");
    moe_criteria mine = MOE_CRITERIA_INIT, all = MOE_CRITERIA_INIT;
    status = moe_mpi_criteria(MPI_COMM_WORLD, model, count, X + first * d, d, y + first, NULL,
                              &mine);
    EXPECT_OK(moe_model_criteria(model, M, X, d, y, NULL, &all));
    expect(rank, status == MOE_OK && mine.n_obs == all.n_obs && mine.n_params == all.n_params &&
                     close_to(mine.loglik, all.loglik) && close_to(mine.aic, all.aic) &&
                     close_to(mine.bic, all.bic) && close_to(mine.icl, all.icl) &&
                     close_to(mine.entropy, all.entropy),
           "moe_mpi_criteria equals moe_model_criteria on all rows");
    size_t P = moe_model_n_free_params(model);
    double *ours = malloc(P * P * sizeof(double)), *theirs = malloc(P * P * sizeof(double));
    /* Penalties too: N times the penalty is a sum over the rows as well. */
    moe_status summed = moe_mpi_information(MPI_COMM_WORLD, model, count, X + first * d, d,
                                            y + first, NULL, 0.01, 0.02, ours, P * P);
    EXPECT_OK(
        moe_model_information_penalized(model, M, X, d, y, NULL, 0.01, 0.02, theirs, P * P));
    int same = summed == MOE_OK;
    for (size_t i = 0; same && i < P * P; ++i)
        same = close_to(ours[i], theirs[i]);
    expect(rank, same, "moe_mpi_information equals moe_model_information_penalized");
    status = moe_mpi_vcov(MPI_COMM_WORLD, model, count, X + first * d, d, y + first, NULL, 0.0,
                          0.0, ours, P * P);
    moe_status single = moe_model_vcov(model, M, X, d, y, NULL, theirs, P * P);
    same = status == single;
    for (size_t i = 0; same && status == MOE_OK && i < P * P; ++i)
        same = fabs(ours[i] - theirs[i]) <= 1e-9 * sqrt(fabs(theirs[i / P * (P + 1)] *
                                                             theirs[i % P * (P + 1)]));
    if (d == D) /* the generated data: the result is near a maximum, the vcov defined */
        expect(rank, status == MOE_OK, "moe_mpi_vcov on the generated data");
    snprintf(what, sizeof what, "%s: moe_mpi_vcov (%d) equals moe_model_vcov (%d)", split,
             (int)status, (int)single);
    expect(rank, same, what);
    if (rank == 0)
        printf("%s: log-likelihood %.6f, local fits %.6f, worst gap %.4f nats per row (rank "
               "%d), %.3f s\n",
               split, report.loglik, report.local_loglik, report.worst_gap, report.worst_rank,
               report.seconds);
    free(ours);
    free(theirs);
    moe_model_free(model);
    moe_fitter_free(fitter);
    return report.shards_differ;
}

/* Two regimes along x ~ U(0, 60): flat with sd 1 below 30, falling with sd 4 above (like
   the motorcycle data); `sorted`: the rows in the order of x, so that blocks of them see one
   regime each and are not samples of one distribution. */
static void regimes(size_t M, int sorted, double *x, double *y)
{
    moe_rng rng;
    moe_rng_seed(&rng, 5, 0);
    for (size_t i = 0; i < M; ++i) {
        x[i] = sorted ? 60.0 * ((double)i + moe_rng_uniform(&rng)) / (double)M
                      : 60.0 * moe_rng_uniform(&rng);
        double e = moe_rng_normal(&rng);
        y[i] = x[i] < 30.0 ? 2.0 + 0.1 * x[i] + e : 40.0 - x[i] + 4.0 * e;
    }
}

/* The "statistics" case: a block split of rows in random order (the generated data), then
   of two-regime rows in random order and sorted by their covariate. */
static void statistics_case(int rank, int size, const double *X, const double *y)
{
    enum { M = 3000, R = 600 };
    size_t first = (size_t)rank * M / (size_t)size;
    size_t count = (size_t)(rank + 1) * M / (size_t)size - first;
    expect(rank, !check_statistics(rank, M, D, X, y, first, count, "random rows"),
           "no warning on rows in random order");
    double *x = malloc(R * sizeof(double)), *response = malloc(R * sizeof(double));
    first = (size_t)rank * R / (size_t)size;
    count = (size_t)(rank + 1) * R / (size_t)size - first;
    regimes(R, 0, x, response);
    expect(rank, !check_statistics(rank, R, 1, x, response, first, count, "regimes, random"),
           "no warning on two regimes in random order");
    regimes(R, 1, x, response);
    expect(rank, check_statistics(rank, R, 1, x, response, first, count, "regimes, sorted"),
           "the warning on two regimes sorted by x");
    free(x);
    free(response);
}

/* The "shuffle" case: moe_mpi_shuffle moves every row intact (its weight its index), once,
   in the documented order and the same again; it spreads the rows; the sorted two-regime
   rows shuffled fit without the warning; and its errors are every rank's. */
static void shuffle_case(int rank, int size, const double *X, const double *y)
{
    enum { M = 3000, R = 600 };
    int last = rank == size - 1;
    size_t first = (size_t)rank * M / (size_t)size;
    size_t count = (size_t)(rank + 1) * M / (size_t)size - first, rows = 0, again = 0;
    double *index = malloc(count * sizeof(double));
    for (size_t i = 0; i < count; ++i)
        index[i] = (double)(first + i);
    moe_status status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, D, y + first,
                                        index, 0, NULL, NULL, NULL, &rows);
    expect(rank, status == MOE_OK, "the size query");
    double *X_out = malloc((rows + 1) * D * sizeof(double));
    double *y_out = malloc((rows + 1) * sizeof(double)), *w_out = malloc((rows + 1) * sizeof(double));
    double *w_again = malloc((rows + 1) * sizeof(double));
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, D, y + first, index,
                             rows, X_out, y_out, w_out, &again);
    expect(rank, status == MOE_OK && again == rows, moe_mpi_last_error());
    int intact = 1, ordered = 1;
    double sums[3] = {(double)rows, 0.0, 0.0};
    for (size_t i = 0; i < rows; ++i) {
        size_t at = (size_t)w_out[i];
        intact = intact && y_out[i] == y[at] &&
                 memcmp(X_out + i * D, X + at * D, D * sizeof(double)) == 0;
        ordered = ordered && (i == 0 || w_out[i] > w_out[i - 1]);
        sums[1] += w_out[i];
        sums[2] += w_out[i] * w_out[i];
    }
    expect(rank, intact, "every row arrives intact");
    expect(rank, ordered, "in the order of the source rank, then of the index");
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect(rank, sums[0] == M && sums[1] == (double)M * (M - 1) / 2 &&
                     sums[2] == (double)(M - 1) * M * (2 * M - 1) / 6,
           "every row arrives once");
    double share = (double)M / size, spread = 5.0 * sqrt(share);
    expect(rank, fabs((double)rows - share) < spread, "the rows spread over the ranks");
    EXPECT_OK(moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, D, y + first, index,
                              rows, X_out, y_out, w_again, &again));
    expect(rank, memcmp(w_out, w_again, rows * sizeof(double)) == 0,
           "the same seed, the same rows");
    /* The sorted two-regime rows, shuffled: no warning any more. */
    double *x = malloc(R * sizeof(double)), *response = malloc(R * sizeof(double));
    regimes(R, 1, x, response);
    size_t from = (size_t)rank * R / (size_t)size;
    size_t mine = (size_t)(rank + 1) * R / (size_t)size - from;
    EXPECT_OK(moe_mpi_shuffle(MPI_COMM_WORLD, 3, mine, 1, x + from, 1, response + from, NULL, 0,
                              NULL, NULL, NULL, &rows));
    double *shuffled_x = malloc((rows + 1) * sizeof(double));
    double *shuffled_y = malloc((rows + 1) * sizeof(double));
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, mine, 1, x + from, 1, response + from, NULL, rows,
                             shuffled_x, shuffled_y, NULL, &rows);
    moe_fitter_t *fitter = ot_fitter();
    moe_model_t *model = gaussian_of(2, 1);
    moe_mpi_report report = MOE_MPI_REPORT_INIT;
    status = moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, rows, shuffled_x, 1, shuffled_y, NULL,
                         0);
    EXPECT_OK(moe_mpi_get_report(&report));
    expect(rank, status == MOE_OK && !report.shards_differ, "the shuffled sorted rows: no warning");
    if (rank == 0)
        printf("regimes, sorted then shuffled: log-likelihood %.6f, worst gap %.4f (allowed "
               "%.4f)\n",
               report.loglik, report.worst_gap, report.allowance);
    /* errors */
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, D, y + first, NULL,
                             last ? 1 : again, X_out, y_out, NULL, &rows);
    expect_same_failure(rank, status, MOE_ERR_BUFFER_TOO_SMALL, "needed");
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, last ? D - 1 : D, X + first * D, D,
                             y + first, NULL, again, X_out, y_out, NULL, &rows);
    expect_same_failure(rank, status, MOE_ERR_INVALID_ARGUMENT, "differ in d");
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, D, y + first, NULL,
                             last ? 0 : again, last ? NULL : X_out, last ? NULL : y_out, NULL,
                             &rows);
    expect_same_failure(rank, status, MOE_ERR_INVALID_ARGUMENT, "asking for the size");
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, D, y + first, NULL,
                             again, X_out, y_out, last ? w_out : NULL, &rows);
    expect_same_failure(rank, status, MOE_ERR_INVALID_ARGUMENT, "passing weights_out");
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, D, y + first, NULL,
                             again, X_out, y_out, NULL, last ? NULL : &rows);
    expect_same_failure(rank, status, MOE_ERR_NULL_POINTER, "is NULL");
    status = moe_mpi_shuffle(MPI_COMM_WORLD, 3, count, D, X + first * D, last ? 1 : D, y + first,
                             NULL, again, X_out, y_out, NULL, &rows);
    expect_same_failure(rank, status, MOE_ERR_DIMENSION, "ldx 1 is below d 3");
    moe_model_free(model);
    moe_fitter_free(fitter);
    free(x);
    free(response);
    free(shuffled_x);
    free(shuffled_y);
    free(index);
    free(X_out);
    free(y_out);
    free(w_out);
    free(w_again);
}

/* The "errors" case: every rank returns the same status and message when one rank's (or
   every rank's) arguments are wrong; a rank without rows adds nothing. */
static void statistics_errors(int rank, int size, const double *X, const double *y)
{
    int last = rank == size - 1;
    moe_mpi_report report = MOE_MPI_REPORT_INIT;
    expect(rank, moe_mpi_get_report(NULL) == MOE_ERR_NULL_POINTER, "get_report(NULL)");
    expect(rank, moe_mpi_get_report(&report) == MOE_ERR_INVALID_ARGUMENT,
           "get_report before any fit");
    report.version = 0;
    expect(rank, moe_mpi_get_report(&report) == MOE_ERR_UNSUPPORTED, "get_report version 0");
    moe_model_t *model = gaussian(), *other = gaussian_of(3, D);
    size_t P = moe_model_n_free_params(model), rows = 500, first = (size_t)rank * rows;
    double *matrix = malloc(P * P * sizeof(double));
    moe_criteria criteria = MOE_CRITERIA_INIT;
    moe_status status = moe_mpi_criteria(MPI_COMM_WORLD, last ? NULL : model, rows,
                                         X + first * D, D, y + first, NULL, &criteria);
    char fragment[64];
    snprintf(fragment, sizeof fragment, "rank %d: model or criteria is NULL", size - 1);
    expect_same_failure(rank, status, MOE_ERR_NULL_POINTER, fragment);
    criteria.version = 0;
    status = moe_mpi_criteria(MPI_COMM_WORLD, model, rows, X + first * D, D, y + first, NULL,
                              &criteria);
    expect_same_failure(rank, status, MOE_ERR_UNSUPPORTED, "criteria version 0");
    criteria.version = MOE_CRITERIA_VERSION;
    status = moe_mpi_criteria(MPI_COMM_WORLD, model, 0, NULL, D, NULL, NULL, &criteria);
    expect_same_failure(rank, status, MOE_ERR_EMPTY_INPUT, "no rows on any rank");
    /* a NaN among the last rank's rows */
    double *bad_y = malloc(rows * sizeof(double));
    memcpy(bad_y, y + first, rows * sizeof(double));
    bad_y[7] = last ? NAN : bad_y[7];
    status = moe_mpi_information(MPI_COMM_WORLD, model, rows, X + first * D, D, bad_y, NULL, 0.0,
                                 0.0, matrix, P * P);
    snprintf(fragment, sizeof fragment, "rank %d: ", size - 1);
    expect_same_failure(rank, status, MOE_ERR_NON_FINITE, fragment);
    status = moe_mpi_information(MPI_COMM_WORLD, model, rows, X + first * D, D, y + first, NULL,
                                 0.0, 0.0, matrix, last ? P : P * P);
    expect_same_failure(rank, status, MOE_ERR_DIMENSION, "needed");
    size_t Q = moe_model_n_free_params(other);
    double *wider = malloc(Q * Q * sizeof(double));
    status = moe_mpi_information(MPI_COMM_WORLD, last ? other : model, rows, X + first * D, D,
                                 y + first, NULL, 0.0, 0.0, last ? wider : matrix,
                                 last ? Q * Q : P * P);
    free(wider);
    expect_same_failure(rank, status, MOE_ERR_INVALID_ARGUMENT, "differ in their free parameters");
    /* as many free parameters, but the last rank's gate sees other columns */
    static const unsigned char first_two[D] = {1, 1, 0}, last_two[D] = {0, 1, 1};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_features = D;
    spec.gate_features = last ? last_two : first_two;
    moe_model_t *masked = NULL;
    EXPECT_OK(moe_model_create(&masked, &spec));
    status = moe_mpi_criteria(MPI_COMM_WORLD, masked, rows, X + first * D, D, y + first, NULL,
                              &criteria);
    expect_same_failure(rank, status, MOE_ERR_INVALID_ARGUMENT, "differ in the gate's features");
    moe_model_free(masked);
    status = moe_mpi_vcov(MPI_COMM_WORLD, model, rows, X + first * D, D, y + first, NULL, 0.0,
                          0.0, NULL, P * P);
    expect_same_failure(rank, status, MOE_ERR_NULL_POINTER, "is NULL");
    /* no rows anywhere: an information of zeros, not positive definite */
    status = moe_mpi_vcov(MPI_COMM_WORLD, model, 0, NULL, D, NULL, NULL, 0.0, 0.0, matrix, P * P);
    expect_same_failure(rank, status, MOE_ERR_NUMERICAL, "not positive definite");
    /* the last rank without rows: the others' rows alone */
    status = moe_mpi_criteria(MPI_COMM_WORLD, model, last ? 0 : rows, X + first * D, D, y + first,
                              NULL, &criteria);
    moe_criteria all = MOE_CRITERIA_INIT;
    EXPECT_OK(moe_model_criteria(model, rows * (size_t)(size - 1), X, D, y, NULL, &all));
    expect(rank, size == 1 || (status == MOE_OK && criteria.n_obs == all.n_obs &&
                               close_to(criteria.loglik, all.loglik) &&
                               close_to(criteria.icl, all.icl)),
           "a rank without rows adds nothing");
    free(bad_y);
    free(matrix);
    moe_model_free(model);
    moe_model_free(other);
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
        EXPECT_OK(moe_model_get_experts(model, experts, 2 * P));
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
            EXPECT_OK(moe_mpi_support_counts((size_t)size, rows, total / (size_t)size, counts));
            size_t S = 0;
            for (int r = 0; r < size; ++r)
                S += counts[r];
            double *support_X = malloc(S * D * sizeof(double)), *support_y = malloc(S * sizeof(double));
            size_t at = 0;
            for (int r = 0; r < size; ++r) {
                size_t f, c;
                block(r, size, &f, &c);
                moe_fitter_t *em = NULL;
                EXPECT_OK(moe_fitter_create(&em, "em"));
                EXPECT_OK(moe_fitter_set_option(em, "seed", "7"));
                EXPECT_OK(moe_fitter_set_option(em, "n_init", "2"));
                locals[r] = gaussian();
                EXPECT_OK(moe_fitter_fit(em, locals[r], c, X + f * D, D, y + f, NULL));
                moe_fitter_free(em);
                shares[r] = (double)c / (double)total;
                size_t *indices = malloc((counts[r] > 0 ? counts[r] : 1) * sizeof(size_t));
                EXPECT_OK(moe_mpi_support_rows(7, r, c, counts[r], indices));
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
    static const char *const mismatches[] = {"features",      "experts",         "support",
                                              "root",          "null",            "gate_features",
                                              "expert_features", "offset"};
    if (strcmp(mode, "statistics") == 0)
        statistics_case(rank, size, X, y);
    else if (strcmp(mode, "shuffle") == 0)
        shuffle_case(rank, size, X, y);
    else if (strcmp(mode, "errors") == 0)
        statistics_errors(rank, size, X, y);
    else if (strcmp(mode, "fit") == 0 || strcmp(mode, "bad") == 0)
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
