/*
 * fashion_mnist: the Fashion-MNIST experiment (Tables 1 and 2) of
 * Q. Fruytier, A. Mokhtari, S. Sanghavi, "Learning Mixtures of Experts with EM",
 * arXiv:2411.06056 v1, as pinned down in the seed-em spec, sections 5.2 and 5.4.
 *
 *   Table 1: one 10-class softmax regression (a "single logistic expert") on the
 *            original and on the randomly inverted images.
 *   Table 2: a mixture of two 10-class softmax experts with a 2-way softmax gate,
 *            no biases, on the inverted images, after 100 iterations of EM (5 inner
 *            gradient steps per block), gradient EM and gradient descent, each with
 *            the library's safe steps and with step 0.04.
 *
 * Only the public libmoe API and zlib are used. Build and run:
 *
 *   cc -std=c11 -O2 -I<prefix>/include fashion_mnist.c -L<prefix>/lib -lmoe -lz -lm
 *   ./a.out [--quick] [--data DIR] [--iterations N] [--instances N] ...
 *
 * Exit status: 0 when every run finished (the PASS/FAIL lines are informative, they
 * do not change it), 77 when the data set is not installed, 2 on malformed data
 * files, bad options or a libmoe error.
 *
 * Cost: one full-batch pass over the 60000 x 784 training matrix is about 1e9
 * multiply-adds per 10 classes and expert. The data are held as doubles (376 MB
 * for the training set) because that is what the library takes.
 */
#define _POSIX_C_SOURCE 200809L /* stat */

#include <moe/moe.h>
#include <zlib.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXIT_SKIP 77 /* the automake/ctest convention for "skipped" */
#define EXIT_ERROR 2

#define IMAGE_SIDE 28
#define N_PIXELS (IMAGE_SIDE * IMAGE_SIDE)
#define N_CLASSES 10
#define IDX_IMAGES_MAGIC 0x00000803u /* unsigned bytes, 3 dimensions */
#define IDX_LABELS_MAGIC 0x00000801u /* unsigned bytes, 1 dimension */
/* Far above the 70000 images that exist; only guards allocations against a bad header. */
#define MAX_IMAGES 10000000u

#define MAX_CHECKPOINTS 16
#define MAX_INSTANCES 1000

/* ======================================================================== */
/* Small utilities                                                          */
/* ======================================================================== */

static double now_seconds(void)
{
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) != TIME_UTC)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A failed libmoe call: say which call and why, and give the exit status to use. */
static int library_error(const char *call, moe_status status, const char *detail)
{
    if (detail == NULL || detail[0] == '\0')
        detail = moe_last_error();
    fprintf(stderr, "fashion_mnist: %s failed: %s%s%s\n", call, moe_strerror(status),
            detail[0] != '\0' ? ": " : "", detail);
    return EXIT_ERROR;
}

/*
 * splitmix64: a tiny, portable generator, so that the inversion pattern and the
 * starting points are the same on every machine for a given --seed.
 */
typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Independent streams from one user seed: the flips and each instance's start. */
static rng rng_stream(uint64_t seed, uint64_t stream)
{
    rng mixer = {seed};
    rng r = {rng_next(&mixer) ^ (stream * UINT64_C(0xD1B54A32D192ED03))};
    rng_next(&r);
    return r;
}

