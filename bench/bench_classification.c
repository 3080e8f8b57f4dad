/*
 * bench_classification: how fast one EM iteration of multinomial experts is at the
 * Fashion-MNIST shape, against what this machine can do.
 *
 * It generates softmax-gated multinomial-expert data (fixed seed; pixels uniform in [0, 1],
 * labels drawn from a random gate and random experts), starts every run from the same
 * random unit-norm layers and runs a few EM iterations configured as
 * examples/paper/fashion_mnist.c configures its EM runs: no intercept, init = model,
 * inner_steps = 5 (the experts' and the gate's M-steps are that many gradient steps on the
 * surrogate, since 9 x 784 unknowns per expert are above the Newton limit), step and
 * gate_step 0.04, tolerance 0. It prints the seconds per iteration (the median interval
 * between progress callbacks, so the start-up is excluded), the achieved GFLOP/s under the
 * flop model below, and the ratio to a roofline measured in the same run.
 *
 *   bench_classification [--n 80000] [--d 784] [--k 10] [--classes 10] [--iterations 5]
 *                        [--inner 5] [--step 0.04] [--threads 1,2]
 *
 * Run it as OPENBLAS_NUM_THREADS=1 bench_classification --threads 1,2: the library's threads
 * do the parallel work (a pass's products are whole blocks, which OpenBLAS would run on its
 * own threads too, and the two levels would oversubscribe the cores), and the roofline's
 * peak for T threads is that of T large dgemms running at once, one per thread, summed.
 *
 * The default n is 80,000, not Fashion-MNIST's 60,000: at K = 10 the model has
 * 10 x 9 x 784 + 9 x 784 = 77,616 free parameters, and the fitter refuses fewer rows of
 * positive weight than that. The time per iteration is linear in n, the ratio to the
 * roofline is not a function of n. A quick run: --n 20000 --k 2 (the paper's two experts).
 *
 * Flop model of one iteration (p = d inputs, no intercept; C classes, J = C - 1 free class
 * rows per expert; K experts, K - 1 free gate rows; s inner steps), counting the products
 * over the free rows only (the reference rows are zero):
 *   E-step     2 n p (K - 1)       gate logits
 *              2 n p K J           all experts' class logits
 *   experts    s K 4 n p J         per inner step and expert: its logits (2 n p J) and its
 *                                  gradient X' R (2 n p J)
 *   gate       s 4 n p (K - 1)     per inner step: the gate's logits and gradient
 * and the softmaxes, exponentials and sums of O(n K C) per step, which are not counted.
 * The roofline time is max(flops / peak, bytes / bandwidth) with bytes = (1 + s) 8 n d: X
 * read once by the E-step and once per inner step (all experts and the gate at one step
 * could share a pass), bandwidth one thread's streaming read. At d = 784 and K = C = 10,
 * n = 80,000, an iteration is 137 GFLOP against 3 GB, so the flops decide it ("x roof" is
 * the ratio to the roofline, "peak" the GFLOP/s it used).
 *
 * The "256 x d x K C dgemm" rate is OpenBLAS's on one call of the pass's largest product at
 * this shape (a block of 256 rows times the K C stacked class rows of all experts), one
 * thread: what a pass built on that product can reach.
 */
#define _DEFAULT_SOURCE /* strdup, strtok_r, clock_gettime */

#include <moe/moe.h>

#include "roofline.h"

#include <pthread.h>
#include <string.h>

#define MAX_LIST 8

typedef struct shape {
    size_t n, d, K, C, iterations, inner;
    double step;
} shape;

/* Labels from a random softmax gate and random softmax experts, on pixels in [0, 1]. */
static void make_data(const shape *s, double *X, double *y)
{
    size_t n = s->n, d = s->d, K = s->K, C = s->C;
    rng r = {4242 + d * 100 + K};
    double *gate = malloc(K * d * sizeof(double)), *experts = malloc(K * C * d * sizeof(double));
    double *logits = malloc((K > C ? K : C) * sizeof(double));
    double scale = 4.0 / sqrt((double)d);
    for (size_t a = 0; a < K * d; ++a)
        gate[a] = scale * normal(&r);
    for (size_t a = 0; a < K * C * d; ++a)
        experts[a] = 2.0 * scale * normal(&r);
    for (size_t i = 0; i < n; ++i) {
        double *x = X + i * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = uniform(&r);
        size_t z = 0;
        for (int round = 0; round < 2; ++round) {
            size_t count = round == 0 ? K : C;
            const double *rows = round == 0 ? gate : experts + z * C * d;
            double top = -INFINITY, total = 0.0;
            for (size_t k = 0; k < count; ++k) {
                logits[k] = 0.0;
                for (size_t j = 0; j < d; ++j)
                    logits[k] += rows[k * d + j] * (x[j] - 0.5);
                top = logits[k] > top ? logits[k] : top;
            }
            for (size_t k = 0; k < count; ++k)
                total += logits[k] = exp(logits[k] - top);
            double u = uniform(&r) * total;
            size_t pick = 0;
            while (pick + 1 < count && (u -= logits[pick]) > 0.0)
                ++pick;
            z = pick;
        }
        y[i] = (double)z;
    }
    free(gate);
    free(experts);
    free(logits);
}

