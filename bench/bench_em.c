/*
 * bench_em: how fast one EM iteration is, against what this machine can do.
 *
 * For every (n, d, K) of the grid it generates softmax-gated Gaussian data
 * (fixed seed), runs a few EM iterations and prints the seconds per
 * iteration (median of the intervals between progress callbacks, so the
 * start-up is excluded), the achieved GFLOP/s under a flop model of the
 * iteration, the ratio to a roofline measured in the same run (peak dgemm
 * GFLOP/s and streaming read bandwidth), and the peak resident memory of the
 * configuration relative to the size of X. Each configuration runs in its own
 * child process so that its peak RSS is its own. At the end, the log-log
 * slope of time per iteration against n for each (d, K).
 *
 *   bench_em [--n 1e4,1e5,1e6,1e7] [--d 5,20,50] [--k 2,4,8] [--iterations 6]
 *            [--threads 1,2] [--solver newton_step|newton|bound] [--repeat 1] [--guard RATIO]
 *
 * With several thread counts each configuration runs once per count, and the
 * speedup column compares it with the first count of the list. --repeat R runs each
 * configuration R times and reports the fastest. --guard RATIO makes the exit status 1
 * when a configuration's "x bound" is above RATIO: CI runs it (.ci/run) so that the pass
 * cannot silently slow down, comparing ratios measured in the same run, never times.
 *
 * Flop model of one EM iteration (p = d + 1 inputs, J = K - 1, m = J p gate unknowns,
 * s = Newton steps per iteration read from the fit report):
 *   E-step       4 n K p        expert means and gate logits
 *   experts      n K p^2        K weighted Gram matrices (symmetric half, 2 flops each)
 *   gate Newton  s n J (J + 1) / 2 p^2
 *                               the Hessian's J (J + 1) / 2 distinct p x p blocks, each a
 *                               weighted Gram matrix: what the library computes
 * The roofline time of an iteration is max(flops / peak, 8 n d / bandwidth): at least
 * one pass over X and these flops at the peak of a large dgemm ("roof s", "x roof";
 * GFLOP/s is these flops over the time). "x generic" is the ratio to the roofline of
 * the same iteration with the Hessian counted as a generic symmetric m x m matrix plus
 * its J diagonal blocks, s n (m^2 + J p^2): the model of earlier results in
 * bench/RESULTS.md, before the Hessian was assembled by blocks. The "BLAS floor" is
 * the time of the iteration's Gram matrices at the rate OpenBLAS reaches on exactly
 * those shapes, measured in the same run (order-p rank-k updates for p > 16; for
 * p <= 16 the library's one product of p x count p per block).
 *
 * The per-row bound ("bound s", "x bound") is what one iteration cannot go below on this
 * machine whatever the code, counting only the work a row genuinely needs per iteration
 * (the gate step's Newton system reuses the E-step's gate probabilities, and its check
 * is the next E-step's, so neither adds exponentials):
 *   exponentials  2 K   the E-step's two softmaxes over the K experts (gate, posterior)
 *   logarithms    2     their log-sum-exps
 *   products      2 p (J + K)             the J free gate logits and K expert means
 *                 (K + J (J + 1) / 2) p (p + 1)
 *                                         the K expert Grams and the Hessian's distinct
 *                                         blocks, symmetric halves only
 *                 2 p (J + K)             the gate gradient and the experts' X'W e
 * each at the best rate measured in the same run: the exponentials and logarithms at the
 * throughput of the library's own array kernels (lib/common/exp_array.c, compiled into
 * this program) on block-sized arrays in cache, the products at the peak dgemm rate, and
 * the products' time no less than one streaming read of X. Everything else a pass does
 * (copies, the per-row loops, BLAS calls on small shapes, summing) counts as overhead.
 * The peak is OpenBLAS's with its own thread count: for the bound of a one-thread
 * iteration run with OPENBLAS_NUM_THREADS=1. Under a forced OPENBLAS_CORETYPE it is the
 * larger of that kernel's peak and OpenBLAS's own choice's (measured in a child started
 * without the variable): the library's hand-written kernels run on the widest vectors
 * the CPU has, so the forced kernel's lower peak would make the bound too easy.
 *
 * The stricter bound ("lean s", "x lean") counts what the library's pass now does: the
 * sums of the rows' log-sum-exps come from logarithms of products of many rows
 * (lib/pass/posterior_block.c), so a row needs no logarithm, and a softmax's arguments
 * are never above 0, so its exponentials need no overflow handling: 2 K exponentials at
 * the throughput of moe_exp_bounded_array, and the same products.
 */