/* Uniform in (0, 1]: never 0, so log() below is finite. */
static double rng_uniform(rng *r)
{
    return ((double)(rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

static double rng_normal(rng *r)
{
    const double two_pi = 6.283185307179586476925286766559;
    return sqrt(-2.0 * log(rng_uniform(r))) * cos(two_pi * rng_uniform(r));
}

/* ======================================================================== */
/* IDX files (gzipped): big-endian header, then unsigned bytes              */
/* ======================================================================== */

/* Read exactly `size` bytes; a short read means the file is truncated. */
static int gz_read_exact(gzFile gz, const char *path, void *buffer, size_t size,
                         const char *what)
{
    unsigned char *out = buffer;
    size_t done = 0;
    while (done < size) {
        size_t want = size - done;
        unsigned chunk = want > (1u << 30) ? (1u << 30) : (unsigned)want; /* gzread takes int */
        int got = gzread(gz, out + done, chunk);
        if (got < 0) {
            int code = 0;
            fprintf(stderr, "fashion_mnist: %s: cannot read %s: %s\n", path, what,
                    gzerror(gz, &code));
            return EXIT_ERROR;
        }
        if (got == 0) {
            fprintf(stderr, "fashion_mnist: %s: truncated: %zu bytes of %s expected, %zu found\n",
                    path, size, what, done);
            return EXIT_ERROR;
        }
        done += (size_t)got;
    }
    return 0;
}

/* Nothing may follow the data: trailing bytes mean the header's counts are wrong. */
static int gz_expect_end(gzFile gz, const char *path)
{
    unsigned char extra;
    int got = gzread(gz, &extra, 1);
    if (got < 0) {
        int code = 0;
        fprintf(stderr, "fashion_mnist: %s: read error after the data: %s\n", path,
                gzerror(gz, &code));
        return EXIT_ERROR;
    }
    if (got > 0) {
        fprintf(stderr, "fashion_mnist: %s: unexpected bytes after the data\n", path);
        return EXIT_ERROR;
    }
    return 0;
}

static uint32_t big_endian_u32(const unsigned char *bytes)
{
    return (uint32_t)bytes[0] << 24 | (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 |
           (uint32_t)bytes[3];
}

/*
 * Open an IDX file and check its header: the magic number, then `n_dims` sizes
 * (read into dims). A missing file is "not installed" (skip); anything else that
 * goes wrong is an error.
 */
static int idx_open(const char *path, uint32_t magic, size_t n_dims, uint32_t *dims,
                    gzFile *out)
{
    struct stat info;
    if (stat(path, &info) != 0) {
        int missing = errno == ENOENT;
        fprintf(stderr, "fashion_mnist: %s: %s%s\n", path, strerror(errno),
                missing ? " (data set not installed? skipping)" : "");
        return missing ? EXIT_SKIP : EXIT_ERROR;
    }
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL) {
        fprintf(stderr, "fashion_mnist: %s: cannot open: %s\n", path,
                errno != 0 ? strerror(errno) : "out of memory");
        return EXIT_ERROR;
    }
    unsigned char header[4 * 4];
    int rc = gz_read_exact(gz, path, header, 4 * (1 + n_dims), "the header");
    if (rc == 0 && big_endian_u32(header) != magic) {
        fprintf(stderr, "fashion_mnist: %s: bad magic number 0x%08lx (expected 0x%08lx)\n",
                path, (unsigned long)big_endian_u32(header), (unsigned long)magic);
        rc = EXIT_ERROR;
    }
    if (rc != 0) {
        gzclose(gz);
        return rc;
    }
    for (size_t k = 0; k < n_dims; ++k)
        dims[k] = big_endian_u32(header + 4 * (k + 1));
    *out = gz;
    return 0;
}

static int check_count(const char *path, uint32_t count)
{
    if (count == 0 || count > MAX_IMAGES) {
        fprintf(stderr, "fashion_mnist: %s: implausible item count %lu\n", path,
                (unsigned long)count);
        return EXIT_ERROR;
    }
    return 0;
}

/* Images: count x 28 x 28 unsigned bytes, row-major. */
static int load_images(const char *path, size_t *count, unsigned char **pixels)
{
    uint32_t dims[3];
    gzFile gz;
    int rc = idx_open(path, IDX_IMAGES_MAGIC, 3, dims, &gz);
    if (rc != 0)
        return rc;
    if ((rc = check_count(path, dims[0])) == 0 &&
        (dims[1] != IMAGE_SIDE || dims[2] != IMAGE_SIDE)) {
        fprintf(stderr, "fashion_mnist: %s: images are %lu x %lu, expected %d x %d\n", path,
                (unsigned long)dims[1], (unsigned long)dims[2], IMAGE_SIDE, IMAGE_SIDE);
        rc = EXIT_ERROR;
    }
    unsigned char *data = NULL;
    if (rc == 0) {
        data = malloc((size_t)dims[0] * N_PIXELS);
        if (data == NULL) {
            fprintf(stderr, "fashion_mnist: %s: out of memory for %lu images\n", path,
                    (unsigned long)dims[0]);
            rc = EXIT_ERROR;
        }
    }
    if (rc == 0)
        rc = gz_read_exact(gz, path, data, (size_t)dims[0] * N_PIXELS, "the pixels");
    if (rc == 0)
        rc = gz_expect_end(gz, path);
    gzclose(gz);
    if (rc != 0) {
        free(data);
        return rc;
    }
    *count = dims[0];
    *pixels = data;
    return 0;
}

/* Labels: count unsigned bytes, each a class 0..9. */
static int load_labels(const char *path, size_t *count, unsigned char **labels)
{
    uint32_t dims[1];
    gzFile gz;
    int rc = idx_open(path, IDX_LABELS_MAGIC, 1, dims, &gz);
    if (rc != 0)
        return rc;
    rc = check_count(path, dims[0]);
    unsigned char *data = NULL;
    if (rc == 0 && (data = malloc(dims[0])) == NULL) {
        fprintf(stderr, "fashion_mnist: %s: out of memory\n", path);
        rc = EXIT_ERROR;
    }
    if (rc == 0)
        rc = gz_read_exact(gz, path, data, dims[0], "the labels");
    if (rc == 0)
        rc = gz_expect_end(gz, path);
    for (size_t i = 0; rc == 0 && i < dims[0]; ++i)
        if (data[i] >= N_CLASSES) {
            fprintf(stderr, "fashion_mnist: %s: label %u at item %zu is not a class 0..%d\n",
                    path, (unsigned)data[i], i, N_CLASSES - 1);
            rc = EXIT_ERROR;
        }
    gzclose(gz);
    if (rc != 0) {
        free(data);
        return rc;
    }
    *count = dims[0];
    *labels = data;
    return 0;
}

/* One split of the data set as stored: bytes, so both transforms can be built from it. */
typedef struct fmnist_split {
    size_t n;
    unsigned char *pixels; /* n x 784 */
    unsigned char *labels; /* n */
} fmnist_split;

static void split_free(fmnist_split *split)
{
    free(split->pixels);
    free(split->labels);
    memset(split, 0, sizeof *split);
}

/* prefix "train" or "t10k": <dir>/<prefix>-images-idx3-ubyte.gz and the labels. */
static int load_split(const char *dir, const char *prefix, fmnist_split *split)
{
    char images_path[4096], labels_path[4096];
    int a = snprintf(images_path, sizeof images_path, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    int b = snprintf(labels_path, sizeof labels_path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    if (a < 0 || b < 0 || (size_t)a >= sizeof images_path || (size_t)b >= sizeof labels_path) {
        fprintf(stderr, "fashion_mnist: data directory name too long\n");
        return EXIT_ERROR;
    }
    size_t n_images = 0, n_labels = 0;
    memset(split, 0, sizeof *split);
    int rc = load_images(images_path, &n_images, &split->pixels);
    if (rc == 0)
        rc = load_labels(labels_path, &n_labels, &split->labels);
    if (rc == 0 && n_images != n_labels) {
        fprintf(stderr, "fashion_mnist: %s has %zu images but %s has %zu labels\n",
                images_path, n_images, labels_path, n_labels);
        rc = EXIT_ERROR;
    }
    if (rc != 0) {
        split_free(split);
        return rc;
    }
    split->n = n_images;
    return 0;
}

/* ======================================================================== */
/* Design matrices                                                          */
/* ======================================================================== */

/* What the library sees: n rows of 784 features in [0, 1], no bias column. */
typedef struct design {
    size_t n;
    double *X; /* n x 784 */
    double *y; /* n class labels */
} design;

static int design_allocate(design *d, size_t n)
{
    d->n = n;
    d->X = malloc(n * N_PIXELS * sizeof(double));
    d->y = malloc(n * sizeof(double));
    if (d->X == NULL || d->y == NULL) {
        fprintf(stderr, "fashion_mnist: out of memory for a %zu x %d design\n", n, N_PIXELS);
        return EXIT_ERROR;
    }
    return 0;
}

static void design_free(design *d)
{
    free(d->X);
    free(d->y);
    memset(d, 0, sizeof *d);
}

/*
 * Pixels / 255 (the spec's reading of the paper: no centring or scaling), and
 * x <- 1 - x for the images whose flip is set (flip NULL: the original data).
 */
static void design_fill(design *d, const fmnist_split *split, const unsigned char *flip)
{
    for (size_t i = 0; i < d->n; ++i) {
        const unsigned char *pixels = split->pixels + i * N_PIXELS;
        double *x = d->X + i * N_PIXELS;
        int inverted = flip != NULL && flip[i];
        for (size_t j = 0; j < N_PIXELS; ++j) {
            double value = pixels[j] / 255.0;
            x[j] = inverted ? 1.0 - value : value;
        }
        d->y[i] = split->labels[i];
    }
}

/* An independent fair coin per image. */
static unsigned char *draw_flips(size_t n, rng *r, size_t *n_flipped)
{
    unsigned char *flip = malloc(n > 0 ? n : 1);
    if (flip == NULL)
        return NULL;
    *n_flipped = 0;
    for (size_t i = 0; i < n; ++i) {
        flip[i] = (unsigned char)(rng_next(r) >> 63);
        *n_flipped += flip[i];
    }
    return flip;
}

/* ======================================================================== */
/* Models and starting points                                               */
/* ======================================================================== */

static int make_model(size_t n_experts, moe_model_t **out)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_experts = n_experts;
    spec.n_features = N_PIXELS;
    spec.intercept = 0; /* the paper's layer sizes (K x 784, 10 x 784) have no bias */
    spec.n_classes = N_CLASSES;
    moe_status status = moe_model_create(out, &spec);
    return status == MOE_OK ? 0 : library_error("moe_model_create", status, NULL);
}

/* A Gaussian matrix scaled to Frobenius norm 1: the paper's "unit norm" layer. */
static void unit_gaussian_layer(rng *r, double *out, size_t count)
{
    double norm = 0.0;
    for (size_t a = 0; a < count; ++a) {
        out[a] = rng_normal(r);
        norm += out[a] * out[a];
    }
    norm = sqrt(norm);
    for (size_t a = 0; a < count; ++a)
        out[a] /= norm;
}

/*
 * The gate (K x 784) and each expert's 10 x 784 block, each its own unit-norm layer.
 * The library then subtracts the reference row / class, which changes the
 * parameters but not the model.
 */
static int random_start(moe_model_t *model, rng *r)
{
    size_t K = moe_model_n_experts(model), p = moe_model_n_inputs(model);
    size_t rows = moe_model_expert_rows(model);
    double *gate = malloc(K * p * sizeof(double));
    double *experts = malloc(K * rows * p * sizeof(double));
    int rc = 0;
    if (gate == NULL || experts == NULL) {
        fprintf(stderr, "fashion_mnist: out of memory for a starting point\n");
        rc = EXIT_ERROR;
    } else {
        unit_gaussian_layer(r, gate, K * p);
        for (size_t k = 0; k < K; ++k)
            unit_gaussian_layer(r, experts + k * rows * p, rows * p);
        moe_status status = moe_model_set_gate(model, gate, K * p);
        if (status != MOE_OK)
            rc = library_error("moe_model_set_gate", status, moe_model_last_error(model));
        else if ((status = moe_model_set_experts(model, experts, K * rows * p)) != MOE_OK)
            rc = library_error("moe_model_set_experts", status, moe_model_last_error(model));
    }
    free(gate);
    free(experts);
    return rc;
}

/* ======================================================================== */
/* Runs: one estimator from one start, evaluated at checkpoints             */
/* ======================================================================== */

typedef struct run_config {
    const char *name;
    const char *short_name; /* column heading */
    const char *estimator; /* "em", "gem" or "gd" */
    long long inner_steps; /* em only */
    double step;           /* 0: the library's safe step */
    double gate_step;      /* em and gem; 0: the safe step */
    int armijo;            /* gd only */
} run_config;

/* Iterations after which the test metrics are taken; the last is the budget. */
typedef struct schedule {
    size_t count;
    size_t at[MAX_CHECKPOINTS];
} schedule;

typedef struct run_result {
    double accuracy[MAX_CHECKPOINTS];
    double cross_entropy[MAX_CHECKPOINTS];
    double train_cross_entropy; /* at the end, from the fit report */
    size_t iterations;          /* actually run (tol = 0 only stops on an exact tie) */
    size_t gradient_evaluations;
    size_t monotonicity_violations;
    size_t line_search_failures;
    double fit_seconds; /* the library's own timing, summed over the chunks */
    double wall_seconds; /* including the test evaluations */
    double step, gate_step;
} run_result;

/* Checkpoints at the given per-cent marks of the budget, without repeats or zeros. */
static schedule make_schedule(size_t budget, const unsigned *percent, size_t n_percent)
{
    schedule s = {0, {0}};
    for (size_t a = 0; a < n_percent && s.count < MAX_CHECKPOINTS; ++a) {
        size_t t = (size_t)((double)budget * percent[a] / 100.0 + 0.5);
        if (t == 0 || (s.count > 0 && t <= s.at[s.count - 1]))
            continue;
        s.at[s.count++] = t;
    }
    if (s.count == 0 || s.at[s.count - 1] != budget) {
        if (s.count == MAX_CHECKPOINTS)
            s.count--;
        s.at[s.count++] = budget;
    }
    return s;
}

static int set_int(moe_fitter_t *f, moe_option option, long long value)
{
    moe_status status = moe_fitter_set_int(f, option, value);
    return status == MOE_OK ? 0
                            : library_error(moe_option_name(option), status,
                                            moe_fitter_last_error(f));
}

static int set_double(moe_fitter_t *f, moe_option option, double value)
{
    moe_status status = moe_fitter_set_double(f, option, value);
    return status == MOE_OK ? 0
                            : library_error(moe_option_name(option), status,
                                            moe_fitter_last_error(f));
}

/*
 * The options common to every run: start from the model, one restart, and no
 * tolerance stop, so every algorithm runs exactly its iteration budget. Steps
 * are set only when given, because the options an estimator does not read are
 * rejected.
 */
static int make_fitter(const run_config *config, moe_fitter_t **out)
{
    moe_status status = moe_fitter_create(out, config->estimator);
    if (status != MOE_OK)
        return library_error("moe_fitter_create", status, NULL);
    moe_fitter_t *f = *out;
    int rc = set_int(f, MOE_OPT_INIT, MOE_INIT_MODEL);
    if (rc == 0)
        rc = set_int(f, MOE_OPT_N_INIT, 1);
    if (rc == 0)
        rc = set_double(f, MOE_OPT_TOLERANCE, 0.0);
    if (rc == 0 && config->inner_steps > 0)
        rc = set_int(f, MOE_OPT_INNER_STEPS, config->inner_steps);
    if (rc == 0 && config->step > 0.0)
        rc = set_double(f, MOE_OPT_STEP, config->step);
    if (rc == 0 && config->gate_step > 0.0)
        rc = set_double(f, MOE_OPT_GATE_STEP, config->gate_step);
    if (rc == 0 && config->armijo)
        rc = set_int(f, MOE_OPT_LINE_SEARCH, 1);
    if (rc != 0) {
        moe_fitter_free(f);
        *out = NULL;
    }
    return rc;
}

static int evaluate(const moe_model_t *model, const design *test, double *accuracy,
                    double *cross_entropy)
{
    moe_status status =
        moe_model_accuracy(model, test->n, test->X, N_PIXELS, test->y, NULL, accuracy);
    if (status != MOE_OK)
        return library_error("moe_model_accuracy", status, NULL);
    status = moe_model_cross_entropy(model, test->n, test->X, N_PIXELS, test->y, NULL,
                                     cross_entropy);
    return status == MOE_OK ? 0 : library_error("moe_model_cross_entropy", status, NULL);
}

/*
 * Fit a copy of `start` up to each checkpoint in turn, each chunk continuing from
 * the previous one (init = model). gem and gd keep no state between iterations,
 * and em's inner steps start afresh each iteration, so this is the same
 * trajectory as one long fit.
 */
static int run(const run_config *config, const moe_model_t *start, const design *train,
               const design *test, const schedule *s, run_result *result)
{
    double started = now_seconds();
    memset(result, 0, sizeof *result);
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    moe_status status = moe_model_clone(&model, start);
    if (status != MOE_OK)
        return library_error("moe_model_clone", status, NULL);
    int rc = make_fitter(config, &fitter);
    size_t done = 0;
    for (size_t c = 0; rc == 0 && c < s->count; ++c) {
        rc = set_int(fitter, MOE_OPT_MAX_ITER, (long long)(s->at[c] - done));
        if (rc != 0)
            break;
        status = moe_fitter_fit(fitter, model, train->n, train->X, N_PIXELS, train->y, NULL);
        if (status != MOE_OK) {
            fprintf(stderr, "fashion_mnist: %s, iterations %zu..%zu:\n", config->name, done + 1,
                    s->at[c]);
            rc = library_error("moe_fitter_fit", status, moe_fitter_last_error(fitter));
            break;
        }
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        status = moe_fitter_get_report(fitter, &report);
        if (status != MOE_OK) {
            rc = library_error("moe_fitter_get_report", status, NULL);
            break;
        }
        done = s->at[c];
        result->iterations += report.iterations;
        result->gradient_evaluations += report.gradient_evaluations;
        result->monotonicity_violations += report.monotonicity_violations;
        result->line_search_failures += report.line_search_failures;
        result->fit_seconds += report.seconds;
        result->step = report.step;
        result->gate_step = report.gate_step;
        result->train_cross_entropy = -report.loglik / (double)train->n;
        rc = evaluate(model, test, &result->accuracy[c], &result->cross_entropy[c]);
    }
    moe_fitter_free(fitter);
    moe_model_free(model);
    result->wall_seconds = now_seconds() - started;
    return rc;
}

/* ======================================================================== */
/* Options                                                                  */
/* ======================================================================== */

typedef struct options {
    const char *data_dir;
    size_t train_size;        /* 0: all */
    size_t iterations;        /* Table 2 budget */
    size_t table1_iterations; /* Table 1 budget */
    double table1_step;       /* Table 1 gd step, Armijo backtracking from it */
    size_t instances;
    uint64_t seed;
    int quick;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fashion_mnist [options]\n"
            "  --data DIR               IDX files (default /usr/share/datasets/fashion-mnist)\n"
            "  --iterations N           Table 2 iterations (default 100)\n"
            "  --table1-iterations N    Table 1 gd iterations (default 400)\n"
            "  --table1-step S          Table 1 gd step, Armijo backtracking (default 0.2)\n"
            "  --instances N            Table 2 starting points averaged (default 1; paper 25)\n"
            "  --seed S                 seed of the inversion and the starts (default 1)\n"
            "  --train-size N           use the first N training images (default all)\n"
            "  --quick                  smoke test: 20000 training images, 10 iterations,\n"
            "                           50 Table 1 iterations\n");
}

static int parse_size(const char *text, size_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || value > SIZE_MAX)
        return -1;
    *out = (size_t)value;
    return 0;
}

static int parse_positive(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value > 0.0) || !isfinite(value))
        return -1;
    *out = value;
    return 0;
}

