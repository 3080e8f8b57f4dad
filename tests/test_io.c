/*
 * Persistence (lib/model/io.c) and the CRC-32 behind it: the byte layout,
 * bit-exact round trips through buffers and files, the size protocol of
 * moe_model_save_buffer, saving that keeps what the path is (mode, owner,
 * links, FIFOs and devices), and a loader that rejects every damaged,
 * truncated, crafted or random byte string with MOE_ERR_FORMAT without
 * crashing, over-reading or allocating what the input does not justify.
 *
 * The test keeps its own serializer and CRC (bit by bit) so that the format
 * is checked against its specification, not against itself.
 */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with mknod, for the device-node tests */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "moe/moe.h"
#include "common/checksum.h"
#include "model/model_impl.h"
#include "support/runner.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static char not_a_handle;
#define BOGUS_MODEL ((moe_model_t *)(void *)&not_a_handle)

/* ------------------------------------------------------------------------ */
/* Test-local tools: random numbers, CRC, the format written out by hand    */
/* ------------------------------------------------------------------------ */

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static size_t random_below(uint64_t *state, size_t bound)
{
    return (size_t)(next_random(state) % bound);
}

/* Any finite double: half from raw bit patterns (subnormals, huge, -0.0), half ordinary. */
static double random_finite(uint64_t *state)
{
    if (next_random(state) & 1) {
        for (;;) {
            uint64_t bits = next_random(state);
            double value;
            memcpy(&value, &bits, sizeof value);
            if (isfinite(value))
                return value;
        }
    }
    return ((double)(next_random(state) >> 11) / 9007199254740992.0 - 0.5) * 20.0;
}

static double random_positive(uint64_t *state)
{
    for (;;) {
        double value = fabs(random_finite(state));
        if (value > 0.0)
            return value;
    }
}

/* CRC-32 one bit at a time, straight from the definition. */
static uint32_t reference_crc(const unsigned char *bytes, size_t size)
{
    uint32_t reg = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i) {
        reg ^= bytes[i];
        for (int bit = 0; bit < 8; ++bit)
            reg = (reg & 1u) ? (reg >> 1) ^ 0xEDB88320u : reg >> 1;
    }
    return ~reg;
}

static void put32(unsigned char *at, uint32_t value)
{
    for (int i = 0; i < 4; ++i)
        at[i] = (unsigned char)(value >> (8 * i));
}

static void put64(unsigned char *at, uint64_t value)
{
    for (int i = 0; i < 8; ++i)
        at[i] = (unsigned char)(value >> (8 * i));
}

static uint64_t get64(const unsigned char *at)
{
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i)
        value |= (uint64_t)at[i] << (8 * i);
    return value;
}

static const unsigned char MAGIC[8] = {0x89, 'M', 'O', 'E', '\r', '\n', 0x1A, '\n'};
enum { HEADER = 64, TRAILER = 4 };

/* Every field of a model file, spelled out. */
typedef struct image {
    unsigned char magic[8];
    uint32_t version, flags, family, link, intercept, reserved;
    uint64_t n_experts, n_features, n_classes;
    int size_field_delta; /* added to the true size in the size field */
    int crc_delta;        /* added to the true CRC */
    const double *values;
    size_t n_values;
} image;

static image gaussian_image(uint64_t n_experts, uint64_t n_features, uint32_t intercept,
                            const double *values, size_t n_values)
{
    image im;
    memset(&im, 0, sizeof im);
    memcpy(im.magic, MAGIC, sizeof MAGIC);
    im.version = 1;
    im.family = MOE_FAMILY_GAUSSIAN;
    im.link = MOE_LINK_IDENTITY;
    im.intercept = intercept;
    im.n_experts = n_experts;
    im.n_features = n_features;
    im.values = values;
    im.n_values = n_values;
    return im;
}

/* Serialize an image into a malloc'd buffer of exactly *size bytes. */
static unsigned char *build(const image *im, size_t *size)
{
    *size = HEADER + 8 * im->n_values + TRAILER;
    unsigned char *bytes = malloc(*size);
    ck_assert_ptr_nonnull(bytes);
    memcpy(bytes, im->magic, 8);
    put32(bytes + 8, im->version);
    put32(bytes + 12, im->flags);
    put64(bytes + 16, (uint64_t)*size + (uint64_t)(int64_t)im->size_field_delta);
    put32(bytes + 24, im->family);
    put32(bytes + 28, im->link);
    put32(bytes + 32, im->intercept);
    put32(bytes + 36, im->reserved);
    put64(bytes + 40, im->n_experts);
    put64(bytes + 48, im->n_features);
    put64(bytes + 56, im->n_classes);
    for (size_t i = 0; i < im->n_values; ++i) {
        uint64_t bits;
        memcpy(&bits, &im->values[i], sizeof bits);
        put64(bytes + HEADER + 8 * i, bits);
    }
    put32(bytes + *size - TRAILER,
          reference_crc(bytes, *size - TRAILER) + (uint32_t)im->crc_delta);
    return bytes;
}

/* Recompute size field and CRC after bytes were changed. */
static void fix_up(unsigned char *bytes, size_t size, int fix_size)
{
    if (size < HEADER + TRAILER)
        return;
    if (fix_size)
        put64(bytes + 16, size);
    put32(bytes + size - TRAILER, reference_crc(bytes, size - TRAILER));
}

/* A copy in its own allocation of exactly `size` bytes, so reads past it are caught. */
static unsigned char *exact_copy(const unsigned char *bytes, size_t size)
{
    unsigned char *copy = malloc(size > 0 ? size : 1);
    ck_assert_ptr_nonnull(copy);
    if (size > 0)
        memcpy(copy, bytes, size);
    return copy;
}

/* ------------------------------------------------------------------------ */
/* Models                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct shape {
    size_t n_experts, n_features;
    int intercept;
} shape;

static const shape shapes[] = {
    {1, 0, 1}, {1, 1, 0}, {1, 1, 1}, {1, 7, 0}, {1, 7, 1},
    {2, 0, 1}, {2, 1, 0}, {2, 1, 1}, {2, 7, 0}, {2, 7, 1},
    {5, 0, 1}, {5, 1, 0}, {5, 1, 1}, {5, 7, 0}, {5, 7, 1},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

/* All parameters of a model, in the order of the format. */
typedef struct parameters {
    size_t gate_size, experts_size, n_experts;
    double *values; /* gate, experts, variances */
    size_t count;
} parameters;

static parameters get_parameters(const moe_model_t *model)
{
    parameters p;
    p.n_experts = moe_model_n_experts(model);
    p.gate_size = p.n_experts * moe_model_n_inputs(model);
    p.experts_size = p.n_experts * moe_model_expert_rows(model) * moe_model_n_inputs(model);
    p.count = p.gate_size + p.experts_size + p.n_experts;
    p.values = malloc(p.count * sizeof(double));
    ck_assert_ptr_nonnull(p.values);
    EXPECT_STATUS(moe_model_get_gate(model, p.values, p.gate_size), MOE_OK);
    EXPECT_STATUS(moe_model_get_experts(model, p.values + p.gate_size, p.experts_size), MOE_OK);
    EXPECT_STATUS(
        moe_model_get_variances(model, p.values + p.gate_size + p.experts_size, p.n_experts),
        MOE_OK);
    return p;
}

/*
 * A Gaussian model of the given shape with random finite parameters. The
 * gate's last row is zero on input, so re-referencing leaves the random
 * values exactly as drawn.
 */
static moe_model_t *random_model(const shape *s, uint64_t seed)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = s->n_experts;
    spec.n_features = s->n_features;
    spec.intercept = s->intercept;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    size_t p = s->n_features + (size_t)s->intercept, K = s->n_experts;
    double *gate = calloc(K * p, sizeof(double));
    double *experts = malloc(K * p * sizeof(double));
    double *variances = malloc(K * sizeof(double));
    ck_assert(gate != NULL && experts != NULL && variances != NULL);
    uint64_t state = seed;
    for (size_t i = 0; i < (K - 1) * p; ++i)
        gate[i] = random_finite(&state);
    for (size_t i = 0; i < K * p; ++i)
        experts[i] = random_finite(&state);
    for (size_t k = 0; k < K; ++k)
        variances[k] = random_positive(&state);
    EXPECT_STATUS(moe_model_set_gate(model, gate, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_experts(model, experts, K * p), MOE_OK);
    EXPECT_STATUS(moe_model_set_variances(model, variances, K), MOE_OK);
    /* The values stored are the values drawn. */
    parameters stored = get_parameters(model);
    ck_assert(memcmp(stored.values, gate, K * p * sizeof(double)) == 0);
    ck_assert(memcmp(stored.values + K * p, experts, K * p * sizeof(double)) == 0);
    ck_assert(memcmp(stored.values + 2 * K * p, variances, K * sizeof(double)) == 0);
    free(stored.values);
    free(gate);
    free(experts);
    free(variances);
    return model;
}

