/*
 * The observed information's cost in log-likelihood passes over the same rows:
 *
 *   bench_information --n 1e6 --d 5 --k 3 [--repeat 3] [--guard G]
 *
 * Data: bench_em's (gaussian_data.h). The model is a short em fit (20 iterations from the
 * default start on the first 50,000 rows), so that responsibilities are those of a fit,
 * not of a random model. Times moe_model_loglik and moe_model_information on all n rows,
 * the fastest of --repeat runs each, and prints their ratio (the information's cost in
 * passes). With --guard G the program fails (exit 3) when the ratio exceeds G, so that CI
 * can keep the information near the cost of a pass without timing anything absolute.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in harness.h */
#include "moe/moe.h"

#include "gaussian_data.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static moe_model_t *fitted_model(size_t n, size_t d, size_t K, const double *X,
                                 const double *y)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK || moe_fitter_create(&fitter, "em") != MOE_OK)
        return NULL;
    size_t rows = n < 50000 ? n : 50000;
    moe_status status = moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 20);
    if (status == MOE_OK)
        status = moe_fitter_fit(fitter, model, rows, X, d, y, NULL);
    if (status != MOE_OK) {
        fprintf(stderr, "fit failed: %s\n", moe_fitter_last_error(fitter));
        moe_model_free(model);
        model = NULL;
    }
    moe_fitter_free(fitter);
    return model;
}

int main(int argc, char **argv)
{
    size_t n = 1000000, d = 5, K = 3, repeat = 3;
    double guard = 0.0;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--n") == 0)
            n = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--d") == 0)
            d = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--k") == 0)
            K = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--repeat") == 0)
            repeat = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--guard") == 0)
            guard = strtod(argv[a + 1], NULL);
        else {
            fprintf(stderr, "unknown option %s\n", argv[a]);
            return 2;
        }
    }
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    if (X == NULL || y == NULL || repeat == 0)
        return 1;
    make_gaussian_data(n, d, K, X, y);
    moe_model_t *model = fitted_model(n, d, K, X, y);
    if (model == NULL)
        return 1;
    size_t P = moe_model_n_free_params(model);
    double *information = malloc(P * P * sizeof(double));
    if (information == NULL)
        return 1;
    double pass = 1e300, cost = 1e300, loglik = 0.0;
    for (size_t run = 0; run < repeat; ++run) {
        double start = now();
        if (moe_model_loglik(model, n, X, d, y, NULL, &loglik) != MOE_OK)
            return 1;
        double middle = now();
        if (moe_model_information(model, n, X, d, y, NULL, information, P * P) != MOE_OK) {
            fprintf(stderr, "information failed: %s\n", moe_last_error());
            return 1;
        }
        double end = now();
        pass = middle - start < pass ? middle - start : pass;
        cost = end - middle < cost ? end - middle : cost;
    }
    double ratio = cost / pass;
    printf("n=%zu d=%zu K=%zu P=%zu loglik=%.6f pass_seconds=%.4f information_seconds=%.4f "
           "passes=%.2f\n",
           n, d, K, P, loglik, pass, cost, ratio);
    free(information);
    moe_model_free(model);
    free(X);
    free(y);
    if (guard > 0.0 && ratio > guard) {
        fprintf(stderr, "the information costs %.2f passes, above the guard %.2f\n", ratio,
                guard);
        return 3;
    }
    return 0;
}