/* --quick only changes defaults, so explicit options win wherever they appear. */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){"/usr/share/datasets/fashion-mnist", 0, 100, 400, 0.2, 1, 1, 0};
    for (int a = 1; a < argc; ++a)
        if (strcmp(argv[a], "--quick") == 0) {
            o->quick = 1;
            o->train_size = 20000; /* libmoe refuses fewer rows than the 14896 free parameters */
            o->iterations = 10;
            o->table1_iterations = 50;
        }
    for (int a = 1; a < argc; ++a) {
        const char *name = argv[a];
        if (strcmp(name, "--quick") == 0)
            continue;
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (a + 1 >= argc) {
            fprintf(stderr, "fashion_mnist: unknown option or missing value: %s\n", name);
            usage(stderr);
            return EXIT_ERROR;
        }
        const char *value = argv[++a];
        size_t size = 0;
        int bad = 0;
        if (strcmp(name, "--data") == 0)
            o->data_dir = value;
        else if (strcmp(name, "--iterations") == 0)
            bad = parse_size(value, &o->iterations) != 0 || o->iterations == 0;
        else if (strcmp(name, "--table1-iterations") == 0)
            bad = parse_size(value, &o->table1_iterations) != 0 || o->table1_iterations == 0;
        else if (strcmp(name, "--table1-step") == 0)
            bad = parse_positive(value, &o->table1_step) != 0;
        else if (strcmp(name, "--instances") == 0)
            bad = parse_size(value, &o->instances) != 0 || o->instances == 0 ||
                  o->instances > MAX_INSTANCES;
        else if (strcmp(name, "--seed") == 0) {
            bad = parse_size(value, &size) != 0;
            o->seed = size;
        }
        else if (strcmp(name, "--train-size") == 0)
            bad = parse_size(value, &o->train_size) != 0;
        else {
            fprintf(stderr, "fashion_mnist: unknown option %s\n", name);
            usage(stderr);
            return EXIT_ERROR;
        }
        if (bad) {
            fprintf(stderr, "fashion_mnist: bad value for %s: %s\n", name, value);
            return EXIT_ERROR;
        }
    }
    return 0;
}