static unsigned char *save_to_buffer(const moe_model_t *model, size_t *size)
{
    size_t written = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &written), MOE_OK);
    ck_assert_uint_gt(written, 0);
    unsigned char *bytes = malloc(written);
    ck_assert_ptr_nonnull(bytes);
    size_t again = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, bytes, written, &again), MOE_OK);
    ck_assert_uint_eq(again, written);
    *size = written;
    return bytes;
}

/* Same structure and bit-identical parameters. */
static void assert_same_model(const moe_model_t *a, const moe_model_t *b)
{
    ck_assert_int_eq(moe_model_family(a), moe_model_family(b));
    ck_assert_int_eq(moe_model_link(a), moe_model_link(b));
    ck_assert_uint_eq(moe_model_n_experts(a), moe_model_n_experts(b));
    ck_assert_uint_eq(moe_model_n_features(a), moe_model_n_features(b));
    ck_assert_uint_eq(moe_model_n_classes(a), moe_model_n_classes(b));
    ck_assert_int_eq(moe_model_has_intercept(a), moe_model_has_intercept(b));
    parameters pa = get_parameters(a), pb = get_parameters(b);
    ck_assert_uint_eq(pa.count, pb.count);
    ck_assert_msg(memcmp(pa.values, pb.values, pa.gate_size * sizeof(double)) == 0,
                  "gate differs");
    ck_assert_msg(memcmp(pa.values + pa.gate_size, pb.values + pb.gate_size,
                         pa.experts_size * sizeof(double)) == 0,
                  "experts differ");
    ck_assert_msg(memcmp(pa.values + pa.gate_size + pa.experts_size,
                         pb.values + pb.gate_size + pb.experts_size,
                         pa.n_experts * sizeof(double)) == 0,
                  "variances differ");
    free(pa.values);
    free(pb.values);
}

/* Load must fail with MOE_ERR_FORMAT, leave *out NULL and say why. */
static void expect_format_error(const unsigned char *bytes, size_t size, const char *needle,
                                const char *what)
{
    unsigned char *copy = exact_copy(bytes, size);
    moe_model_t *out = BOGUS_MODEL;
    moe_status status = moe_model_load_buffer(&out, copy, size);
    ck_assert_msg(status == MOE_ERR_FORMAT, "%s: status %d (%s), message '%s'", what,
                  (int)status, moe_strerror(status), moe_last_error());
    ck_assert_msg(out == NULL, "%s: *out was not set to NULL", what);
    ck_assert_msg(moe_last_error()[0] != '\0', "%s: no message", what);
    if (needle != NULL)
        ck_assert_msg(strstr(moe_last_error(), needle) != NULL,
                      "%s: message '%s' does not mention '%s'", what, moe_last_error(), needle);
    free(copy);
}

static void expect_image_rejected(const image *im, const char *needle, const char *what)
{
    size_t size;
    unsigned char *bytes = build(im, &size);
    expect_format_error(bytes, size, needle, what);
    free(bytes);
}

/* Temporary directory for file tests. */
static void make_directory(char *path, size_t size)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    snprintf(path, size, "%s/moe_test_io_XXXXXX", base);
    ck_assert_msg(mkdtemp(path) != NULL, "mkdtemp: %s", strerror(errno));
}

/* Number of entries in a directory, "." and ".." excluded. */
static int count_entries(const char *path)
{
    DIR *dir = opendir(path);
    ck_assert_ptr_nonnull(dir);
    int count = 0;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, ".."))
            ++count;
    closedir(dir);
    return count;
}

static void write_bytes(const char *path, const unsigned char *bytes, size_t size)
{
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(bytes, 1, size, file), size);
    ck_assert_int_eq(fclose(file), 0);
}

static unsigned char *read_bytes(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    ck_assert_ptr_nonnull(file);
    unsigned char *bytes = malloc(1 << 20);
    ck_assert_ptr_nonnull(bytes);
    *size = fread(bytes, 1, 1 << 20, file);
    fclose(file);
    return bytes;
}

/* ------------------------------------------------------------------------ */
/* CRC-32                                                                   */
/* ------------------------------------------------------------------------ */

