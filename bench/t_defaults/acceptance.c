/*
 * t experts' defaults against many seeds (issue 41's acceptance), over the public API:
 *
 *     acceptance DATA.csv SEEDS
 *
 * DATA.csv has a header and rows "x,y" (generate.py). Prints the default em fit of two t
 * experts (seed 1) with its iterations and convergence, the best log-likelihood of seeds 1 to
 * SEEDS, and the default Gaussian fit of the same structure, on one line.
 */
#include <moe/moe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double fit(moe_family family, size_t n, const double *x, const double *y, long long seed,
                  size_t *iterations, int *converged)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    double loglik = -INFINITY;
    if (moe_model_create(&model, &spec) != MOE_OK || moe_fitter_create(&fitter, "em") != MOE_OK)
        exit(2);
    moe_fitter_set_int(fitter, MOE_OPT_SEED, seed);
    if (moe_fitter_fit(fitter, model, n, x, 1, y, NULL) == MOE_OK) {
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        moe_fitter_get_report(fitter, &report);
        loglik = report.loglik;
        *iterations = report.total_iterations;
        *converged = report.converged;
    }
    moe_fitter_free(fitter);
    moe_model_free(model);
    return loglik;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    FILE *file = fopen(argv[1], "r");
    size_t n = 0, capacity = 1 << 20;
    double *x = malloc(capacity * sizeof *x), *y = malloc(capacity * sizeof *y);
    char header[256];
    if (file == NULL || x == NULL || y == NULL || fgets(header, sizeof header, file) == NULL)
        return 2;
    while (n < capacity && fscanf(file, "%lf,%lf", &x[n], &y[n]) == 2)
        n++;
    fclose(file);
    long long seeds = atoll(argv[2]);
    size_t iterations = 0, ignored = 0;
    int converged = 0, ignored_flag = 0;
    double chosen = fit(MOE_FAMILY_STUDENT_T, n, x, y, 1, &iterations, &converged), best = chosen;
    for (long long seed = 2; seed <= seeds; ++seed) {
        double other = fit(MOE_FAMILY_STUDENT_T, n, x, y, seed, &ignored, &ignored_flag);
        best = other > best ? other : best;
    }
    double gaussian = fit(MOE_FAMILY_GAUSSIAN, n, x, y, 1, &ignored, &ignored_flag);
    printf("n %zu default %.4f best %.4f gap %.4f iterations %zu converged %d gaussian %.4f "
           "t-gaussian %.4f\n",
           n, chosen, best, best - chosen, iterations, converged, gaussian, chosen - gaussian);
    free(x);
    free(y);
    return 0;
}