/* ======================================================================== */
/* Printing                                                                 */
/* ======================================================================== */

/* "  83.2%" or "     --" when the paper or the spec has no number. */
static void print_percent(double fraction)
{
    if (isnan(fraction))
        printf("     --");
    else
        printf(" %5.1f%%", 100.0 * fraction);
}

static void print_ce(double value)
{
    if (isnan(value))
        printf("     --");
    else
        printf(" %6.3f", value);
}

static void print_step(double step)
{
    if (step > 0.0)
        printf(" %9.5f", step);
    else
        printf("        --");
}

static void print_check(int pass, const char *what)
{
    printf("%s: %s\n", pass ? "PASS" : "FAIL", what);
}

static double mean_of(const double *values, size_t n)
{
    double sum = 0.0;
    for (size_t a = 0; a < n; ++a)
        sum += values[a];
    return sum / (double)n;
}

static double sd_of(const double *values, size_t n)
{
    if (n < 2)
        return 0.0;
    double mean = mean_of(values, n), sum = 0.0;
    for (size_t a = 0; a < n; ++a)
        sum += (values[a] - mean) * (values[a] - mean);
    return sqrt(sum / (double)(n - 1));
}

/* ======================================================================== */
/* Table 1: a single softmax expert                                         */
/* ======================================================================== */