START_TEST(crc32_matches_definition)
{
    ck_assert_uint_eq(moe_crc32("123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(moe_crc32("", 0), 0u);
    ck_assert_uint_eq(moe_crc32("a", 1), 0xE8B7BE43u);
    ck_assert_uint_eq(moe_crc32("The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);

    uint64_t state = 7;
    unsigned char data[1000];
    for (size_t i = 0; i < sizeof data; ++i)
        data[i] = (unsigned char)next_random(&state);
    for (int trial = 0; trial < 200; ++trial) {
        size_t length = random_below(&state, sizeof data + 1);
        uint32_t whole = moe_crc32(data, length);
        ck_assert_uint_eq(whole, reference_crc(data, length));
        /* Any split into two pieces gives the same checksum. */
        size_t split = random_below(&state, length + 1);
        uint32_t pieces = moe_crc32_update(moe_crc32_update(0, data, split), data + split,
                                           length - split);
        ck_assert_uint_eq(pieces, whole);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Layout and round trips                                                   */
/* ------------------------------------------------------------------------ */

/* The library writes exactly the bytes the specification (the test's own serializer) says. */
START_TEST(layout_matches_specification)
{
    for (int s = 0; s < N_SHAPES; ++s) {
        moe_model_t *model = random_model(&shapes[s], 100 + (uint64_t)s);
        size_t size;
        unsigned char *saved = save_to_buffer(model, &size);
        parameters p = get_parameters(model);
        image im = gaussian_image(shapes[s].n_experts, shapes[s].n_features,
                                  (uint32_t)shapes[s].intercept, p.values, p.count);
        size_t expected_size;
        unsigned char *expected = build(&im, &expected_size);
        ck_assert_uint_eq(size, expected_size);
        ck_assert_uint_eq(size, 68 + 8 * p.count);
        for (size_t i = 0; i < size; ++i)
            ck_assert_msg(saved[i] == expected[i], "shape %d: byte %zu is %02x, expected %02x",
                          s, i, saved[i], expected[i]);
        free(expected);
        free(saved);
        free(p.values);
        moe_model_free(model);
    }
    /* One case written out literally: K = 1, d = 0, intercept, all parameters neutral. */
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 1;
    spec.n_features = 0;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    static const unsigned char literal[92] = {
        0x89, 'M', 'O', 'E', '\r', '\n', 0x1A, '\n',  /* signature */
        1, 0, 0, 0, 0, 0, 0, 0,                       /* version 1, flags 0 */
        92, 0, 0, 0, 0, 0, 0, 0,                      /* total size */
        1, 0, 0, 0, 0, 0, 0, 0,                       /* gaussian, identity */
        1, 0, 0, 0, 0, 0, 0, 0,                       /* intercept, reserved */
        1, 0, 0, 0, 0, 0, 0, 0,                       /* K = 1 */
        0, 0, 0, 0, 0, 0, 0, 0,                       /* d = 0 */
        0, 0, 0, 0, 0, 0, 0, 0,                       /* C = 0 */
        0, 0, 0, 0, 0, 0, 0, 0,                       /* gate 0.0 */
        0, 0, 0, 0, 0, 0, 0, 0,                       /* expert 0.0 */
        0, 0, 0, 0, 0, 0, 0xF0, 0x3F,                 /* variance 1.0 */
        0, 0, 0, 0};                                  /* CRC, filled in below */
    unsigned char expected[92];
    memcpy(expected, literal, sizeof expected);
    put32(expected + 88, reference_crc(expected, 88));
    size_t size;
    unsigned char *saved = save_to_buffer(model, &size);
    ck_assert_uint_eq(size, sizeof expected);
    ck_assert(memcmp(saved, expected, sizeof expected) == 0);
    free(saved);
    moe_model_free(model);
}
END_TEST

START_TEST(buffer_round_trip_is_bit_exact)
{
    for (int s = 0; s < N_SHAPES; ++s) {
        for (uint64_t seed = 0; seed < 4; ++seed) {
            moe_model_t *model = random_model(&shapes[s], 1000 * (uint64_t)s + seed);
            size_t size;
            unsigned char *first = save_to_buffer(model, &size);
            unsigned char *copy = exact_copy(first, size);
            moe_model_t *loaded = BOGUS_MODEL;
            EXPECT_STATUS(moe_model_load_buffer(&loaded, copy, size), MOE_OK);
            ck_assert_ptr_nonnull(loaded);
            ck_assert_ptr_ne(loaded, BOGUS_MODEL);
            ck_assert_str_eq(moe_model_last_error(loaded), "");
            assert_same_model(model, loaded);
            /* The input is not modified. */
            ck_assert(memcmp(copy, first, size) == 0);
            /* save -> load -> save gives the same bytes. */
            size_t size2;
            unsigned char *second = save_to_buffer(loaded, &size2);
            ck_assert_uint_eq(size2, size);
            ck_assert(memcmp(first, second, size) == 0);
            free(second);
            free(copy);
            free(first);
            moe_model_free(loaded);
            moe_model_free(model);
        }
    }
}
END_TEST

START_TEST(file_round_trip_is_bit_exact)
{
    char directory[4096], path[4200];
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/model.moe", directory);
    for (int s = 0; s < N_SHAPES; ++s) {
        moe_model_t *model = random_model(&shapes[s], 5000 + (uint64_t)s);
        EXPECT_STATUS(moe_model_save(model, path), MOE_OK);
        /* Saving replaced the previous file; nothing else is left in the directory. */
        ck_assert_int_eq(count_entries(directory), 1);
        size_t file_size, buffer_size;
        unsigned char *file_bytes = read_bytes(path, &file_size);
        unsigned char *buffer_bytes = save_to_buffer(model, &buffer_size);
        ck_assert_uint_eq(file_size, buffer_size);
        ck_assert(memcmp(file_bytes, buffer_bytes, file_size) == 0);
        moe_model_t *loaded = BOGUS_MODEL;
        EXPECT_STATUS(moe_model_load(&loaded, path), MOE_OK);
        assert_same_model(model, loaded);
        free(file_bytes);
        free(buffer_bytes);
        moe_model_free(loaded);
        moe_model_free(model);
    }
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(rmdir(directory), 0);
}
END_TEST

/* A negative zero in the reference gate row is a zero: accepted and kept bit for bit. */
START_TEST(negative_zero_reference_row_round_trips)
{
    double values[] = {0.25, -0.0, 1.5, -2.0, 0.5, 3.0}; /* gate 2x1, experts 2x1, variances */
    image im = gaussian_image(2, 0, 1, values, 6);
    size_t size;
    unsigned char *bytes = build(&im, &size);
    moe_model_t *loaded = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&loaded, bytes, size), MOE_OK);
    size_t size2;
    unsigned char *again = save_to_buffer(loaded, &size2);
    ck_assert_uint_eq(size2, size);
    ck_assert(memcmp(again, bytes, size) == 0);
    free(again);
    free(bytes);
    moe_model_free(loaded);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Damaged input                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(every_truncation_is_rejected)
{
    static const shape cases[] = {{1, 0, 1}, {2, 1, 1}, {5, 7, 0}};
    size_t total = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        moe_model_t *model = random_model(&cases[c], 42 + c);
        size_t size;
        unsigned char *bytes = save_to_buffer(model, &size);
        for (size_t length = 0; length < size; ++length) {
            char what[96];
            snprintf(what, sizeof what, "shape %zu truncated to %zu of %zu", c, length, size);
            expect_format_error(bytes, length, NULL, what);
            ++total;
        }
        /* One byte too many is not a model either. */
        unsigned char *longer = malloc(size + 1);
        ck_assert_ptr_nonnull(longer);
        memcpy(longer, bytes, size);
        longer[size] = 0;
        expect_format_error(longer, size + 1, "declares", "one byte appended");
        free(longer);
        free(bytes);
        moe_model_free(model);
    }
    ck_assert_uint_eq(total, 92 + 148 + (68 + 8 * (35 + 35 + 5)));
}
END_TEST

START_TEST(every_single_bit_flip_is_rejected)
{
    static const shape cases[] = {{2, 1, 1}, {5, 7, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        moe_model_t *model = random_model(&cases[c], 77 + c);
        size_t size;
        unsigned char *bytes = save_to_buffer(model, &size);
        unsigned char *work = exact_copy(bytes, size);
        for (size_t i = 0; i < size; ++i) {
            for (int bit = 0; bit < 8; ++bit) {
                work[i] ^= (unsigned char)(1u << bit);
                moe_model_t *out = BOGUS_MODEL;
                moe_status status = moe_model_load_buffer(&out, work, size);
                ck_assert_msg(status == MOE_ERR_FORMAT && out == NULL,
                              "shape %zu, byte %zu bit %d: status %d, message '%s'", c, i, bit,
                              (int)status, moe_last_error());
                work[i] ^= (unsigned char)(1u << bit);
            }
        }
        /* The CRC, not luck, does the work: a flip in a coefficient is reported as such. */
        work[HEADER + 3] ^= 0x10;
        expect_format_error(work, size, "checksum", "flipped coefficient bit");
        free(work);
        free(bytes);
        moe_model_free(model);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Crafted headers with valid checksums                                     */
/* ------------------------------------------------------------------------ */

/* A crafted model that is valid loads, and the values come out where the layout puts them. */
START_TEST(crafted_valid_model_loads)
{
    /* K = 2, d = 1, intercept: gate 2x2, experts 2x2, variances 2. */
    double values[] = {0.5, -1.25, 0.0, 0.0, 1.0, 2.0, -3.0, 4.0, 0.5, 2.5};
    image im = gaussian_image(2, 1, 1, values, 10);
    size_t size;
    unsigned char *bytes = build(&im, &size);
    unsigned char *copy = exact_copy(bytes, size);
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_load_buffer(&model, copy, size), MOE_OK);
    ck_assert_uint_eq(moe_model_n_experts(model), 2);
    ck_assert_uint_eq(moe_model_n_features(model), 1);
    ck_assert_int_eq(moe_model_has_intercept(model), 1);
    parameters p = get_parameters(model);
    ck_assert_uint_eq(p.count, 10);
    ck_assert(memcmp(p.values, values, sizeof values) == 0);
    free(p.values);
    free(copy);
    free(bytes);
    moe_model_free(model);
}
END_TEST

static size_t resident_limit_for_test(void)
{
    /* Current virtual size plus 1 GiB (Linux); 0 if unknown. */
    FILE *file = fopen("/proc/self/statm", "r");
    if (file == NULL)
        return 0;
    unsigned long pages = 0;
    int ok = fscanf(file, "%lu", &pages) == 1;
    fclose(file);
    if (!ok)
        return 0;
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE) + ((size_t)1 << 30);
}

START_TEST(absurd_sizes_are_rejected_without_allocating)
{
    /*
     * Outside AddressSanitizer (which needs a huge address space), cap the
     * address space at 1 GiB above the current use: a loader that tried to
     * allocate what a crafted header claims would then get NULL and report
     * MOE_ERR_OUT_OF_MEMORY instead of MOE_ERR_FORMAT.
     */
    struct rlimit saved;
    int limited = 0;
    if (!UNDER_ASAN && getrlimit(RLIMIT_AS, &saved) == 0) {
        size_t cap = resident_limit_for_test();
        if (cap != 0 && (saved.rlim_cur == RLIM_INFINITY || saved.rlim_cur > cap)) {
            struct rlimit lowered = saved;
            lowered.rlim_cur = (rlim_t)cap;
            limited = setrlimit(RLIMIT_AS, &lowered) == 0;
        }
    }

    double few[6] = {0.0, 0.0, 1.0, 1.0, 1.0, 1.0};
    static const struct {
        uint64_t n_experts, n_features;
        uint32_t intercept;
        size_t n_values;
        const char *needle;
        const char *what;
    } cases[] = {
        /* The payload check comes first and must see through 64-bit overflow. */
        {(uint64_t)1 << 40, 1, 1, 6, "parameter bytes", "2^40 experts"},
        {2, (uint64_t)1 << 62, 1, 6, "parameter bytes", "2^62 features"},
        {2, UINT64_MAX, 1, 6, "parameter bytes", "n_features + intercept overflows"},
        {UINT64_MAX, UINT64_MAX, 0, 6, "parameter bytes", "everything at the maximum"},
        /* 2^61 experts x 8 inputs x 8 bytes wraps to exactly 0 in 64 bits. */
        {(uint64_t)1 << 61, 7, 1, 0, "parameter bytes", "size products wrap to zero"},
        {(uint64_t)1 << 61, 7, 1, 6, "parameter bytes", "size products wrap"},
        {(uint64_t)1 << 32, ((uint64_t)1 << 32) - 1, 1, 6, "parameter bytes", "K * p = 2^64"},
        /* Within the structural limits (K * p = 2^31) but a 16 GiB claim with 48 bytes. */
        {4096, ((uint64_t)1 << 19) - 1, 1, 6, "parameter bytes",
         "largest valid structure, tiny payload"},
        {4096, ((uint64_t)1 << 19) - 1, 1, 0, "parameter bytes",
         "largest valid structure, no payload"},
        {0, 1, 1, 0, "n_experts", "zero experts"},
        {2, 0, 0, 0, "parameter bytes", "no inputs at all"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        image im = gaussian_image(cases[c].n_experts, cases[c].n_features, cases[c].intercept,
                                  few, cases[c].n_values);
        expect_image_rejected(&im, cases[c].needle, cases[c].what);
    }
    /* Sizes beyond the structural limits with a payload that exactly matches them. */
    {
        size_t K = 4097, count = 4097 * 2 + 4097; /* d = 0 with intercept: p = 1 */
        double *values = calloc(count, sizeof(double));
        ck_assert_ptr_nonnull(values);
        for (size_t i = 2 * K; i < count; ++i)
            values[i] = 1.0;
        image im = gaussian_image(K, 0, 1, values, count);
        expect_image_rejected(&im, "n_experts", "4097 experts");
        free(values);
    }
    if (limited)
        setrlimit(RLIMIT_AS, &saved);
}
END_TEST

START_TEST(crafted_invalid_models_are_rejected)
{
    /* K = 2, d = 1, intercept: gate 2x2, experts 2x2, variances 2. */
    const double good[10] = {0.5, -1.25, 0.0, 0.0, 1.0, 2.0, -3.0, 4.0, 0.5, 2.5};
    double values[10];
    image im;
#define RESET() (memcpy(values, good, sizeof values), im = gaussian_image(2, 1, 1, values, 10))

    /* Sanity: the unmodified image loads. */
    RESET();
    {
        size_t size;
        unsigned char *bytes = build(&im, &size);
        moe_model_t *model = NULL;
        EXPECT_STATUS(moe_model_load_buffer(&model, bytes, size), MOE_OK);
        moe_model_free(model);
        free(bytes);
    }

    static const struct {
        size_t index;
        double value;
        const char *needle;
    } bad_values[] = {
        {0, NAN, "gate value 0"},       {1, INFINITY, "gate value 1"},
        {4, NAN, "expert value 0"},     {7, -INFINITY, "expert value 3"},
        {8, NAN, "variance value 0"},   {9, INFINITY, "variance value 1"},
        {8, 0.0, "variance 0"},         {9, -0.0, "variance 1"},
        {9, -1.0, "variance 1"},        {8, -4.9e-324, "variance 0"},
        {2, 1e-300, "last (reference)"}, {3, -2.0, "last (reference)"},
        {2, 4.9e-324, "last (reference)"},
    };
    for (size_t c = 0; c < sizeof bad_values / sizeof bad_values[0]; ++c) {
        RESET();
        values[bad_values[c].index] = bad_values[c].value;
        char what[64];
        snprintf(what, sizeof what, "value %zu set to %g", bad_values[c].index,
                 bad_values[c].value);
        expect_image_rejected(&im, bad_values[c].needle, what);
    }
    /* A signalling-NaN pattern and a NaN with payload are NaN as well. */
    {
        static const uint64_t nan_bits[] = {0x7FF0000000000001u, 0xFFF8000000000000u,
                                            0x7FFFFFFFFFFFFFFFu};
        for (size_t c = 0; c < 3; ++c) {
            RESET();
            memcpy(&values[5], &nan_bits[c], sizeof(double));
            expect_image_rejected(&im, "expert value 1", "NaN bit pattern");
        }
    }

    RESET(); im.family = 0;          expect_image_rejected(&im, "family", "family 0");
    RESET(); im.family = 8;          expect_image_rejected(&im, "family", "family 8");
    /* A Gaussian payload under a t header lacks the degrees of freedom. */
    RESET(); im.family = MOE_FAMILY_STUDENT_T;
    expect_image_rejected(&im, "parameter bytes", "t header, Gaussian payload");
    RESET(); im.family = UINT32_MAX; expect_image_rejected(&im, "family", "family 2^32-1");
    /* A Gaussian payload under a classification family's header has the wrong length. */
    RESET(); im.family = MOE_FAMILY_LOGISTIC;
    expect_image_rejected(&im, "parameter bytes", "logistic header, Gaussian payload");
    RESET(); im.family = MOE_FAMILY_MULTINOMIAL; im.n_classes = 3;
    expect_image_rejected(&im, "parameter bytes", "multinomial header, Gaussian payload");
    RESET(); im.family = MOE_FAMILY_POISSON;
    expect_image_rejected(&im, "parameter bytes", "poisson header, Gaussian payload");
    /* The Gaussian links the format defines load, and save back to the same bytes. */
    moe_link gaussian_links[] = {MOE_LINK_SIGMOID, MOE_LINK_RELU};
    for (size_t l = 0; l < 2; ++l) {
        RESET(); im.link = gaussian_links[l];
        size_t size;
        unsigned char *bytes = build(&im, &size);
        moe_model_t *out = BOGUS_MODEL;
        EXPECT_STATUS(moe_model_load_buffer(&out, bytes, size), MOE_OK);
        ck_assert_int_eq((int)moe_model_link(out), (int)gaussian_links[l]);
        size_t again_size;
        unsigned char *again = save_to_buffer(out, &again_size);
        ck_assert(again_size == size && memcmp(again, bytes, size) == 0);
        free(again);
        moe_model_free(out);
        free(bytes);
    }
    RESET(); im.link = 3;            expect_image_rejected(&im, "link", "link 3");
    RESET(); im.link = UINT32_MAX;   expect_image_rejected(&im, "link", "link 2^32-1");
    RESET(); im.intercept = 2;       expect_image_rejected(&im, "intercept", "intercept 2");
    RESET(); im.n_classes = 2;       expect_image_rejected(&im, "n_classes", "classes for gaussian");
    RESET(); im.n_classes = UINT64_MAX;
    expect_image_rejected(&im, "n_classes", "2^64-1 classes for gaussian");
    RESET(); im.version = 4;
    expect_image_rejected(&im, "format version 4 is newer than this libmoe supports",
                          "format version 4");
    RESET(); im.version = 3; /* version 3 promises an inputs section */
    expect_image_rejected(&im, "inputs and names sections", "format version 3 without inputs");
    /* No experts and 2^64 - 2 features: no parameters, and an inputs section of 2 d bytes
       whose size wraps to 0 in 64 bits (the fuzzer's input: the loader allocated 2 d + 1
       bytes before it looked at the experts). */
    RESET(); im.version = 3; im.n_experts = 0; im.n_features = UINT64_MAX - 1; im.intercept = 0;
    im.n_values = 0;
    expect_image_rejected(&im, "more than 2^64", "format version 3 with 2^64 - 2 features");
    RESET(); im.version = 2; /* version 2 promises a names section */
    expect_image_rejected(&im, "names section", "format version 2 without names");
    RESET(); im.version = UINT32_MAX;
    expect_image_rejected(&im, "format version 4294967295 is newer", "format version 2^32-1");
    RESET(); im.version = 0;         expect_image_rejected(&im, "version 0", "format version 0");
    RESET(); im.flags = 1;           expect_image_rejected(&im, "flags", "flags 1");
    RESET(); im.flags = 0x80000000u; expect_image_rejected(&im, "flags", "flags 2^31");
    RESET(); im.reserved = 7;        expect_image_rejected(&im, "reserved", "reserved 7");
    RESET(); im.size_field_delta = 1; expect_image_rejected(&im, "declares", "size field + 1");
    RESET(); im.size_field_delta = -1; expect_image_rejected(&im, "declares", "size field - 1");
    RESET(); im.crc_delta = 1;       expect_image_rejected(&im, "checksum", "checksum + 1");
    RESET(); im.magic[0] = 'X';      expect_image_rejected(&im, "signature", "wrong signature");
    RESET(); im.magic[7] = '\r';     expect_image_rejected(&im, "signature", "damaged signature");
    /* Payload one double short or long of what the header implies (size and CRC consistent). */
    RESET(); im.n_values = 9;        expect_image_rejected(&im, "parameter bytes", "9 values");
    {
        double eleven[11];
        memcpy(eleven, good, sizeof good);
        eleven[10] = 1.0;
        im = gaussian_image(2, 1, 1, eleven, 11);
        expect_image_rejected(&im, "parameter bytes", "11 values");
    }
    /* The header describes K = 3 but the payload is that of K = 2 (and vice versa). */
    RESET(); im.n_experts = 3;       expect_image_rejected(&im, NULL, "K = 3 over K = 2 data");
    RESET(); im.n_features = 0;      expect_image_rejected(&im, NULL, "d = 0 over d = 1 data");
    RESET(); im.intercept = 0;       expect_image_rejected(&im, NULL, "no intercept over p = 2 data");
    /* d = 0 without an intercept is not a valid structure even with a matching (empty) payload. */
    RESET(); im.n_features = 0; im.intercept = 0; im.n_values = 2; values[0] = values[1] = 1.0;
    expect_image_rejected(&im, "invalid model structure", "d = 0 without intercept");
#undef RESET
}
END_TEST

/* Text-mode transfers: CRLF -> LF, LF -> CRLF, and a Ctrl-Z cut. */
START_TEST(text_mode_damage_is_detected)
{
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 3);
    size_t size;
    unsigned char *bytes = save_to_buffer(model, &size);
    unsigned char *damaged = malloc(2 * size);
    ck_assert_ptr_nonnull(damaged);

    size_t n = 0; /* CRLF -> LF */
    for (size_t i = 0; i < size; ++i)
        if (!(bytes[i] == '\r' && i + 1 < size && bytes[i + 1] == '\n'))
            damaged[n++] = bytes[i];
    expect_format_error(damaged, n, "signature", "CRLF -> LF");
    n = 0; /* LF -> CRLF */
    for (size_t i = 0; i < size; ++i) {
        if (bytes[i] == '\n')
            damaged[n++] = '\r';
        damaged[n++] = bytes[i];
    }
    expect_format_error(damaged, n, "signature", "LF -> CRLF");
    expect_format_error(bytes, 6, NULL, "cut at Ctrl-Z");
    free(damaged);
    free(bytes);
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Random input                                                             */
/* ------------------------------------------------------------------------ */

/* Load must either fail with MOE_ERR_FORMAT or give a model that saves to the same bytes. */
static int load_random(const unsigned char *bytes, size_t size, const char *what, size_t trial)
{
    unsigned char *copy = exact_copy(bytes, size);
    moe_model_t *out = BOGUS_MODEL;
    moe_status status = moe_model_load_buffer(&out, copy, size);
    int accepted = status == MOE_OK;
    if (accepted) {
        ck_assert_ptr_nonnull(out);
        ck_assert_ptr_ne(out, BOGUS_MODEL);
        size_t size2;
        unsigned char *again = save_to_buffer(out, &size2);
        ck_assert_msg(size2 == size && memcmp(again, bytes, size) == 0,
                      "%s %zu: accepted bytes are not the model's serialization", what, trial);
        free(again);
        moe_model_free(out);
    } else {
        ck_assert_msg(status == MOE_ERR_FORMAT, "%s %zu: status %d (%s): %s", what, trial,
                      (int)status, moe_strerror(status), moe_last_error());
        ck_assert_msg(out == NULL, "%s %zu: *out not NULL", what, trial);
    }
    free(copy);
    return accepted;
}

START_TEST(random_bytes_never_crash)
{
    uint64_t state = 20240601;
    unsigned char buffer[1024];
    /* Plain random strings, some starting with the signature and a plausible header. */
    for (size_t trial = 0; trial < 3000; ++trial) {
        size_t size = random_below(&state, sizeof buffer + 1);
        for (size_t i = 0; i < size; ++i)
            buffer[i] = (unsigned char)next_random(&state);
        int variant = (int)(trial % 3);
        if (variant >= 1 && size >= 8)
            memcpy(buffer, MAGIC, 8);
        if (variant == 2 && size >= HEADER + TRAILER) {
            put32(buffer + 8, 1);
            fix_up(buffer, size, 1);
        }
        ck_assert_int_eq(load_random(buffer, size, "random", trial), 0);
    }
}
END_TEST

START_TEST(random_headers_never_crash)
{
    /* Valid signature, version, size and CRC; header fields from a list of edge values. */
    static const uint64_t edges[] = {0,  1,  2,  3,  4,  5, 7, 8, 255, 4096, 4097,
                                     (uint64_t)1 << 24, ((uint64_t)1 << 24) + 1,
                                     (uint64_t)1 << 31, (uint64_t)1 << 32,
                                     (uint64_t)1 << 61, (uint64_t)1 << 63, UINT64_MAX};
    enum { N_EDGES = sizeof edges / sizeof edges[0] };
    uint64_t state = 99;
    unsigned char buffer[HEADER + 8 * 64 + TRAILER];
    size_t accepted = 0;
    for (size_t trial = 0; trial < 4000; ++trial) {
        size_t n_values = random_below(&state, 65);
        size_t size = HEADER + 8 * n_values + TRAILER;
        memset(buffer, 0, sizeof buffer);
        memcpy(buffer, MAGIC, 8);
        put32(buffer + 8, 1);
        put32(buffer + 24, (uint32_t)(random_below(&state, 4) ? 1 : edges[random_below(&state, N_EDGES)]));
        put32(buffer + 28, (uint32_t)(random_below(&state, 4) ? 0 : edges[random_below(&state, N_EDGES)]));
        put32(buffer + 32, (uint32_t)random_below(&state, 3));
        if (random_below(&state, 8) == 0)
            put32(buffer + 36 - 24 * (int)random_below(&state, 2), (uint32_t)next_random(&state));
        put64(buffer + 40, random_below(&state, 2) ? random_below(&state, 6) : edges[random_below(&state, N_EDGES)]);
        put64(buffer + 48, random_below(&state, 2) ? random_below(&state, 9) : edges[random_below(&state, N_EDGES)]);
        put64(buffer + 56, random_below(&state, 4) ? 0 : edges[random_below(&state, N_EDGES)]);
        /* Mostly the payload length a small Gaussian structure implies, with a zero last row. */
        uint64_t K = get64(buffer + 40), d = get64(buffer + 48);
        uint64_t p = d + (buffer[32] & 1u);
        int matched = 0;
        if (K >= 1 && K <= 64 && p <= 64 && K * (2 * p + 1) <= 64 && random_below(&state, 4)) {
            n_values = (size_t)(K * (2 * p + 1));
            size = HEADER + 8 * n_values + TRAILER;
            matched = 1;
        }
        for (size_t i = 0; i < n_values; ++i) {
            double value = random_below(&state, 8) ? random_positive(&state) : 0.0;
            if (random_below(&state, 50) == 0)
                value = random_below(&state, 2) ? NAN : -INFINITY;
            if (matched && i >= (K - 1) * p && i < K * p && random_below(&state, 8))
                value = 0.0;
            uint64_t bits;
            memcpy(&bits, &value, sizeof bits);
            put64(buffer + HEADER + 8 * i, bits);
        }
        fix_up(buffer, size, 1);
        accepted += (size_t)load_random(buffer, size, "header", trial);
    }
    /* The generator reaches the parameter checks and past them. */
    ck_assert_uint_gt(accepted, 0);
}
END_TEST

START_TEST(mutated_models_never_crash)
{
    /* Valid models with random byte edits, then (mostly) a consistent size field and CRC. */
    uint64_t state = 31337;
    size_t accepted = 0, rejected = 0;
    for (size_t trial = 0; trial < 3000; ++trial) {
        shape s = shapes[random_below(&state, N_SHAPES)];
        moe_model_t *model = random_model(&s, next_random(&state));
        size_t size;
        unsigned char *bytes = save_to_buffer(model, &size);
        moe_model_free(model);
        size_t capacity = size + 64;
        unsigned char *work = malloc(capacity);
        ck_assert_ptr_nonnull(work);
        memcpy(work, bytes, size);
        memset(work + size, 0, capacity - size);
        size_t length = size;
        int edits = 1 + (int)random_below(&state, 4);
        for (int e = 0; e < edits; ++e) {
            switch (random_below(&state, 5)) {
            case 0: /* a random byte anywhere */
                work[random_below(&state, length)] = (unsigned char)next_random(&state);
                break;
            case 1: /* a small value into a header field */
                work[8 + 4 * random_below(&state, 14)] = (unsigned char)random_below(&state, 6);
                break;
            case 2: /* a byte of a coefficient (can make NaN, Inf, huge, tiny) */
                if (length > HEADER + TRAILER)
                    work[HEADER + random_below(&state, length - HEADER - TRAILER)] =
                        (unsigned char)next_random(&state);
                break;
            case 3: /* shorter or longer */
                length = HEADER + TRAILER + random_below(&state, capacity - HEADER - TRAILER + 1);
                break;
            default: /* exponent bits of a coefficient */
                if (length >= HEADER + TRAILER + 8) {
                    size_t v = random_below(&state, (length - HEADER - TRAILER) / 8);
                    work[HEADER + 8 * v + 7] ^= 0x7F;
                }
                break;
            }
        }
        int fix = (int)random_below(&state, 10);
        if (fix > 0)
            fix_up(work, length, fix > 1);
        if (load_random(work, length, "mutation", trial))
            ++accepted;
        else
            ++rejected;
        free(work);
        free(bytes);
    }
    ck_assert_uint_gt(accepted, 100);
    ck_assert_uint_gt(rejected, 100);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Files                                                                    */
/* ------------------------------------------------------------------------ */

START_TEST(file_errors)
{
    char directory[4096], path[4200], sub[4200];
    make_directory(directory, sizeof directory);
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 11);
    moe_model_t *out;

    /* Nonexistent file. */
    snprintf(path, sizeof path, "%s/missing.moe", directory);
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load(&out, path), MOE_ERR_IO);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(moe_last_error(), "missing.moe") != NULL, "'%s'", moe_last_error());
    ck_assert_msg(strstr(moe_last_error(), strerror(ENOENT)) != NULL, "'%s'", moe_last_error());

    /* Saving into a directory that does not exist leaves nothing anywhere. */
    snprintf(path, sizeof path, "%s/no/such/dir/model.moe", directory);
    EXPECT_STATUS(moe_model_save(model, path), MOE_ERR_IO);
    ck_assert_int_eq(count_entries(directory), 0);
    EXPECT_STATUS(moe_model_save(model, "/nonexistent-directory-of-libmoe/model.moe"), MOE_ERR_IO);

    /* Saving over a directory is refused; nothing is created. */
    snprintf(sub, sizeof sub, "%s/sub", directory);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    EXPECT_STATUS(moe_model_save(model, sub), MOE_ERR_IO);
    ck_assert_int_eq(count_entries(directory), 1);
    ck_assert_int_eq(count_entries(sub), 0);
    struct stat info;
    ck_assert_int_eq(stat(sub, &info), 0);
    ck_assert(S_ISDIR(info.st_mode));

    /* Loading a directory. */
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load(&out, sub), MOE_ERR_IO);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(rmdir(sub), 0);

    /* An existing file is replaced as a whole. */
    snprintf(path, sizeof path, "%s/model.moe", directory);
    unsigned char junk[5000];
    memset(junk, 'j', sizeof junk);
    write_bytes(path, junk, sizeof junk);
    EXPECT_STATUS(moe_model_save(model, path), MOE_OK);
    size_t file_size, size;
    unsigned char *file_bytes = read_bytes(path, &file_size);
    unsigned char *bytes = save_to_buffer(model, &size);
    ck_assert_uint_eq(file_size, size);
    ck_assert(memcmp(file_bytes, bytes, size) == 0);
    ck_assert_int_eq(count_entries(directory), 1);
    free(file_bytes);

    /* Empty, truncated, extended and garbage files: format errors naming the file. */
    static const struct {
        size_t keep;
        size_t extra;
        const char *what;
    } variants[] = {{0, 0, "empty"}, {1, 0, "one byte"}, {67, 0, "header only"},
                    {(size_t)-1, 1, "one byte extra"}, {(size_t)-1, 10000, "10000 bytes extra"},
                    {(size_t)-2, 0, "one byte short"}};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
        size_t keep = variants[v].keep;
        if (keep == (size_t)-1)
            keep = size;
        else if (keep == (size_t)-2)
            keep = size - 1;
        size_t total = keep + variants[v].extra;
        unsigned char *content = calloc(total + 1, 1);
        ck_assert_ptr_nonnull(content);
        memcpy(content, bytes, keep);
        write_bytes(path, content, total);
        out = BOGUS_MODEL;
        moe_status status = moe_model_load(&out, path);
        ck_assert_msg(status == MOE_ERR_FORMAT, "%s: %d (%s)", variants[v].what, (int)status,
                      moe_last_error());
        ck_assert_ptr_null(out);
        ck_assert_msg(strstr(moe_last_error(), "model.moe") != NULL, "%s: '%s'",
                      variants[v].what, moe_last_error());
        free(content);
    }
    write_bytes(path, junk, sizeof junk);
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load(&out, path), MOE_ERR_FORMAT);
    ck_assert_ptr_null(out);

    /*
     * A file over 1 GiB is refused before it is read, even when it starts
     * like a model that declares that size (sparse, so it costs no disk).
     */
    {
        unsigned char header[HEADER];
        memcpy(header, bytes, HEADER);
        put64(header + 16, ((uint64_t)1 << 30) + 1);
        write_bytes(path, header, HEADER);
        int fd = open(path, O_WRONLY);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, ((off_t)1 << 30) + 1), 0);
        ck_assert_int_eq(close(fd), 0);
        out = BOGUS_MODEL;
        EXPECT_STATUS(moe_model_load(&out, path), MOE_ERR_FORMAT);
        ck_assert_ptr_null(out);
        ck_assert_msg(strstr(moe_last_error(), "model file may hold") != NULL, "'%s'",
                      moe_last_error());
        ck_assert_int_eq(unlink(path), 0);
    }

    /* Endless devices are rejected after their first bytes. */
    if (access("/dev/zero", R_OK) == 0) {
        out = BOGUS_MODEL;
        EXPECT_STATUS(moe_model_load(&out, "/dev/zero"), MOE_ERR_FORMAT);
        ck_assert_ptr_null(out);
    }
    if (access("/dev/urandom", R_OK) == 0) {
        out = BOGUS_MODEL;
        EXPECT_STATUS(moe_model_load(&out, "/dev/urandom"), MOE_ERR_FORMAT);
        ck_assert_ptr_null(out);
    }
    free(bytes);
    moe_model_free(model);
    ck_assert_int_eq(count_entries(directory), 0);
    ck_assert_int_eq(rmdir(directory), 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Saving keeps what the path is (moe_model_save in include/moe/model.h)     */
/* ------------------------------------------------------------------------ */

/* The bytes a save must write, taken without the size query so these tests check saving only. */
static unsigned char *model_bytes(const moe_model_t *model, size_t *size)
{
    size_t capacity = 1 << 20;
    unsigned char *bytes = malloc(capacity);
    ck_assert_ptr_nonnull(bytes);
    EXPECT_STATUS(moe_model_save_buffer(model, bytes, capacity, size), MOE_OK);
    return bytes;
}

static void assert_file_holds(const char *path, const moe_model_t *model)
{
    size_t expected_size, file_size;
    unsigned char *expected = model_bytes(model, &expected_size);
    unsigned char *file = read_bytes(path, &file_size);
    ck_assert_msg(file_size == expected_size && memcmp(file, expected, file_size) == 0,
                  "'%s' does not hold the model (%zu bytes, expected %zu)", path, file_size,
                  expected_size);
    free(file);
    free(expected);
}

static void assert_file_is(const char *path, const unsigned char *bytes, size_t size)
{
    size_t file_size;
    unsigned char *file = read_bytes(path, &file_size);
    ck_assert_msg(file_size == size && memcmp(file, bytes, size) == 0,
                  "'%s' changed (%zu bytes, expected %zu)", path, file_size, size);
    free(file);
}

static struct stat status_of(const char *path)
{
    struct stat info;
    ck_assert_msg(lstat(path, &info) == 0, "lstat '%s': %s", path, strerror(errno));
    return info;
}

static mode_t permissions_of(const char *path)
{
    return status_of(path).st_mode & 07777;
}

/* Remove a test directory and every entry in it (no subdirectories). */
static void remove_directory(const char *directory)
{
    DIR *dir = opendir(directory);
    ck_assert_ptr_nonnull(dir);
    char path[4400];
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
        ck_assert_msg(unlink(path) == 0, "unlink '%s': %s", path, strerror(errno));
    }
    closedir(dir);
    ck_assert_int_eq(rmdir(directory), 0);
}