#define _DEFAULT_SOURCE /* wait4 */

#include <moe/moe.h>
#include <cblas.h>

#include "common/linalg.h" /* moe_exp_array, moe_log_array: lib/common/exp_array.c */
#include "gaussian_data.h"
#include "isolated.h"
#include "roofline.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST 16

/*
 * GFLOP/s of the rank-k update the library runs per 256-row block for an order-`order`
 * symmetric matrix (symmetric half, 2 flops per entry and row): what OpenBLAS reaches on
 * the shapes of an EM iteration, rather than on a large square dgemm.
 */
static double syrk_gflops(size_t order)
{
    const size_t rows = 256, repeats = 1 + (size_t)(2e8 / (double)(order * order * rows));
    double *a = malloc(rows * order * sizeof(double));
    double *c = calloc(order * order, sizeof(double));
    rng r = {2};
    for (size_t i = 0; i < rows * order; ++i)
        a[i] = uniform(&r);
    double best = 0.0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        double start = now();
        for (size_t k = 0; k < repeats; ++k)
            cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)order, (int)rows, 1.0, a,
                        (int)order, 1.0, c, (int)order);
        double rate = (double)order * order * rows * repeats / (now() - start) / 1e9;
        best = rate > best ? rate : best;
    }
    free(a);
    free(c);
    return best;
}

/* GFLOP/s of C (p x width) += A' B on 256-row blocks (2 flops per entry and row): the
   library's shared product of all Gram matrices of a block when p <= 16. */
static double product_gflops(size_t p, size_t width)
{
    const size_t rows = 256, repeats = 1 + (size_t)(2e8 / (double)(2 * p * width * rows));
    double *a = malloc(rows * p * sizeof(double)), *b = malloc(rows * width * sizeof(double));
    double *c = calloc(p * width, sizeof(double));
    rng r = {3};
    for (size_t i = 0; i < rows * p; ++i)
        a[i] = uniform(&r);
    for (size_t i = 0; i < rows * width; ++i)
        b[i] = uniform(&r);
    double best = 0.0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        double start = now();
        for (size_t k = 0; k < repeats; ++k)
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)p, (int)width, (int)rows,
                        1.0, a, (int)p, b, (int)width, 1.0, c, (int)width);
        double rate = 2.0 * (double)p * width * rows * repeats / (now() - start) / 1e9;
        best = rate > best ? rate : best;
    }
    free(a);
    free(b);
    free(c);
    return best;
}

/* Seconds of `count` weighted Gram matrices of order p over n rows, the library's way. */
static double grams_seconds(double n, size_t p, double count)
{
    if (count <= 0.0)
        return 0.0;
    if (p <= 16)
        return 2.0 * n * p * p * count / (product_gflops(p, (size_t)count * p) * 1e9);
    return n * p * p * count / (syrk_gflops(p) * 1e9);
}

/* Seconds per value of the library's array exp and log, on arrays the size of a block's
   K x 256 exponentials (arguments in [-30, 0], as after the max subtraction) and 256
   logarithms (sums of a softmax, in [1, K]): the best of several runs. */