/* The paper reproduction's start: every layer a Gaussian matrix of Frobenius norm 1. */
static void unit_layer(rng *r, double *out, size_t count)
{
    double norm = 0.0;
    for (size_t a = 0; a < count; ++a) {
        out[a] = normal(r);
        norm += out[a] * out[a];
    }
    for (size_t a = 0; a < count; ++a)
        out[a] /= sqrt(norm);
}

static moe_status make_start(const shape *s, moe_model_t **out)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_experts = s->K;
    spec.n_features = s->d;
    spec.intercept = 0;
    spec.n_classes = s->C;
    moe_status status = moe_model_create(out, &spec);
    if (status != MOE_OK)
        return status;
    size_t K = s->K, d = s->d, rows = moe_model_expert_rows(*out);
    double *gate = malloc(K * d * sizeof(double)), *experts = malloc(K * rows * d * sizeof(double));
    rng r = {77};
    unit_layer(&r, gate, K * d);
    for (size_t k = 0; k < K; ++k)
        unit_layer(&r, experts + k * rows * d, rows * d);
    status = moe_model_set_gate(*out, gate, K * d);
    if (status == MOE_OK)
        status = moe_model_set_experts(*out, experts, K * rows * d);
    free(gate);
    free(experts);
    return status;
}

/* Seconds per iteration (median between callbacks), or NAN with the failure printed. */
static double run(const shape *s, size_t threads, const double *X, const double *y,
                  double *loglik)
{
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    timing stamps = {{0}, 0};
    moe_status status = make_start(s, &model);
    if (status == MOE_OK)
        status = moe_fitter_create(&fitter, "em");
    if (status == MOE_OK) {
        moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_MODEL);
        moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 1);
        moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, (long long)s->iterations);
        moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 0.0);
        moe_fitter_set_int(fitter, MOE_OPT_INNER_STEPS, (long long)s->inner);
        moe_fitter_set_double(fitter, MOE_OPT_STEP, s->step);
        moe_fitter_set_double(fitter, MOE_OPT_GATE_STEP, s->step);
        moe_fitter_set_int(fitter, MOE_OPT_THREADS, (long long)threads);
        moe_fitter_set_progress(fitter, record, &stamps);
        status = moe_fitter_fit(fitter, model, s->n, X, s->d, y, NULL);
    }
    double seconds = NAN;
    if (status != MOE_OK) {
        printf("fit failed (status %d): %s\n", status,
               fitter != NULL ? moe_fitter_last_error(fitter) : "");
    } else {
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        moe_fitter_get_report(fitter, &report);
        *loglik = report.loglik;
        seconds = median_interval(&stamps);
    }
    moe_fitter_free(fitter);
    moe_model_free(model);
    return seconds;
}

static void *peak_worker(void *rate)
{
    *(double *)rate = peak_dgemm_gflops();
    return NULL;
}

/* The peak of `threads` large dgemms at once (each at OpenBLAS's thread count), summed. */
static double peak_gflops_on(size_t threads)
{
    pthread_t workers[MAX_LIST];
    double rates[MAX_LIST] = {0}, total = 0.0;
    size_t started = 0;
    for (; started < threads && started < MAX_LIST; ++started)
        if (pthread_create(&workers[started], NULL, peak_worker, &rates[started]) != 0)
            break;
    for (size_t t = 0; t < started; ++t) {
        pthread_join(workers[t], NULL);
        total += rates[t];
    }
    return total;
}

/* GFLOP/s of a 256-row block times `columns` stacked rows of length d (C = A B'). */
static double shape_gflops(size_t d, size_t columns)
{
    const size_t rows = 256, repeats = 1 + (size_t)(4e9 / (2.0 * rows * d * columns));
    double *a = malloc(rows * d * sizeof(double)), *b = malloc(columns * d * sizeof(double));
    double *c = malloc(rows * columns * sizeof(double));
    rng r = {5};
    for (size_t i = 0; i < rows * d; ++i)
        a[i] = uniform(&r);
    for (size_t i = 0; i < columns * d; ++i)
        b[i] = uniform(&r);
    double best = 0.0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        double start = now();
        for (size_t k = 0; k < repeats; ++k)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)columns, (int)d,
                        1.0, a, (int)d, b, (int)d, 0.0, c, (int)columns);
        double rate = 2.0 * rows * d * columns * repeats / (now() - start) / 1e9;
        best = rate > best ? rate : best;
    }
    free(a);
    free(b);
    free(c);
    return best;
}