typedef struct table1_row {
    const char *data;
    double paper_accuracy;
    double spec_accuracy, spec_ce; /* seed-em 5.4: GD 0.04, 600 iterations */
    run_result result;
} table1_row;

static int run_table1(const options *o, const design *train, const design *test, int inverted,
                      table1_row *row)
{
    static const unsigned percent[] = {10, 20, 50, 100};
    schedule s = make_schedule(o->table1_iterations, percent, 4);
    run_config config = {"single expert", "gd", "gd", 0, o->table1_step, 0.0, 1};
    moe_model_t *model = NULL;
    rng r = rng_stream(o->seed, 1000 + (uint64_t)inverted);
    int rc = make_model(1, &model);
    if (rc == 0)
        rc = random_start(model, &r);
    if (rc == 0)
        rc = run(&config, model, train, test, &s, &row->result);
    moe_model_free(model);
    if (rc != 0)
        return rc;
    printf("  %-9s", row->data);
    for (size_t c = 0; c < s.count; ++c)
        printf("  t=%zu %.1f%%/%.3f", s.at[c], 100.0 * row->result.accuracy[c],
               row->result.cross_entropy[c]);
    printf("  (%.1f s)\n", row->result.wall_seconds);
    fflush(stdout);
    return 0;
}

static void print_table1(const options *o, const table1_row *rows, size_t last)
{
    printf("\nTable 1: single 10-class softmax expert, gd, %zu iterations, step %g with Armijo\n",
           o->table1_iterations, o->table1_step);
    printf("  %-9s%7s%7s%8s |%7s |%7s%8s  %10s %8s %8s\n", "data", "acc", "CE", "trainCE",
           "paper", "spec", "spec CE", "grad evals", "fit s", "wall s");
    for (size_t a = 0; a < 2; ++a) {
        const run_result *r = &rows[a].result;
        printf("  %-9s", rows[a].data);
        print_percent(r->accuracy[last]);
        print_ce(r->cross_entropy[last]);
        printf(" ");
        print_ce(r->train_cross_entropy);
        printf(" |");
        print_percent(rows[a].paper_accuracy);
        printf(" |");
        print_percent(rows[a].spec_accuracy);
        printf(" ");
        print_ce(rows[a].spec_ce);
        printf("  %10zu %8.1f %8.1f\n", r->gradient_evaluations, r->fit_seconds,
               r->wall_seconds);
    }
    printf("  spec = seed-em 5.4 reference run: gd step 0.04, no line search, 600 iterations\n"
           "  (the spec's own C code, not the paper's). log(10) = %.3f.\n",
           log((double)N_CLASSES));
}