static void exp_log_seconds(double *exp_seconds, double *log_seconds, double *bounded_seconds)
{
    enum { VALUES = 768, LOGS = 256 };
    static double in[VALUES], out[VALUES], sums[LOGS];
    for (size_t i = 0; i < VALUES; ++i)
        in[i] = -30.0 * (double)(i % 97) / 97.0;
    for (size_t i = 0; i < LOGS; ++i)
        sums[i] = 1.0 + 2.0 * (double)(i % 89) / 89.0;
    const size_t repeats = 40000;
    double best_exp = INFINITY, best_log = INFINITY, best_bounded = INFINITY, sink = 0.0;
    for (int attempt = 0; attempt < 5; ++attempt) {
        double start = now();
        for (size_t r = 0; r < repeats; ++r)
            moe_exp_array(VALUES, in, out);
        best_exp = fmin(best_exp, (now() - start) / (double)(repeats * VALUES));
        sink += out[1];
        start = now();
        for (size_t r = 0; r < repeats; ++r)
            moe_log_array(LOGS, sums, out);
        best_log = fmin(best_log, (now() - start) / (double)(repeats * LOGS));
        sink += out[1];
        start = now();
        for (size_t r = 0; r < repeats; ++r)
            moe_exp_bounded_array(VALUES, in, out);
        best_bounded = fmin(best_bounded, (now() - start) / (double)(repeats * VALUES));
        sink += out[1];
    }
    if (sink == -1.0) /* keeps the results alive */
        puts("");
    *exp_seconds = best_exp;
    *log_seconds = best_log;
    *bounded_seconds = best_bounded;
}

/* The per-row bound of one iteration (see the top of this file). */
static double row_bound_seconds(double n, size_t d, size_t K, double peak, double bandwidth,
                                double exp_seconds, double log_seconds)
{
    double p = (double)d + 1.0, J = (double)K - 1.0, k = (double)K;
    double flops = 4.0 * p * (J + k) + (k + J * (J + 1.0) / 2.0) * p * (p + 1.0);
    double products = fmax(n * flops / (peak * 1e9), 8.0 * n * (double)d / (bandwidth * 1e9));
    return n * (2.0 * k * exp_seconds + 2.0 * log_seconds) + products;
}

/* ------------------------------------------------------------------------ */
/* One configuration                                                        */
/* ------------------------------------------------------------------------ */

typedef struct result {
    double seconds_per_iteration;
    double newton_steps_per_iteration;
    double fit_seconds;
    int status;
} result;

static size_t threads_option = 1;
static const char *solver_option = NULL;

static result run_configuration(size_t n, size_t d, size_t K, size_t iterations)
{
    result out = {NAN, NAN, NAN, 0};
    double *X = malloc(n * d * sizeof(double)), *y = malloc(n * sizeof(double));
    if (X == NULL || y == NULL) {
        out.status = MOE_ERR_OUT_OF_MEMORY;
        return out;
    }
    make_gaussian_data(n, d, K, X, y);
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = K;
    spec.n_features = d;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    timing stamps = {{0}, 0};
    if ((out.status = moe_model_create(&model, &spec)) != MOE_OK ||
        (out.status = moe_fitter_create(&fitter, "em")) != MOE_OK)
        return out;
    moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1);
    moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, (long long)iterations);
    moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0);
    moe_fitter_set_option(fitter, "init", "random");
    moe_fitter_set_int(fitter, MOE_OPT_THREADS, (long long)threads_option);
    if (solver_option != NULL && moe_fitter_set_option(fitter, "gate_solver", solver_option) != MOE_OK) {
        out.status = MOE_ERR_INVALID_ARGUMENT;
        return out;
    }
    moe_fitter_set_progress(fitter, record, &stamps);
    out.status = moe_fitter_fit(fitter, model, n, X, d, y, NULL);
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    moe_fitter_get_report(fitter, &report);
    out.seconds_per_iteration = median_interval(&stamps);
    out.newton_steps_per_iteration =
        report.iterations > 0 ? (double)report.inner_iterations / (double)report.iterations : 0.0;
    out.fit_seconds = report.seconds;
    moe_fitter_free(fitter);
    moe_model_free(model);
    free(X);
    free(y);
    return out;
}

typedef struct configuration {
    size_t n, d, K, iterations;
} configuration;

static void run_configuration_work(const void *arguments, void *out)
{
    const configuration *c = arguments;
    *(result *)out = run_configuration(c->n, c->d, c->K, c->iterations);
}