/* Files may grow to `bytes` at most (writes beyond fail with EFBIG); 0 lifts the limit. */
static struct rlimit saved_size_limit;
static void limit_file_size(rlim_t bytes)
{
    if (bytes == 0) {
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved_size_limit), 0);
        signal(SIGXFSZ, SIG_DFL);
        return;
    }
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved_size_limit), 0);
    signal(SIGXFSZ, SIG_IGN); /* the write then fails instead of killing the process */
    struct rlimit limit = saved_size_limit;
    limit.rlim_cur = bytes;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
}

START_TEST(save_keeps_mode_and_owner)
{
    char directory[4096], path[4200];
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/model.moe", directory);
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 21);
    static const mode_t modes[] = {0600, 0640, 0604, 0755};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; ++m) {
        write_bytes(path, (const unsigned char *)"old", 3);
        ck_assert_int_eq(chmod(path, modes[m]), 0);
        EXPECT_STATUS(moe_model_save(model, path), MOE_OK);
        ck_assert_msg(permissions_of(path) == modes[m], "mode %o became %o",
                      (unsigned)modes[m], (unsigned)permissions_of(path));
        assert_file_holds(path, model);
        ck_assert_int_eq(count_entries(directory), 1);
    }
    /* Only root can give a file away, so only root can check that the owner is kept. */
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(path, 4321, 8765), 0);
        EXPECT_STATUS(moe_model_save(model, path), MOE_OK);
        struct stat info = status_of(path);
        ck_assert_uint_eq(info.st_uid, 4321);
        ck_assert_uint_eq(info.st_gid, 8765);
    }
    moe_model_free(model);
    remove_directory(directory);
}
END_TEST