/* ======================================================================== */
/* Table 2: the 2-expert mixture on the inverted data                      */
/* ======================================================================== */

enum { EM_SAFE, EM_FAST, GEM_SAFE, GEM_FAST, GD_SAFE, GD_FAST, N_RUNS };

#define FAST_STEP 0.04 /* seed-em 5.4: 5x the safe 2/lambda, still stable */

static const run_config table2_runs[N_RUNS] = {
    {"EM (5 inner), safe steps", "EM safe", "em", 5, 0.0, 0.0, 0},
    {"EM (5 inner), step 0.04", "EM 0.04", "em", 5, FAST_STEP, FAST_STEP, 0},
    {"GEM, safe steps", "GEM safe", "gem", 0, 0.0, 0.0, 0},
    {"GEM, step 0.04", "GEM 0.04", "gem", 0, FAST_STEP, FAST_STEP, 0},
    {"GD, safe step", "GD safe", "gd", 0, 0.0, 0.0, 0},
    {"GD, step 0.04", "GD 0.04", "gd", 0, FAST_STEP, 0.0, 0},
};

/* Paper, Table 2 (mean of 25; step sizes not reported), by algorithm. */
static const double paper_accuracy[N_RUNS] = {0.792, 0.792, 0.657, 0.657, 0.619, 0.619};
static const double paper_ce[N_RUNS] = {0.801, 0.801, 1.30, 1.30, 1.33, 1.33};

/* seed-em 5.4 reference runs (one instance). The spec ran no GEM; GEM with equal
   steps is GD by the Fisher identity, hence GD's numbers on the GEM 0.04 row. The
   spec's safe EM used 0.008 for the gate too; libmoe's safe 2-expert gate step is 4/lam. */
static const double spec_accuracy[N_RUNS] = {0.698, 0.758, NAN, 0.698, 0.552, 0.698};
static const double spec_ce[N_RUNS] = {1.070, 0.744, NAN, 1.065, 1.893, 1.065};
static const char *const spec_note[N_RUNS] = {
    "EM K=5, 0.008 both blocks", "EM K=5, 0.04", "(no GEM run in the spec)",
    "= GD 0.04 (Fisher)",        "GD 0.008",     "GD 0.04"};

/* seed-em 5.4: EM, 5 inner steps of 0.04, test accuracy / CE at iteration t. */
static const size_t spec_em_t[] = {5, 10, 20, 40, 60, 80, 100};
static const double spec_em_accuracy[] = {0.319, 0.473, 0.668, 0.713, 0.732, 0.746, 0.758};
static const double spec_em_ce[] = {2.179, 1.865, 1.255, 0.936, 0.836, 0.781, 0.744};

/* Metrics of every run, instance and checkpoint. */
typedef struct table2 {
    schedule s;
    size_t instances;
    run_result *results; /* [run][instance] */
} table2;

static run_result *result_at(table2 *t, size_t run_index, size_t instance)
{
    return &t->results[run_index * t->instances + instance];
}

/* One instance: one random start shared by all six runs, as in the paper. */
static int run_instance(const options *o, const design *train, const design *test, table2 *t,
                        size_t instance)
{
    moe_model_t *start = NULL;
    rng r = rng_stream(o->seed, 2000 + instance);
    int rc = make_model(2, &start);
    if (rc == 0)
        rc = random_start(start, &r);
    for (size_t k = 0; rc == 0 && k < N_RUNS; ++k) {
        run_result *res = result_at(t, k, instance);
        rc = run(&table2_runs[k], start, train, test, &t->s, res);
        if (rc != 0)
            break;
        size_t last = t->s.count - 1;
        printf("  instance %zu  %-26s acc %5.1f%%  CE %.3f  (%zu grad evals, %.1f s)\n",
               instance + 1, table2_runs[k].name, 100.0 * res->accuracy[last],
               res->cross_entropy[last], res->gradient_evaluations, res->wall_seconds);
        fflush(stdout);
    }
    moe_model_free(start);
    return rc;
}

/* Mean over instances of run k's accuracy (or CE) at checkpoint c. */
static double metric_mean(table2 *t, size_t k, size_t c, int want_ce, double *sd)
{
    double values[MAX_INSTANCES];
    for (size_t i = 0; i < t->instances; ++i) {
        const run_result *r = result_at(t, k, i);
        values[i] = want_ce ? r->cross_entropy[c] : r->accuracy[c];
    }
    if (sd != NULL)
        *sd = sd_of(values, t->instances);
    return mean_of(values, t->instances);
}