/* Run in a child (bench/isolated.h) so that the peak RSS is this configuration's alone. */
static result run_isolated(size_t n, size_t d, size_t K, size_t iterations, double *peak_rss)
{
    configuration c = {n, d, K, iterations};
    result out = {NAN, NAN, NAN, -1};
    if (run_isolated_child(run_configuration_work, &c, &out, sizeof out, peak_rss) != 0)
        out.status = -1;
    return out;
}

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

typedef struct machine {
    double peak, bandwidth, exp_seconds, log_seconds, bounded_seconds;
} machine;

typedef struct options {
    size_t ns[MAX_LIST], n_count, ds[MAX_LIST], d_count, ks[MAX_LIST], k_count;
    size_t thread_counts[MAX_LIST], t_count, iterations, repeat;
    double guard;
} options;

static int parse_options(int argc, char **argv, options *o)
{
    static const options defaults = {{10000, 100000, 1000000, 10000000}, 4, {5, 20, 50}, 3,
                                     {2, 4, 8}, 3, {1}, 1, 6, 1, 0.0};
    *o = defaults;
    for (int a = 1; a < argc; ++a) {
        if (a + 1 < argc && strcmp(argv[a], "--n") == 0)
            o->n_count = parse_list(argv[++a], o->ns, MAX_LIST);
        else if (a + 1 < argc && strcmp(argv[a], "--d") == 0)
            o->d_count = parse_list(argv[++a], o->ds, MAX_LIST);
        else if (a + 1 < argc && strcmp(argv[a], "--k") == 0)
            o->k_count = parse_list(argv[++a], o->ks, MAX_LIST);
        else if (a + 1 < argc && strcmp(argv[a], "--iterations") == 0)
            o->iterations = (size_t)atoi(argv[++a]);
        else if (a + 1 < argc && strcmp(argv[a], "--threads") == 0)
            o->t_count = parse_list(argv[++a], o->thread_counts, MAX_LIST);
        else if (a + 1 < argc && strcmp(argv[a], "--solver") == 0)
            solver_option = argv[++a];
        else if (a + 1 < argc && strcmp(argv[a], "--repeat") == 0)
            o->repeat = (size_t)atoi(argv[++a]);
        else if (a + 1 < argc && strcmp(argv[a], "--guard") == 0)
            o->guard = strtod(argv[++a], NULL);
        else {
            fprintf(stderr,
                    "usage: %s [--n 1e4,1e5,1e6,1e7] [--d 5,20,50] [--k 2,4,8] "
                    "[--iterations 6] [--threads 1,2] [--solver newton_step|newton|bound]\n"
                    "       [--repeat 1] [--guard RATIO]\n",
                    argv[0]);
            return 2;
        }
    }
    if (o->iterations < 2 || o->iterations > MAX_ITERATIONS) {
        fprintf(stderr, "--iterations must be in 2..%d\n", MAX_ITERATIONS);
        return 2;
    }
    if (o->repeat < 1 || o->repeat > 100 || !(o->guard >= 0.0)) {
        fprintf(stderr, "--repeat must be in 1..100 and --guard a ratio above 0\n");
        return 2;
    }
    return 0;
}

/* The fastest of `repeat` runs of a configuration (each in its own child), and the
   largest peak RSS among them. */
static result run_best(size_t repeat, size_t n, size_t d, size_t K, size_t iterations,
                       double *peak_rss)
{
    result best = {NAN, NAN, NAN, -1};
    *peak_rss = 0.0;
    for (size_t r = 0; r < repeat; ++r) {
        double rss = 0.0;
        result run = run_isolated(n, d, K, iterations, &rss);
        *peak_rss = fmax(*peak_rss, rss);
        if (run.status != MOE_OK)
            return run;
        if (!(best.seconds_per_iteration <= run.seconds_per_iteration))
            best = run;
    }
    return best;
}