START_TEST(save_new_file_follows_umask)
{
    char directory[4096], path[4200];
    make_directory(directory, sizeof directory);
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 22);
    static const mode_t masks[] = {022, 077, 027, 0};
    mode_t previous = umask(0);
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; ++m) {
        snprintf(path, sizeof path, "%s/new%zu.moe", directory, m);
        umask(masks[m]);
        moe_status status = moe_model_save(model, path);
        umask(previous);
        EXPECT_STATUS(status, MOE_OK);
        ck_assert_msg(permissions_of(path) == (0666 & ~masks[m]), "umask %03o gave mode %o",
                      (unsigned)masks[m], (unsigned)permissions_of(path));
        assert_file_holds(path, model);
    }
    ck_assert_int_eq(count_entries(directory), 4);
    moe_model_free(model);
    remove_directory(directory);
}
END_TEST

START_TEST(save_follows_symbolic_links)
{
    char directory[4096], real[4200], link1[4200], link2[4200], path[4300], target[4300];
    make_directory(directory, sizeof directory);
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 23);

    /* A chain: absolute link -> relative link -> private file. */
    snprintf(real, sizeof real, "%s/real.moe", directory);
    snprintf(link1, sizeof link1, "%s/near", directory);
    snprintf(link2, sizeof link2, "%s/far", directory);
    write_bytes(real, (const unsigned char *)"old", 3);
    ck_assert_int_eq(chmod(real, 0600), 0);
    ck_assert_int_eq(symlink("real.moe", link1), 0);
    ck_assert_int_eq(symlink(link1, link2), 0);
    EXPECT_STATUS(moe_model_save(model, link2), MOE_OK);
    ck_assert(S_ISLNK(status_of(link2).st_mode));
    ck_assert(S_ISLNK(status_of(link1).st_mode));
    ck_assert(S_ISREG(status_of(real).st_mode));
    ck_assert_uint_eq(permissions_of(real), 0600);
    assert_file_holds(real, model);
    ck_assert_int_eq(count_entries(directory), 3);

    /* A relative link is read from the directory that holds it, not the current one. */
    snprintf(path, sizeof path, "%s/sub", directory);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub/up", directory);
    ck_assert_int_eq(symlink("../real.moe", path), 0);
    moe_model_t *other = random_model(&s, 24);
    EXPECT_STATUS(moe_model_save(other, path), MOE_OK);
    ck_assert(S_ISLNK(status_of(path).st_mode));
    assert_file_holds(real, other);
    snprintf(target, sizeof target, "%s/sub", directory);
    ck_assert_int_eq(count_entries(target), 1);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(rmdir(target), 0);

    /* A link to a file not there yet: the file is made, the link stays. */
    snprintf(path, sizeof path, "%s/dangling", directory);
    snprintf(target, sizeof target, "%s/made.moe", directory);
    ck_assert_int_eq(symlink("made.moe", path), 0);
    EXPECT_STATUS(moe_model_save(model, path), MOE_OK);
    ck_assert(S_ISLNK(status_of(path).st_mode));
    ck_assert(S_ISREG(status_of(target).st_mode));
    assert_file_holds(target, model);
    ck_assert_int_eq(count_entries(directory), 5);

    /* A link into a directory that does not exist, and a loop: errors, links untouched. */
    snprintf(path, sizeof path, "%s/nowhere", directory);
    ck_assert_int_eq(symlink("missing/model.moe", path), 0);
    EXPECT_STATUS(moe_model_save(model, path), MOE_ERR_IO);
    ck_assert(S_ISLNK(status_of(path).st_mode));
    snprintf(path, sizeof path, "%s/loop1", directory);
    snprintf(target, sizeof target, "%s/loop2", directory);
    ck_assert_int_eq(symlink("loop2", path), 0);
    ck_assert_int_eq(symlink("loop1", target), 0);
    EXPECT_STATUS(moe_model_save(model, path), MOE_ERR_IO);
    ck_assert_msg(strstr(moe_last_error(), "symbolic links") != NULL, "'%s'", moe_last_error());
    ck_assert(S_ISLNK(status_of(path).st_mode));
    ck_assert(S_ISLNK(status_of(target).st_mode));
    ck_assert_int_eq(count_entries(directory), 8);

    moe_model_free(other);
    moe_model_free(model);
    remove_directory(directory);
}
END_TEST