static void print_table2(table2 *t)
{
    size_t last = t->s.count - 1;
    printf("\nTable 2: 2 softmax experts + 2-way softmax gate, no bias, inverted data, after "
           "%zu iterations (mean of %zu instance%s)\n",
           t->s.at[last], t->instances, t->instances == 1 ? "" : "s");
    printf("  %-26s%7s%7s%s |%7s%7s |%7s%7s  %s\n", "run", "acc", "CE",
           t->instances > 1 ? " sd(acc) sd(CE)" : "", "paper", "CE", "spec", "CE", "spec run");
    for (size_t k = 0; k < N_RUNS; ++k) {
        double sd_acc = 0.0, sd_ce = 0.0;
        printf("  %-26s", table2_runs[k].name);
        print_percent(metric_mean(t, k, last, 0, &sd_acc));
        print_ce(metric_mean(t, k, last, 1, &sd_ce));
        if (t->instances > 1)
            printf("  %5.1f%% %6.3f", 100.0 * sd_acc, sd_ce);
        printf(" |");
        print_percent(paper_accuracy[k]);
        print_ce(paper_ce[k]);
        printf(" |");
        print_percent(spec_accuracy[k]);
        print_ce(spec_ce[k]);
        printf("  %s\n", spec_note[k]);
    }
    printf("  paper: Table 2 (mean of 25, step sizes not reported); spec: seed-em 5.4 "
           "reference runs (one instance, 100 iterations).\n");

    printf("\nCost per run (mean over instances; step sizes as reported by the library)\n");
    printf("  %-26s %6s %10s %8s %8s %8s %9s %9s %6s\n", "run", "iters", "grad evals",
           "fit s", "wall s", "s/iter", "step", "gate step", "nonmon");
    for (size_t k = 0; k < N_RUNS; ++k) {
        double iters = 0, evals = 0, fit = 0, wall = 0, nonmono = 0;
        for (size_t i = 0; i < t->instances; ++i) {
            const run_result *r = result_at(t, k, i);
            iters += (double)r->iterations;
            evals += (double)r->gradient_evaluations;
            fit += r->fit_seconds;
            wall += r->wall_seconds;
            nonmono += (double)r->monotonicity_violations;
        }
        double n = (double)t->instances;
        const run_result *first = result_at(t, k, 0);
        printf("  %-26s %6.0f %10.0f %8.1f %8.1f %8.3f", table2_runs[k].name, iters / n,
               evals / n, fit / n, wall / n, iters > 0 ? fit / iters : 0.0);
        print_step(first->step);
        print_step(first->gate_step);
        printf(" %6.0f\n", nonmono / n);
    }
    printf("  fit s: the library's report.seconds summed over the %zu chunks (each fit also\n"
           "  recomputes lambda_max of the Gram matrix); wall s adds the test evaluations.\n"
           "  nonmon: iterations that lowered the log-likelihood\n"
           "  (report.monotonicity_violations).\n",
           t->s.count);
}

static void print_trajectories(table2 *t)
{
    printf("\nTest accuracy / CE during the runs (mean over instances)\n");
    printf("  %5s", "t");
    for (size_t k = 0; k < N_RUNS; ++k)
        printf(" %15s", table2_runs[k].short_name);
    printf(" | %12s\n", "spec EM 0.04");
    for (size_t c = 0; c < t->s.count; ++c) {
        printf("  %5zu", t->s.at[c]);
        for (size_t k = 0; k < N_RUNS; ++k)
            printf("    %5.1f%%/%5.3f", 100.0 * metric_mean(t, k, c, 0, NULL),
                   metric_mean(t, k, c, 1, NULL));
        size_t a = 0, n_spec = sizeof spec_em_t / sizeof spec_em_t[0];
        while (a < n_spec && spec_em_t[a] != t->s.at[c])
            ++a;
        if (a < n_spec)
            printf(" | %5.1f%%/%5.3f\n", 100.0 * spec_em_accuracy[a], spec_em_ce[a]);
        else
            printf(" | %12s\n", "--");
    }
}

/* ======================================================================== */
/* Checks (informative: printed, never fatal)                               */
/* ======================================================================== */

static void print_checks(const table1_row *t1, size_t t1_last, table2 *t)
{
    size_t last = t->s.count - 1;
    double em_acc = metric_mean(t, EM_SAFE, last, 0, NULL);
    double gem_acc = metric_mean(t, GEM_SAFE, last, 0, NULL);
    double gd_acc = metric_mean(t, GD_SAFE, last, 0, NULL);
    double em_ce = metric_mean(t, EM_SAFE, last, 1, NULL);
    double gem_ce = metric_mean(t, GEM_SAFE, last, 1, NULL);
    double gd_ce = metric_mean(t, GD_SAFE, last, 1, NULL);
    char line[256];
    printf("\nChecks\n");
    snprintf(line, sizeof line, "accuracy EM > GEM > GD at safe steps (%.2f%% > %.2f%% > %.2f%%)",
             100.0 * em_acc, 100.0 * gem_acc, 100.0 * gd_acc);
    print_check(em_acc > gem_acc && gem_acc > gd_acc, line);
    snprintf(line, sizeof line, "test CE EM < GEM < GD at safe steps (%.4f < %.4f < %.4f)",
             em_ce, gem_ce, gd_ce);
    print_check(em_ce < gem_ce && gem_ce < gd_ce, line);
    double inverted_ce = t1[1].result.cross_entropy[t1_last];
    snprintf(line, sizeof line,
             "single expert, inverted data: test CE %.3f within 0.05 of log(10) = %.3f",
             inverted_ce, log((double)N_CLASSES));
    print_check(fabs(inverted_ce - log((double)N_CLASSES)) <= 0.05, line);
    double original_acc = t1[0].result.accuracy[t1_last];
    snprintf(line, sizeof line, "single expert, original data: test accuracy %.1f%% > 75%%",
             100.0 * original_acc);
    print_check(original_acc > 0.75, line);
    /* Extra: gem with equal steps is gd (Fisher identity), iterate for iterate. */
    double gem_fast = metric_mean(t, GEM_FAST, last, 1, NULL);
    double gd_fast = metric_mean(t, GD_FAST, last, 1, NULL);
    snprintf(line, sizeof line,
             "GEM(0.04, 0.04) = GD(0.04) by the Fisher identity (test CE %.6f vs %.6f)",
             gem_fast, gd_fast);
    print_check(fabs(gem_fast - gd_fast) <= 1e-6 * (1.0 + fabs(gd_fast)), line);
}