/* Prints a configuration's row; returns its ratio to the per-row bound. */
static double print_row(const machine *m, size_t n, size_t d, size_t K, size_t threads,
                        result r, double rss, double first_time)
{
    size_t p = d + 1, m_gate = (K - 1) * p;
    double s_newton = r.newton_steps_per_iteration, J = (double)(K - 1);
    double base = 4.0 * n * K * p + (double)n * K * p * p;
    double flops = base + s_newton * (double)n * J * (J + 1.0) / 2.0 * p * p;
    double generic = base + s_newton * (double)n * ((double)m_gate * m_gate + J * p * p);
    double stream = 8.0 * n * d / (m->bandwidth * 1e9);
    double roof = fmax(flops / (m->peak * 1e9), stream);
    double roof_generic = fmax(generic / (m->peak * 1e9), stream);
    double floor = p <= 16 ? grams_seconds((double)n, p, K + s_newton * J * (J + 1.0) / 2.0)
                           : grams_seconds((double)n, p, (double)K) +
                                 grams_seconds((double)n, p, s_newton * J * (J + 1.0) / 2.0);
    double x_bytes = 8.0 * n * d;
    double bound = row_bound_seconds((double)n, d, K, m->peak, m->bandwidth, m->exp_seconds,
                                     m->log_seconds);
    double lean = row_bound_seconds((double)n, d, K, m->peak, m->bandwidth,
                                    m->bounded_seconds, 0.0);
    double seconds = r.seconds_per_iteration;
    printf("%10zu %4zu %3zu %3zu %12.5f %7.2f %8.2f %9.5f %7.2f %9.2f %9.5f %8.2f "
           "%8.1f %6.2f %8.2f %9.5f %8.2f %9.5f %7.2f\n",
           n, d, K, threads, seconds, s_newton, flops / seconds / 1e9, roof, seconds / roof,
           seconds / roof_generic, floor, seconds / floor, rss / 1e6, rss / x_bytes,
           first_time / seconds, bound, seconds / bound, lean, seconds / lean);
    fflush(stdout);
    return seconds / bound;
}

static void print_slopes(const options *o, double times[MAX_LIST][MAX_LIST][MAX_LIST])
{
    printf("\nlog-log slope of seconds per iteration against n (least squares over the n list)\n");
    for (size_t di = 0; di < o->d_count; ++di)
        for (size_t ki = 0; ki < o->k_count; ++ki) {
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            size_t used = 0;
            for (size_t ni = 0; ni < o->n_count; ++ni) {
                double t = times[di][ki][ni];
                if (!(t > 0.0))
                    continue;
                double x = log((double)o->ns[ni]), yv = log(t);
                sx += x;
                sy += yv;
                sxx += x * x;
                sxy += x * yv;
                used++;
            }
            if (used >= 2)
                printf("  d=%zu K=%zu: slope %.3f over %zu sizes\n", o->ds[di], o->ks[ki],
                       (used * sxy - sx * sy) / (used * sxx - sx * sx), used);
        }
}

/* The dgemm peak under OpenBLAS's own choice of kernels, from a copy of this program
   started without OPENBLAS_CORETYPE (OpenBLAS picks its kernels when it is loaded); 0 when
   that fails. */
static double own_kernels_peak(void)
{
    int pipe_fds[2];
    double peak = 0.0;
    if (pipe(pipe_fds) != 0)
        return 0.0;
    pid_t child = fork();
    if (child == 0) {
        close(pipe_fds[0]);
        dup2(pipe_fds[1], STDOUT_FILENO);
        unsetenv("OPENBLAS_CORETYPE");
        execl("/proc/self/exe", "bench_em", "--peak-only", (char *)NULL);
        _exit(1);
    }
    close(pipe_fds[1]);
    FILE *from_child = fdopen(pipe_fds[0], "r");
    if (from_child == NULL || fscanf(from_child, "%lf", &peak) != 1)
        peak = 0.0;
    if (from_child != NULL)
        fclose(from_child);
    else
        close(pipe_fds[0]);
    waitpid(child, NULL, 0);
    return peak;
}

