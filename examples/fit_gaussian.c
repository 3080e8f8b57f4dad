/*
 * fit_gaussian: fit a softmax-gated mixture of three Gaussian regression
 * experts with EM, compare the estimate with the parameters that generated
 * the data, and round-trip the model through a file.
 *
 * Build against an installed libmoe:
 *   cc fit_gaussian.c $(pkg-config --cflags --libs moe) -o fit_gaussian
 * or with CMake: see examples/CMakeLists.txt (find_package(moe)).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */

#include <moe/moe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define K 3        /* experts */
#define D 2        /* features */
#define P (D + 1)  /* inputs: intercept first, then the features */
#define N 5000     /* samples */

/* ------------------------------------------------------------------------ */
/* A small portable PRNG (splitmix64) so the data are the same everywhere.  */
/* ------------------------------------------------------------------------ */

typedef struct example_rng {
    uint64_t state;
} example_rng;

static uint64_t rng_next(example_rng *rng)
{
    uint64_t z = (rng->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): 53 random bits, never exactly 0. */
static double rng_uniform(example_rng *rng)
{
    return ((double)(rng_next(rng) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Standard normal by the Box-Muller transform (one value per call). */
static double rng_normal(example_rng *rng)
{
    const double two_pi = 6.283185307179586476925286766559;
    double u1 = rng_uniform(rng);
    double u2 = rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

/* ------------------------------------------------------------------------ */
/* The true model                                                           */
/* ------------------------------------------------------------------------ */

/* Gate rows [intercept, w1, w2]; the last expert is the reference (zero row). */
static const double true_gate[K][P] = {
    {0.5, 2.0, -1.0},
    {-0.3, -1.5, 2.0},
    {0.0, 0.0, 0.0},
};
/* Expert regression coefficients [intercept, beta1, beta2]. */
static const double true_experts[K][P] = {
    {-4.0, 1.0, 2.0},
    {0.0, -2.0, 0.5},
    {4.0, 0.5, -1.5},
};
static const double true_variances[K] = {0.25, 0.5, 0.1};

static void generate(double *X, double *y, uint64_t seed)
{
    example_rng rng = {seed};
    for (size_t i = 0; i < N; ++i) {
        double xt[P];
        xt[0] = 1.0;
        for (size_t j = 0; j < D; ++j) {
            X[i * D + j] = rng_normal(&rng);
            xt[j + 1] = X[i * D + j];
        }
        /* Softmax gate, then draw the expert. */
        double score[K], top = -INFINITY, total = 0.0;
        for (size_t k = 0; k < K; ++k) {
            score[k] = 0.0;
            for (size_t j = 0; j < P; ++j)
                score[k] += true_gate[k][j] * xt[j];
            if (score[k] > top)
                top = score[k];
        }
        for (size_t k = 0; k < K; ++k) {
            score[k] = exp(score[k] - top);
            total += score[k];
        }
        double u = rng_uniform(&rng) * total;
        size_t z = K - 1;
        for (size_t k = 0; k < K; ++k) {
            if (u < score[k]) {
                z = k;
                break;
            }
            u -= score[k];
        }
        double mean = 0.0;
        for (size_t j = 0; j < P; ++j)
            mean += true_experts[z][j] * xt[j];
        y[i] = mean + sqrt(true_variances[z]) * rng_normal(&rng);
    }
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* Print a failure with both the static and the detailed message. */
static int failed(const char *what, moe_status status, const char *detail)
{
    fprintf(stderr, "fit_gaussian: %s failed: %s (status %d)", what, moe_strerror(status),
            (int)status);
    if (detail && detail[0])
        fprintf(stderr, ": %s", detail);
    fprintf(stderr, "\n");
    return 1;
}

#define CHECK(call, what)                                                \
    do {                                                                 \
        moe_status check_status_ = (call);                               \
        if (check_status_ != MOE_OK) {                                   \
            failed((what), check_status_, moe_last_error());             \
            goto done;                                                   \
        }                                                                \
    } while (0)

/*
 * Which true expert each fitted expert estimates: the permutation with the
 * smallest squared distance between coefficient vectors (K = 3: 6 to try).
 */
static void align(const double *fitted, size_t match[K])
{
    static const size_t perms[6][K] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                       {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    double best = INFINITY;
    for (size_t q = 0; q < 6; ++q) {
        double cost = 0.0;
        for (size_t k = 0; k < K; ++k)
            for (size_t j = 0; j < P; ++j) {
                double e = fitted[k * P + j] - true_experts[perms[q][k]][j];
                cost += e * e;
            }
        if (cost < best) {
            best = cost;
            memcpy(match, perms[q], sizeof perms[q]);
        }
    }
}

int main(void)
{
    int rc = 1;
    double *X = malloc(sizeof(double) * N * D);
    double *y = malloc(sizeof(double) * N);
    double *pred = malloc(sizeof(double) * N);
    double *pred_loaded = malloc(sizeof(double) * N);
    moe_model_t *model = NULL;
    moe_model_t *loaded = NULL;
    moe_fitter_t *fitter = NULL;
    char path[4096] = "";
    int have_file = 0;

    if (!X || !y || !pred || !pred_loaded) {
        fprintf(stderr, "fit_gaussian: out of memory\n");
        goto done;
    }

    printf("libmoe %s (header %s)\n\n", moe_version_string(), MOE_VERSION_STRING);
    generate(X, y, UINT64_C(20240611));

    /* The model: 3 Gaussian experts on 2 features, with intercepts. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    CHECK(moe_model_create(&model, &spec), "moe_model_create");

    /* The EM fitter: 5 restarts from a fixed seed. */
    CHECK(moe_fitter_create(&fitter, "em"), "moe_fitter_create(\"em\")");
    CHECK(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 5), "moe_fitter_set_int(n_init)");
    CHECK(moe_fitter_set_int(fitter, MOE_OPT_SEED, 42), "moe_fitter_set_int(seed)");

    moe_status status = moe_fitter_fit(fitter, model, N, X, D, y, NULL);
    if (status != MOE_OK) {
        failed("moe_fitter_fit", status, moe_fitter_last_error(fitter));
        goto done;
    }

    moe_fit_report report;
    memset(&report, 0, sizeof report);
    report.version = MOE_FIT_REPORT_VERSION;
    CHECK(moe_fitter_get_report(fitter, &report), "moe_fitter_get_report");

    double gate[K * P], experts[K * P], variances[K];
    CHECK(moe_model_get_gate(model, gate, K * P), "moe_model_get_gate");
    CHECK(moe_model_get_experts(model, experts, K * P), "moe_model_get_experts");
    CHECK(moe_model_get_variances(model, variances, K), "moe_model_get_variances");

    /*
     * Fitted expert k estimates true expert match[k]. The fitted gate is
     * referenced to the last fitted expert, so the true gate is shown
     * referenced to the true expert that one matches.
     */
    size_t match[K];
    align(experts, match);
    const double *ref = true_gate[match[K - 1]];

    printf("n = %d samples, K = %d experts, d = %d features\n\n", N, K, D);
    printf("%-8s %-9s%27s   %27s\n", "expert", "", "fitted", "true");
    double worst = 0.0;
    for (size_t k = 0; k < K; ++k) {
        const double *tb = true_experts[match[k]];
        const double *tg = true_gate[match[k]];
        printf("%-8zu %-9s", k, "coef");
        for (size_t j = 0; j < P; ++j)
            printf(" %8.4f", experts[k * P + j]);
        printf("   ");
        for (size_t j = 0; j < P; ++j)
            printf(" %8.4f", tb[j]);
        printf("\n%-8s %-9s %8.4f %17s    %8.4f\n", "", "variance", variances[k], "",
               true_variances[match[k]]);
        printf("%-8s %-9s", "", "gate");
        for (size_t j = 0; j < P; ++j)
            printf(" %8.4f", gate[k * P + j]);
        printf("   ");
        for (size_t j = 0; j < P; ++j)
            printf(" %8.4f", tg[j] - ref[j]);
        printf("\n");
        for (size_t j = 0; j < P; ++j) {
            double e = fabs(experts[k * P + j] - tb[j]);
            if (e > worst)
                worst = e;
        }
    }
    printf("\nlargest expert coefficient error: %.4f\n\n", worst);

    moe_criteria criteria;
    memset(&criteria, 0, sizeof criteria);
    criteria.version = MOE_CRITERIA_VERSION;
    CHECK(moe_model_criteria(model, N, X, D, y, NULL, &criteria), "moe_model_criteria");
    printf("log-likelihood %.4f  (%g free parameters, n = %g)\n", criteria.loglik,
           criteria.n_params, criteria.n_obs);
    printf("AIC %.4f  BIC %.4f  ICL %.4f\n", criteria.aic, criteria.bic, criteria.icl);
    printf("iterations %zu (all restarts %zu), converged %s, best restart %zu of %zu, "
           "%.3f s\n\n",
           report.iterations, report.total_iterations, report.converged ? "yes" : "no",
           report.best_restart, report.n_restarts, report.seconds);

    /* Save to a temporary file, load it back, compare predictions. */
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !tmpdir[0])
        tmpdir = "/tmp";
    snprintf(path, sizeof path, "%s/fit_gaussian_XXXXXX", tmpdir);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("fit_gaussian: mkstemp");
        goto done;
    }
    close(fd);
    have_file = 1;

    CHECK(moe_model_save(model, path), "moe_model_save");
    CHECK(moe_model_load(&loaded, path), "moe_model_load");
    CHECK(moe_model_predict(model, N, X, D, pred, N), "moe_model_predict");
    CHECK(moe_model_predict(loaded, N, X, D, pred_loaded, N), "moe_model_predict (loaded)");
    double diff = 0.0;
    for (size_t i = 0; i < N; ++i) {
        double e = fabs(pred[i] - pred_loaded[i]);
        if (!(e <= diff)) /* also catches NaN */
            diff = e;
    }
    printf("saved to %s and loaded back: largest prediction difference %g\n", path, diff);
    if (!(diff == 0.0)) {
        fprintf(stderr, "fit_gaussian: the loaded model predicts differently\n");
        goto done;
    }
    printf("predictions agree\n");
    rc = 0;

done:
    if (have_file)
        remove(path);
    moe_model_free(loaded);
    moe_model_free(model);
    moe_fitter_free(fitter);
    free(pred_loaded);
    free(pred);
    free(y);
    free(X);
    return rc;
}