START_TEST(save_keeps_hard_links)
{
    char directory[4096], first[4200], second[4200];
    make_directory(directory, sizeof directory);
    snprintf(first, sizeof first, "%s/first.moe", directory);
    snprintf(second, sizeof second, "%s/second.moe", directory);
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 25);

    /* Longer than the model, so the rewrite must also cut the file short. */
    unsigned char junk[5000];
    memset(junk, 'j', sizeof junk);
    write_bytes(first, junk, sizeof junk);
    ck_assert_int_eq(chmod(first, 0640), 0);
    ck_assert_int_eq(link(first, second), 0);
    EXPECT_STATUS(moe_model_save(model, second), MOE_OK);
    struct stat a = status_of(first), b = status_of(second);
    ck_assert_uint_eq(a.st_ino, b.st_ino);
    ck_assert_uint_eq(a.st_nlink, 2);
    ck_assert_uint_eq(a.st_mode & 07777, 0640);
    assert_file_holds(first, model);
    ck_assert_int_eq(count_entries(directory), 2);

    /* A file that cannot grow to the model's size is left as it was. */
    static const unsigned char small[] = "short";
    write_bytes(first, small, sizeof small);
    limit_file_size(64);
    moe_status status = moe_model_save(model, first);
    limit_file_size(0);
    EXPECT_STATUS(status, MOE_ERR_IO);
    assert_file_is(second, small, sizeof small);
    ck_assert_int_eq(count_entries(directory), 2);

    moe_model_free(model);
    remove_directory(directory);
}
END_TEST