/* ======================================================================== */
/* Main                                                                     */
/* ======================================================================== */

typedef struct experiment {
    fmnist_split train_split, test_split;
    unsigned char *train_flip, *test_flip;
    design train, test;
    table2 t2;
} experiment;

static void experiment_free(experiment *e)
{
    split_free(&e->train_split);
    split_free(&e->test_split);
    free(e->train_flip);
    free(e->test_flip);
    design_free(&e->train);
    design_free(&e->test);
    free(e->t2.results);
}

static int data_directory_present(const char *dir)
{
    struct stat info;
    if (stat(dir, &info) == 0 && S_ISDIR(info.st_mode))
        return 1;
    fprintf(stderr, "fashion_mnist: data directory %s not found (install dataset-fashion-mnist "
                    "or pass --data DIR); skipping\n",
            dir);
    return 0;
}

/* Load both splits, draw the inversion coins and allocate the design matrices. */
static int prepare(const options *o, experiment *e)
{
    int rc = load_split(o->data_dir, "train", &e->train_split);
    if (rc == 0)
        rc = load_split(o->data_dir, "t10k", &e->test_split);
    if (rc != 0)
        return rc;
    /* Coins for every stored image, so a subset keeps the flips of the full run. */
    rng r = rng_stream(o->seed, 1);
    size_t train_flipped = 0, test_flipped = 0;
    e->train_flip = draw_flips(e->train_split.n, &r, &train_flipped);
    e->test_flip = draw_flips(e->test_split.n, &r, &test_flipped);
    if (e->train_flip == NULL || e->test_flip == NULL) {
        fprintf(stderr, "fashion_mnist: out of memory\n");
        return EXIT_ERROR;
    }
    size_t n_train = o->train_size > 0 && o->train_size < e->train_split.n ? o->train_size
                                                                          : e->train_split.n;
    printf("data: %s: %zu training and %zu test images; using %zu training images\n",
           o->data_dir, e->train_split.n, e->test_split.n, n_train);
    printf("inversion x <- 1 - x (seed %llu): %zu of %zu training and %zu of %zu test images\n",
           (unsigned long long)o->seed, train_flipped, e->train_split.n, test_flipped,
           e->test_split.n);
    fflush(stdout); /* progress is polled from a log file during long runs */
    rc = design_allocate(&e->train, n_train);
    if (rc == 0)
        rc = design_allocate(&e->test, e->test_split.n);
    return rc;
}

static void print_header(const options *o)
{
    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    printf("Fashion-MNIST experiment of arXiv:2411.06056 v1 (seed-em spec 5.2, 5.4), libmoe %s%s\n",
           moe_version_string(), o->quick ? "  [--quick]" : "");
    printf("OpenBLAS threads: OPENBLAS_NUM_THREADS=%s (libmoe leaves the setting alone)\n",
           threads != NULL ? threads : "unset, OpenBLAS default");
    printf("Table 1: gd, full batch, step %g with Armijo backtracking, %zu iterations\n",
           o->table1_step, o->table1_iterations);
    printf("Table 2: %zu iterations, init = model (Gaussian layers of Frobenius norm 1), "
           "n_init = 1, tol = 0; %zu instance%s\n",
           o->iterations, o->instances, o->instances == 1 ? "" : "s");
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc != 0)
        return rc;
    if (!data_directory_present(o.data_dir))
        return EXIT_SKIP;
    double started = now_seconds();
    print_header(&o);
    experiment e;
    memset(&e, 0, sizeof e);
    rc = prepare(&o, &e);

    /* Table 1: the original data, then the inverted data. */
    table1_row t1[2] = {
        {.data = "original", .paper_accuracy = 0.832, .spec_accuracy = 0.791, .spec_ce = 0.632},
        {.data = "inverted", .paper_accuracy = 0.102, .spec_accuracy = 0.243, .spec_ce = 2.304}};
    static const unsigned t1_percent[] = {10, 20, 50, 100};
    size_t t1_last = make_schedule(o.table1_iterations, t1_percent, 4).count - 1;
    if (rc == 0)
        printf("\nTable 1 runs (test accuracy / CE at iteration t)\n");
    for (int inverted = 0; rc == 0 && inverted < 2; ++inverted) {
        design_fill(&e.train, &e.train_split, inverted ? e.train_flip : NULL);
        design_fill(&e.test, &e.test_split, inverted ? e.test_flip : NULL);
        rc = run_table1(&o, &e.train, &e.test, inverted, &t1[inverted]);
    }

    /* Table 2 on the inverted data, which the design matrices now hold. */
    static const unsigned t2_percent[] = {5, 10, 20, 40, 50, 60, 80, 100};
    if (rc == 0) {
        e.t2.s = make_schedule(o.iterations, t2_percent, 8);
        e.t2.instances = o.instances;
        e.t2.results = calloc(N_RUNS * o.instances, sizeof(run_result));
        if (e.t2.results == NULL) {
            fprintf(stderr, "fashion_mnist: out of memory\n");
            rc = EXIT_ERROR;
        }
    }
    if (rc == 0)
        printf("\nTable 2 runs\n");
    for (size_t i = 0; rc == 0 && i < o.instances; ++i)
        rc = run_instance(&o, &e.train, &e.test, &e.t2, i);

    if (rc == 0) {
        print_table1(&o, t1, t1_last);
        print_table2(&e.t2);
        print_trajectories(&e.t2);
        print_checks(t1, t1_last, &e.t2);
        printf("\ntotal wall time %.1f s\n", now_seconds() - started);
    }
    experiment_free(&e);
    return rc;
}