/* The products are priced at the better of OpenBLAS's peaks with and without a forced
   OPENBLAS_CORETYPE: the library's own small-product kernels use the widest vectors the
   CPU has whatever OpenBLAS was told, so a forced older kernel's peak would flatter the
   ratios. */
static machine measure_machine(void)
{
    machine m = {peak_dgemm_gflops(), stream_read_gbytes(), 0.0, 0.0, 0.0};
    const char *forced = getenv("OPENBLAS_CORETYPE");
    if (forced != NULL) {
        double own = own_kernels_peak();
        printf("peak dgemm %.1f GFLOP/s with OPENBLAS_CORETYPE=%s, %.1f with OpenBLAS's own "
               "choice: the larger is the peak\n",
               m.peak, forced, own);
        m.peak = fmax(m.peak, own);
    }
    exp_log_seconds(&m.exp_seconds, &m.log_seconds, &m.bounded_seconds);
    printf("roofline: peak dgemm %.1f GFLOP/s, streaming read %.1f GB/s\n", m.peak, m.bandwidth);
    printf("row bound: array exp %.3f ns, array log %.3f ns, bounded exp %.3f ns per value\n\n",
           m.exp_seconds * 1e9, m.log_seconds * 1e9, m.bounded_seconds * 1e9);
    return m;
}

/* With --guard, the exit status is 1 when a configuration's fastest run is above that
   ratio to its per-row bound (CI's check that the pass has not silently slowed down). */
int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--peak-only") == 0) {
        printf("%.6f\n", peak_dgemm_gflops());
        return 0;
    }
    options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    printf("bench_em, libmoe %s, %ld online CPUs, OPENBLAS_NUM_THREADS=%s\n",
           moe_version_string(), sysconf(_SC_NPROCESSORS_ONLN),
           getenv("OPENBLAS_NUM_THREADS") ? getenv("OPENBLAS_NUM_THREADS") : "unset");
    machine m = measure_machine();
    printf("gate_solver %s; the best of %zu run(s) per row\n\n",
           solver_option != NULL ? solver_option : "(default)", o.repeat);
    printf("%10s %4s %3s %3s %12s %7s %8s %9s %7s %9s %9s %8s %8s %6s %8s %9s %8s %9s %7s\n",
           "n", "d", "K", "thr", "s/iter", "newton", "GFLOP/s", "roof s", "x roof", "x generic",
           "floor s", "x floor", "RSS MB", "RSS/X", "speedup", "bound s", "x bound", "lean s",
           "x lean");
    double times[MAX_LIST][MAX_LIST][MAX_LIST];
    int over = 0;
    for (size_t di = 0; di < o.d_count; ++di)
        for (size_t ki = 0; ki < o.k_count; ++ki)
            for (size_t ni = 0; ni < o.n_count; ++ni)
                for (size_t ti = 0; ti < o.t_count; ++ti) {
                    size_t n = o.ns[ni], d = o.ds[di], K = o.ks[ki];
                    double rss = 0.0;
                    threads_option = o.thread_counts[ti];
                    result r = run_best(o.repeat, n, d, K, o.iterations, &rss);
                    if (ti == 0)
                        times[di][ki][ni] = r.seconds_per_iteration;
                    if (r.status != MOE_OK) {
                        printf("%10zu %4zu %3zu %3zu   failed (status %d)\n", n, d, K,
                               o.thread_counts[ti], r.status);
                        over = 1;
                        continue;
                    }
                    double ratio = print_row(&m, n, d, K, o.thread_counts[ti], r, rss,
                                             times[di][ki][ni]);
                    if (o.guard > 0.0 && !(ratio <= o.guard)) {
                        printf("  ^ above the guard: %.2f times the per-row bound > %.2f\n",
                               ratio, o.guard);
                        over = 1;
                    }
                }
    if (o.n_count >= 2)
        print_slopes(&o, times);
    if (o.guard > 0.0)
        printf("\nguard %.2f times the per-row bound: %s\n", o.guard, over ? "FAILED" : "passed");
    return o.guard > 0.0 && over ? 1 : 0;
}