static double iteration_flops(const shape *s)
{
    double np = (double)s->n * (double)s->d, K = (double)s->K, J = (double)s->C - 1.0;
    double estep = 2.0 * np * (K - 1.0) + 2.0 * np * K * J;
    double mstep = (double)s->inner * 4.0 * np * (K * J + K - 1.0);
    return estep + mstep;
}

static int parse(int argc, char **argv, shape *s, size_t *threads, size_t *thread_count)
{
    for (int a = 1; a < argc; a += 2) { /* every option takes a value */
        const char *name = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        size_t *target = strcmp(name, "--n") == 0            ? &s->n
                         : strcmp(name, "--d") == 0          ? &s->d
                         : strcmp(name, "--k") == 0          ? &s->K
                         : strcmp(name, "--classes") == 0    ? &s->C
                         : strcmp(name, "--iterations") == 0 ? &s->iterations
                         : strcmp(name, "--inner") == 0      ? &s->inner
                                                             : NULL;
        if (value != NULL && target != NULL)
            *target = (size_t)strtod(value, NULL);
        else if (value != NULL && strcmp(name, "--step") == 0)
            s->step = strtod(value, NULL);
        else if (value != NULL && strcmp(name, "--threads") == 0)
            *thread_count = parse_list(value, threads, MAX_LIST);
        else
            return -1;
    }
    if (s->iterations < 2 || s->iterations > MAX_ITERATIONS || s->K < 2 || s->C < 2 ||
        s->n == 0 || s->d == 0 || s->inner == 0 || !(s->step > 0.0))
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    shape s = {80000, 784, 10, 10, 5, 5, 0.04};
    size_t threads[MAX_LIST] = {1}, thread_count = 1;
    if (parse(argc, argv, &s, threads, &thread_count) != 0) {
        fprintf(stderr, "usage: %s [--n 80000] [--d 784] [--k 10] [--classes 10] "
                        "[--iterations 5 (2..%d)] [--inner 5] [--step 0.04] [--threads 1,2]\n",
                argv[0], MAX_ITERATIONS);
        return 2;
    }
    printf("bench_classification, libmoe %s, OPENBLAS_NUM_THREADS=%s\n", moe_version_string(),
           getenv("OPENBLAS_NUM_THREADS") ? getenv("OPENBLAS_NUM_THREADS") : "unset");
    double *X = malloc(s.n * s.d * sizeof(double)), *y = malloc(s.n * sizeof(double));
    if (X == NULL || y == NULL) {
        fprintf(stderr, "out of memory for the data\n");
        return 1;
    }
    make_data(&s, X, y);
    double bandwidth = stream_read_gbytes(), at_shape = shape_gflops(s.d, s.K * s.C);
    double flops = iteration_flops(&s), bytes = (1.0 + (double)s.inner) * 8.0 * s.n * s.d;
    printf("streaming read %.1f GB/s; 256 x %zu x %zu dgemm %.1f GFLOP/s (one call)\n",
           bandwidth, s.d, s.K * s.C, at_shape);
    printf("multinomial experts, EM, inner_steps %zu, step %g; %.2f GFLOP and %.2f GB "
           "an iteration\n\n",
           s.inner, s.step, flops / 1e9, bytes / 1e9);
    printf("%8s %4s %3s %3s %3s %10s %9s %9s %9s %7s %16s\n", "n", "d", "K", "C", "thr",
           "s/iter", "GFLOP/s", "peak", "roof s", "x roof", "loglik");
    for (size_t t = 0; t < thread_count; ++t) {
        double peak = peak_gflops_on(threads[t]);
        double roof = fmax(flops / (peak * 1e9), bytes / (bandwidth * 1e9));
        double loglik = NAN, seconds = run(&s, threads[t], X, y, &loglik);
        printf("%8zu %4zu %3zu %3zu %3zu %10.4f %9.2f %9.1f %9.4f %7.2f %16.9e\n", s.n, s.d,
               s.K, s.C, threads[t], seconds, flops / seconds / 1e9, peak, roof, seconds / roof,
               loglik);
        fflush(stdout);
    }
    free(X);
    free(y);
    return 0;
}
