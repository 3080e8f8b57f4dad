/*
 * bench_ot_mpi: moe_mpi_fit's wall time (bench/RESULTS.md): every rank generates the same
 * rows as bench_ot, keeps its block of the 90% fitted, and the collective runs; rank 0
 * prints the time, the local fits' slowest time and the test log-likelihood per row.
 *
 *   mpirun -np 2 bench_ot_mpi [--rows N] [--n-init R]
 */
#define _POSIX_C_SOURCE 200809L
#define BENCH_OT_NO_MAIN
#include "../bench_ot.c"

#include <moe/mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = 1000000;
    const char *n_init = "5";
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--rows") == 0 && a + 1 < argc)
            n = (size_t)strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--n-init") == 0 && a + 1 < argc)
            n_init = argv[++a];
    }
    double *X = malloc(n * D * sizeof(double)), *y = malloc(n * sizeof(double));
    bench_ot_data(n, 1, X, y);
    size_t train = n * 9 / 10;
    size_t first = (size_t)rank * train / (size_t)size;
    size_t count = (size_t)(rank + 1) * train / (size_t)size - first;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = D;
    moe_model_t *model = NULL;
    moe_model_create(&model, &spec);
    moe_fitter_t *fitter = NULL;
    moe_fitter_create(&fitter, "ot");
    moe_fitter_set_option(fitter, "n_init", n_init);
    moe_fitter_set_option(fitter, "tol", "1e-6");
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    moe_status status =
        moe_mpi_fit(MPI_COMM_WORLD, 0, fitter, model, count, X + first * D, D, y + first, NULL, 0);
    double seconds = now() - start;
    if (rank == 0) {
        double loglik = NAN;
        moe_model_loglik(model, n - train, X + train * D, D, y + train, NULL, &loglik);
        printf("mpirun -np %d: %.2f s, test ll/row %.4f %s\n", size, seconds,
               loglik / (double)(n - train), status == MOE_OK ? "" : moe_mpi_last_error());
    }
    moe_model_free(model);
    moe_fitter_free(fitter);
    free(X);
    free(y);
    MPI_Finalize();
    return status == MOE_OK ? 0 : 1;
}