/* Reads a FIFO's read end (opened O_NONBLOCK) until the writer closes it, or gives up. */
typedef struct fifo_reader {
    int fd;
    unsigned char *bytes;
    size_t capacity, length;
    int gave_up;
} fifo_reader;

static void *read_fifo(void *argument)
{
    fifo_reader *reader = argument;
    for (;;) {
        struct pollfd wait = {.fd = reader->fd, .events = POLLIN};
        /* Linux reports POLLHUP only once a writer has come and gone. */
        int ready = poll(&wait, 1, 2000);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            reader->gave_up = 1;
            return NULL;
        }
        ssize_t count = read(reader->fd, reader->bytes + reader->length,
                             reader->capacity - reader->length);
        if (count == 0)
            return NULL;
        if (count > 0)
            reader->length += (size_t)count;
        else if (errno != EAGAIN && errno != EINTR) {
            reader->gave_up = 1;
            return NULL;
        }
    }
}

START_TEST(save_writes_through_fifo)
{
    char directory[4096], path[4200];
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/pipe", directory);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    /* 160 kB, more than a pipe holds, so the save has to wait for the reader. */
    shape s = {5, 2000, 1};
    moe_model_t *model = random_model(&s, 26);
    size_t size;
    unsigned char *expected = model_bytes(model, &size);
    ck_assert_uint_gt(size, 65536);

    fifo_reader reader = {.capacity = 2 * size};
    reader.bytes = malloc(reader.capacity);
    ck_assert_ptr_nonnull(reader.bytes);
    reader.fd = open(path, O_RDONLY | O_NONBLOCK);
    ck_assert_int_ge(reader.fd, 0);
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, read_fifo, &reader), 0);
    moe_status status = moe_model_save(model, path);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    close(reader.fd);
    EXPECT_STATUS(status, MOE_OK);
    ck_assert(S_ISFIFO(status_of(path).st_mode));
    ck_assert_msg(!reader.gave_up, "nothing came through the FIFO");
    ck_assert_uint_eq(reader.length, size);
    ck_assert(memcmp(reader.bytes, expected, size) == 0);
    ck_assert_int_eq(count_entries(directory), 1);

    free(reader.bytes);
    free(expected);
    moe_model_free(model);
    remove_directory(directory);
}
END_TEST

/*
 * /dev/null takes the model, /dev/full refuses it with MOE_ERR_IO, and both stay
 * character devices. Copies of the two nodes in a private directory are tried
 * first (where the process may make device nodes), so a broken save replaces a
 * copy and fails the test before the real /dev entries are touched.
 */
static int copy_device(const char *device, const char *copy)
{
    struct stat info;
    return stat(device, &info) == 0 && S_ISCHR(info.st_mode) &&
           mknod(copy, S_IFCHR | 0666, info.st_rdev) == 0;
}

static void expect_devices_kept(const moe_model_t *model, const char *null_device,
                                const char *full_device)
{
    EXPECT_STATUS(moe_model_save(model, null_device), MOE_OK);
    ck_assert_msg(S_ISCHR(status_of(null_device).st_mode), "%s was replaced", null_device);
    EXPECT_STATUS(moe_model_save(model, full_device), MOE_ERR_IO);
    ck_assert_msg(strstr(moe_last_error(), strerror(ENOSPC)) != NULL &&
                      strstr(moe_last_error(), full_device) != NULL,
                  "'%s'", moe_last_error());
    ck_assert_msg(S_ISCHR(status_of(full_device).st_mode), "%s was replaced", full_device);
}

static int count_prefixed(const char *directory, const char *prefix)
{
    DIR *dir = opendir(directory);
    ck_assert_ptr_nonnull(dir);
    int count = 0;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
        count += strncmp(entry->d_name, prefix, strlen(prefix)) == 0;
    closedir(dir);
    return count;
}

START_TEST(save_writes_through_devices)
{
    char directory[4096], null_copy[4200], full_copy[4200], link_path[4200];
    make_directory(directory, sizeof directory);
    snprintf(null_copy, sizeof null_copy, "%s/null", directory);
    snprintf(full_copy, sizeof full_copy, "%s/full", directory);
    snprintf(link_path, sizeof link_path, "%s/to-null", directory);
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 27);
    int copies = copy_device("/dev/null", null_copy) && copy_device("/dev/full", full_copy);
    if (copies) {
        expect_devices_kept(model, null_copy, full_copy);
        ck_assert_int_eq(symlink("null", link_path), 0);
        EXPECT_STATUS(moe_model_save(model, link_path), MOE_OK);
        ck_assert(S_ISLNK(status_of(link_path).st_mode));
        ck_assert_int_eq(count_entries(directory), 3);
    }
    if (copies || access("/dev", W_OK) != 0) {
        expect_devices_kept(model, "/dev/null", "/dev/full");
        ck_assert_int_eq(count_prefixed("/dev", "null.tmp") + count_prefixed("/dev", "full.tmp"),
                         0);
    } else {
        fprintf(stderr, "save_writes_through_devices: cannot make device nodes here; "
                        "/dev/null and /dev/full not tried\n");
    }
    moe_model_free(model);
    remove_directory(directory);
}
END_TEST

