/*
 * Time to a converged default em fit on bench_em's data (the same generator and seeds):
 *
 *   bench_fit_time --n 2e5 --d 50 --k 8 [--solver S] [--threads T] [--n-init R]
 *
 * Every option at its default unless given (gate_solver, threads, n_init). Prints the
 * seconds of moe_fitter_fit, the iterations (all restarts), the gate's inner steps and the
 * final log-likelihood, so that solvers can be compared at the same log-likelihood.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime; strdup, strtok_r in harness.h */
#include "moe/moe.h"

#include "gaussian_data.h" /* bench_em's data */
#include "harness.h"       /* now */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    size_t n = 200000, d = 50, K = 8;
    long long threads = 1, n_init = 0;
    const char *solver = NULL;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--n") == 0)
            n = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--d") == 0)
            d = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--k") == 0)
            K = (size_t)strtod(argv[a + 1], NULL);
        else if (strcmp(argv[a], "--solver") == 0)
            solver = argv[a + 1];
        else if (strcmp(argv[a], "--threads") == 0)
            threads = atoll(argv[a + 1]);
        else if (strcmp(argv[a], "--n-init") == 0)
            n_init = atoll(argv[a + 1]);
        else {
            fprintf(stderr, "unknown option %s\n", argv[a]);
            return 2;
        }
    }
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    if (X == NULL || y == NULL)
        return 1;
    make_gaussian_data(n, d, K, X, y);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK || moe_fitter_create(&fitter, "em") != MOE_OK)
        return 1;
    if (moe_fitter_set_int(fitter, MOE_OPT_THREADS, threads) != MOE_OK ||
        (n_init > 0 && moe_fitter_set_int(fitter, MOE_OPT_N_INIT, n_init) != MOE_OK) ||
        (solver != NULL && moe_fitter_set_option(fitter, "gate_solver", solver) != MOE_OK)) {
        fprintf(stderr, "%s\n", moe_fitter_last_error(fitter));
        return 2;
    }
    double start = now();
    moe_status status = moe_fitter_fit(fitter, model, n, X, d, y, NULL);
    double seconds = now() - start;
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    if (status != MOE_OK || moe_fitter_get_report(fitter, &report) != MOE_OK) {
        fprintf(stderr, "fit failed: %s\n", moe_fitter_last_error(fitter));
        return 1;
    }
    printf("n=%zu d=%zu K=%zu solver=%s threads=%lld seconds=%.3f iterations=%zu total=%zu "
           "inner=%zu search_runs=%zu search_iterations=%zu loglik=%.10f converged=%d "
           "violations=%zu\n",
           n, d, K, solver ? solver : "default", threads, seconds, (size_t)report.iterations, (size_t)report.total_iterations,
           (size_t)report.inner_iterations, (size_t)report.search_runs,
           (size_t)report.search_iterations, report.loglik, report.converged,
           (size_t)report.monotonicity_violations);
    moe_fitter_free(fitter);
    moe_model_free(model);
    free(X);
    free(y);
    return 0;
}