START_TEST(failed_save_leaves_no_temporary_file)
{
    char directory[4096], path[4200], blocked[4300];
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/model.moe", directory);
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 28);
    static const unsigned char old[] = "the previous contents";

    /* The temporary file cannot be written in full: the old file stays, nothing is added. */
    write_bytes(path, old, sizeof old);
    limit_file_size(64);
    moe_status status = moe_model_save(model, path);
    limit_file_size(0);
    EXPECT_STATUS(status, MOE_ERR_IO);
    ck_assert_msg(strstr(moe_last_error(), "model.moe") != NULL, "'%s'", moe_last_error());
    assert_file_is(path, old, sizeof old);
    ck_assert_int_eq(count_entries(directory), 1);

    /* The same for a new file. */
    snprintf(blocked, sizeof blocked, "%s/new.moe", directory);
    limit_file_size(64);
    status = moe_model_save(model, blocked);
    limit_file_size(0);
    EXPECT_STATUS(status, MOE_ERR_IO);
    ck_assert_int_eq(count_entries(directory), 1);

    /* A path through a regular file, and a directory the process may not write to. */
    snprintf(blocked, sizeof blocked, "%s/model.moe/inner.moe", directory);
    EXPECT_STATUS(moe_model_save(model, blocked), MOE_ERR_IO);
    snprintf(blocked, sizeof blocked, "%s/locked", directory);
    ck_assert_int_eq(mkdir(blocked, 0500), 0);
    snprintf(blocked, sizeof blocked, "%s/locked/model.moe", directory);
    if (geteuid() != 0) /* root writes anyway */
        EXPECT_STATUS(moe_model_save(model, blocked), MOE_ERR_IO);
    snprintf(blocked, sizeof blocked, "%s/locked", directory);
    ck_assert_int_eq(count_entries(blocked), 0);
    ck_assert_int_eq(rmdir(blocked), 0);
    ck_assert_int_eq(count_entries(directory), 1);
    assert_file_is(path, old, sizeof old);

    moe_model_free(model);
    remove_directory(directory);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Arguments and the buffer size protocol                                   */
/* ------------------------------------------------------------------------ */

START_TEST(null_arguments)
{
    shape s = {2, 1, 1};
    moe_model_t *model = random_model(&s, 5);
    unsigned char bytes[256];
    size_t written = 12345;
    moe_model_t *out;

    EXPECT_STATUS(moe_model_save(NULL, "unused.moe"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_save(model, NULL), MOE_ERR_NULL_POINTER);
    ck_assert(access("unused.moe", F_OK) != 0);
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load(NULL, "unused.moe"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_load(&out, NULL), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);

    EXPECT_STATUS(moe_model_save_buffer(NULL, bytes, sizeof bytes, &written),
                  MOE_ERR_NULL_POINTER);
    ck_assert_uint_eq(written, 0);
    EXPECT_STATUS(moe_model_save_buffer(model, bytes, sizeof bytes, NULL), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_save_buffer(NULL, NULL, 0, NULL), MOE_ERR_NULL_POINTER);

    EXPECT_STATUS(moe_model_load_buffer(NULL, bytes, sizeof bytes), MOE_ERR_NULL_POINTER);
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load_buffer(&out, NULL, sizeof bytes), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);
    out = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load_buffer(&out, NULL, 0), MOE_ERR_NULL_POINTER);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(moe_last_error(), "buffer") != NULL, "'%s'", moe_last_error());
    moe_model_free(model);
}
END_TEST

START_TEST(save_buffer_size_protocol)
{
    shape s = {5, 7, 1};
    moe_model_t *model = random_model(&s, 8);
    size_t expected = 68 + 8 * (40 + 40 + 5);
    size_t written = 0;

    /* The size query of moe/common.h succeeds, and is no failure: the thread's last
       message stays what an earlier failing call left. */
    moe_model_t *none = BOGUS_MODEL;
    EXPECT_STATUS(moe_model_load_buffer(&none, "not a model", 11), MOE_ERR_FORMAT);
    char message[256];
    snprintf(message, sizeof message, "%s", moe_last_error());
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &written), MOE_OK);
    ck_assert_uint_eq(written, expected);
    ck_assert_str_eq(moe_last_error(), message);
    /* NULL with a capacity is a failed allocation, not a query. */
    written = 12345;
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 1 << 20, &written), MOE_ERR_NULL_POINTER);
    ck_assert_uint_eq(written, 0);

    unsigned char *buffer = malloc(expected + 16);
    ck_assert_ptr_nonnull(buffer);
    static const size_t small[] = {0, 1, 67, 68};
    for (size_t c = 0; c < 5; ++c) {
        size_t capacity = c < 4 ? small[c] : expected - 1;
        memset(buffer, 0xA5, expected + 16);
        written = 0;
        EXPECT_STATUS(moe_model_save_buffer(model, buffer, capacity, &written),
                      MOE_ERR_BUFFER_TOO_SMALL);
        ck_assert_uint_eq(written, expected);
        /* Nothing was written. */
        for (size_t i = 0; i < expected + 16; ++i)
            ck_assert_uint_eq(buffer[i], 0xA5);
    }
    /* Exact capacity, and a larger one: the bytes after the model are untouched. */
    for (size_t extra = 0; extra <= 16; extra += 16) {
        memset(buffer, 0xA5, expected + 16);
        written = 0;
        EXPECT_STATUS(moe_model_save_buffer(model, buffer, expected + extra, &written), MOE_OK);
        ck_assert_uint_eq(written, expected);
        for (size_t i = expected; i < expected + 16; ++i)
            ck_assert_uint_eq(buffer[i], 0xA5);
        moe_model_t *loaded = NULL;
        EXPECT_STATUS(moe_model_load_buffer(&loaded, buffer, written), MOE_OK);
        assert_same_model(model, loaded);
        moe_model_free(loaded);
    }
    free(buffer);
    moe_model_free(model);
}
END_TEST

/* A model the loader would reject must not be written. The setters refuse a gate whose
   re-referencing overflows, so the non-finite value is put in place behind their back, as
   a bug elsewhere in the library would. */
START_TEST(unloadable_model_is_not_saved)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 2;
    spec.n_features = 0;
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    const double gate[2] = {1e308, -1e308}; /* re-referencing gives 2e308 = inf */
    EXPECT_STATUS(moe_model_set_gate(model, gate, 2), MOE_ERR_NON_FINITE);
    double stored[2];
    EXPECT_STATUS(moe_model_get_gate(model, stored, 2), MOE_OK);
    ck_assert_double_eq(stored[0], 0.0); /* unchanged */
    model->gate[0] = INFINITY;
    size_t written = 1;
    unsigned char buffer[256];
    EXPECT_STATUS(moe_model_save_buffer(model, buffer, sizeof buffer, &written),
                  MOE_ERR_NON_FINITE);
    ck_assert_uint_eq(written, 0);
    /* The size query makes the same checks. */
    written = 1;
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &written), MOE_ERR_NON_FINITE);
    ck_assert_uint_eq(written, 0);
    char directory[4096], path[4200];
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/model.moe", directory);
    EXPECT_STATUS(moe_model_save(model, path), MOE_ERR_NON_FINITE);
    ck_assert_int_eq(count_entries(directory), 0);
    ck_assert_int_eq(rmdir(directory), 0);
    moe_model_free(model);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *io_suite(void)
{
    Suite *suite = suite_create("io");
    TCase *format = tcase_create("format");
    tcase_add_test(format, crc32_matches_definition);
    tcase_add_test(format, layout_matches_specification);
    tcase_add_test(format, buffer_round_trip_is_bit_exact);
    tcase_add_test(format, file_round_trip_is_bit_exact);
    tcase_add_test(format, negative_zero_reference_row_round_trips);
    tcase_add_test(format, null_arguments);
    tcase_add_test(format, save_buffer_size_protocol);
    tcase_add_test(format, unloadable_model_is_not_saved);
    tcase_add_test(format, file_errors);
    suite_add_tcase(suite, format);

    TCase *save = tcase_create("save");
    tcase_add_test(save, save_keeps_mode_and_owner);
    tcase_add_test(save, save_new_file_follows_umask);
    tcase_add_test(save, save_follows_symbolic_links);
    tcase_add_test(save, save_keeps_hard_links);
    tcase_add_test(save, save_writes_through_fifo);
    tcase_add_test(save, save_writes_through_devices);
    tcase_add_test(save, failed_save_leaves_no_temporary_file);
    suite_add_tcase(suite, save);

    TCase *damage = tcase_create("damage");
    tcase_set_timeout(damage, 60);
    tcase_add_test(damage, every_truncation_is_rejected);
    tcase_add_test(damage, every_single_bit_flip_is_rejected);
    tcase_add_test(damage, crafted_valid_model_loads);
    tcase_add_test(damage, absurd_sizes_are_rejected_without_allocating);
    tcase_add_test(damage, crafted_invalid_models_are_rejected);
    tcase_add_test(damage, text_mode_damage_is_detected);
    tcase_add_test(damage, random_bytes_never_crash);
    tcase_add_test(damage, random_headers_never_crash);
    tcase_add_test(damage, mutated_models_never_crash);
    suite_add_tcase(suite, damage);
    return suite;
}

int main(void)
{
    return run_suite(io_suite());
}
