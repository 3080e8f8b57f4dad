/*
 * Portable binary model format: moe_model_save, moe_model_load and the
 * buffer variants.
 *
 * Layout, versions 1 to 3. Integers are unsigned, little-endian, written
 * byte by byte; doubles are IEEE-754 binary64 written as their 64-bit pattern
 * in little-endian order. Offsets are in bytes.
 *
 *   offset  size  field
 *        0     8  signature 89 4D 4F 45 0D 0A 1A 0A  ("\x89MOE\r\n\x1a\n")
 *        8     4  u32 format version (1; 2 when the model carries names; 3 when the gate
 *                      or the experts see only some inputs, names or not)
 *       12     4  u32 flags, reserved: 0
 *       16     8  u64 total size of the model in bytes, checksum included
 *       24     4  u32 family (moe_family: 1 gaussian, 2 logistic, 3 multinomial, 4 poisson,
 *                      5 t, 6 binomial: the family table's range)
 *       28     4  u32 link (moe_link: 0 identity, 1 sigmoid, 2 relu; 0 unless gaussian)
 *       32     4  u32 intercept (0 or 1)
 *       36     4  u32 reserved: 0
 *       40     8  u64 n_experts K
 *       48     8  u64 n_features d
 *       56     8  u64 n_classes C (0 unless the family uses classes)
 *       64        f64 gate[K * p]                (p = d + intercept, row-major)
 *                 f64 experts[K * R * p]         (R = C for multinomial, else 1)
 *                 f64 variances[K]               (only for families with variances)
 *                 f64 degrees[K]                 (only for t experts: nu_k, within
 *                                                 [MOE_DEGREES_MIN, MOE_DEGREES_MAX])
 *                 inputs (version 3 only):
 *                   u8 gate[p], u8 experts[p]: which inputs (intercept first) each part
 *                   sees: 0 not seen (coefficients held at 0), 1 seen, 2 (experts only,
 *                   at most one feature) the offset, its coefficients held at 1, 3
 *                   (experts of a family that takes trials, at most one feature, which
 *                   the gate does not see) the trials, coefficients held at 0; at least
 *                   one byte of the two arrays is not 1
 *                 names (versions 2 and 3):
 *                   u32 count E (>= 1 in version 2, >= 0 in version 3), then E entries of
 *                   u32 kind (moe_name_kind), u32 index, u32 length L (1..MOE_NAME_MAX),
 *                   L bytes (no NUL), in increasing (kind, index) order, no repeats
 *   size-4     4  u32 CRC-32 (IEEE, reflected 0xEDB88320) of bytes [0, size-4)
 *
 * The parameter arrays are exactly those of moe_model_get_gate,
 * moe_model_get_experts, moe_model_get_variances and moe_model_get_degrees. The degrees
 * came with family 5 (1.1): no file of an older family holds them, so the format kept
 * its versions and every older file loads as it did. A model is therefore
 * 64 + 8 * (K*p + K*R*p + [K] + [K]) + 4 bytes long; the smallest valid one
 * (Gaussian, K = 1, p = 1) has 92 bytes.
 *
 * The signature starts with a non-ASCII byte and contains CR LF, LF and
 * Ctrl-Z, so transfers that treat the file as text damage it detectably.
 *
 * A loader accepts a byte string only if, in this order: it holds at least
 * the header and the checksum; the signature matches; the version is known;
 * the size field equals the length; the checksum matches; the reserved
 * fields are zero; the structure is valid for moe_model_create; the payload
 * has exactly the implied length; every double is finite, variances are
 * positive, degrees of freedom in range, the gate row of the last expert is zero and so is the last class
 * row of every multinomial expert; in version 3 the inputs are a structure
 * moe_model_create accepts and the held coefficients hold their values; in versions 2 and
 * 3 the names section is well formed, in range and fills the rest exactly (version 1
 * has no names, so a model without names that sees every input is always written as
 * version 1, and one with names as version 2: files of models that 1.0 can describe
 * stay readable by 1.0).
 * Every other byte
 * string is rejected with MOE_ERR_FORMAT. An accepted byte string is the
 * exact serialization of the loaded model: saving it again gives the same
 * bytes.
 *
 * Files are written by moe_save_file (common/save_file.c), which keeps what
 * the path is: a regular file is replaced atomically with its mode and
 * owner, links are followed, devices and FIFOs are written through. Model
 * files are limited to MOE_MODEL_FILE_MAX bytes (1 GiB); the buffer
 * functions have no such limit.
 */
#define _POSIX_C_SOURCE 200809L

#include "model/model_impl.h"
#include "model/family.h"
#include "common/checksum.h"
#include "common/bytes.h"
#include "common/read_file.h"
#include "common/save_file.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

_Static_assert(sizeof(double) == 8 && DBL_MANT_DIG == 53 && DBL_MAX_EXP == 1024,
               "the model format needs IEEE-754 binary64 doubles");

#define FORMAT_VERSION 3u /* the newest this code reads; it writes 1, 2 or 3 */
#define HEADER_SIZE 64u
#define CRC_SIZE 4u
#define MOE_MODEL_FILE_MAX ((size_t)1 << 30)

/* Header field offsets. */
enum {
    OFFSET_VERSION = 8,
    OFFSET_FLAGS = 12,
    OFFSET_TOTAL_SIZE = 16,
    OFFSET_FAMILY = 24,
    OFFSET_LINK = 28,
    OFFSET_INTERCEPT = 32,
    OFFSET_RESERVED = 36,
    OFFSET_EXPERTS = 40,
    OFFSET_FEATURES = 48,
    OFFSET_CLASSES = 56
};

static const unsigned char signature[8] = {0x89, 0x4D, 0x4F, 0x45, 0x0D, 0x0A, 0x1A, 0x0A};

/* Overflow-checked arithmetic: return 0 on overflow. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *result)
{
    if (a != 0 && b > UINT64_MAX / a)
        return 0;
    *result = a * b;
    return 1;
}

static int add_u64(uint64_t a, uint64_t b, uint64_t *result)
{
    if (b > UINT64_MAX - a)
        return 0;
    *result = a + b;
    return 1;
}

/* Bytes of the double arrays of a model with this structure (per_expert: the arrays of K
   values, variances and degrees, it holds); 0 on overflow. */
static int payload_bytes(uint64_t n_experts, uint64_t n_inputs, uint64_t expert_rows,
                         unsigned per_expert, uint64_t *bytes)
{
    uint64_t gate, block, experts, values, scalars;
    return mul_u64(n_experts, n_inputs, &gate) && mul_u64(expert_rows, n_inputs, &block) &&
           mul_u64(n_experts, block, &experts) && add_u64(gate, experts, &values) &&
           mul_u64(n_experts, per_expert, &scalars) && add_u64(values, scalars, &values) &&
           mul_u64(values, 8, bytes);
}

static unsigned per_expert_arrays(const struct moe_family_ops *ops)
{
    return (ops->has_variance ? 1u : 0u) + (ops->has_degrees ? 1u : 0u);
}

/* Saving ------------------------------------------------------------------- */

/* Bytes of the names section (0 when the model has no names: version 1). */
static uint64_t names_bytes(const struct moe_model *model)
{
    if (model->names == NULL)
        return 0;
    uint64_t bytes = 0;
    for (size_t slot = 0; slot < moe_name_slots(model); ++slot)
        if (model->names[slot] != NULL)
            bytes += 12 + (uint64_t)strlen(model->names[slot]);
    return bytes == 0 ? 0 : bytes + 4;
}

static uint32_t format_version(const struct moe_model *model)
{
    return !moe_model_sees_all(model) ? 3u : names_bytes(model) > 0 ? 2u : 1u;
}

/* Bytes after the parameters: the inputs and names sections of the model's version. */
static uint64_t sections_bytes(const struct moe_model *model)
{
    if (format_version(model) < 3)
        return names_bytes(model);
    uint64_t names = names_bytes(model);
    return 2 * (uint64_t)model->n_inputs + (names == 0 ? 4 : names);
}

static moe_status serialized_size(const struct moe_model *model, size_t *size)
{
    uint64_t payload, total;
    if (!payload_bytes(model->n_experts, model->n_inputs, model->expert_rows,
                       per_expert_arrays(model->family_ops), &payload) ||
        !add_u64(payload, sections_bytes(model), &payload) ||
        !add_u64(payload, HEADER_SIZE + CRC_SIZE, &total) || total > SIZE_MAX)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "the model is too large to serialize on this platform");
    *size = (size_t)total;
    return MOE_OK;
}

/* A model whose parameters the loader would reject must not be written. */
static moe_status check_saveable(const struct moe_model *model)
{
    for (size_t i = 0; i < moe_gate_size(model); ++i)
        if (!isfinite(model->gate[i]))
            return moe_fail(NULL, MOE_ERR_NON_FINITE,
                            "gate value %zu is not finite; the model cannot be saved", i);
    for (size_t i = 0; i < moe_experts_size(model); ++i)
        if (!isfinite(model->experts[i]))
            return moe_fail(NULL, MOE_ERR_NON_FINITE,
                            "expert value %zu is not finite; the model cannot be saved", i);
    const double *reference = model->gate + (model->n_experts - 1) * model->n_inputs;
    for (size_t j = 0; j < model->n_inputs; ++j)
        if (reference[j] != 0.0)
            return moe_fail(NULL, MOE_ERR_INTERNAL,
                            "the gate row of the last expert is not zero (a libmoe bug); "
                            "the model cannot be saved");
    if (model->variances != NULL)
        for (size_t k = 0; k < model->n_experts; ++k)
            if (!isfinite(model->variances[k]) || !(model->variances[k] > 0.0))
                return moe_fail(NULL,
                                isfinite(model->variances[k]) ? MOE_ERR_INVALID_ARGUMENT
                                                              : MOE_ERR_NON_FINITE,
                                "variance %zu is %g; the model cannot be saved", k,
                                model->variances[k]);
    if (model->degrees != NULL)
        for (size_t k = 0; k < model->n_experts; ++k)
            if (!moe_degrees_valid(model->degrees[k]))
                return moe_fail(NULL,
                                isfinite(model->degrees[k]) ? MOE_ERR_INVALID_ARGUMENT
                                                            : MOE_ERR_NON_FINITE,
                                "degrees of freedom %zu are %g; the model cannot be saved", k,
                                model->degrees[k]);
    return MOE_OK;
}

/* Write the model into `out`, which holds exactly `size` (serialized_size) bytes. */
static void serialize(const struct moe_model *model, unsigned char *out, size_t size)
{
    memcpy(out, signature, sizeof signature);
    moe_put_u32(out + OFFSET_VERSION, format_version(model));
    moe_put_u32(out + OFFSET_FLAGS, 0);
    moe_put_u64(out + OFFSET_TOTAL_SIZE, (uint64_t)size);
    moe_put_u32(out + OFFSET_FAMILY, (uint32_t)model->family);
    moe_put_u32(out + OFFSET_LINK, (uint32_t)model->link);
    moe_put_u32(out + OFFSET_INTERCEPT, (uint32_t)model->intercept);
    moe_put_u32(out + OFFSET_RESERVED, 0);
    moe_put_u64(out + OFFSET_EXPERTS, (uint64_t)model->n_experts);
    moe_put_u64(out + OFFSET_FEATURES, (uint64_t)model->n_features);
    moe_put_u64(out + OFFSET_CLASSES, (uint64_t)model->n_classes);
    unsigned char *at = out + HEADER_SIZE;
    for (size_t i = 0; i < moe_gate_size(model); ++i, at += 8)
        moe_put_double(at, model->gate[i]);
    for (size_t i = 0; i < moe_experts_size(model); ++i, at += 8)
        moe_put_double(at, model->experts[i]);
    if (model->variances != NULL)
        for (size_t k = 0; k < model->n_experts; ++k, at += 8)
            moe_put_double(at, model->variances[k]);
    if (model->degrees != NULL)
        for (size_t k = 0; k < model->n_experts; ++k, at += 8)
            moe_put_double(at, model->degrees[k]);
    if (format_version(model) == 3) {
        size_t p = model->n_inputs;
        for (size_t a = 0; a < p; ++a)
            at[a] = model->gate_inputs ? model->gate_inputs[a] : MOE_INPUT_FREE;
        for (size_t a = 0; a < p; ++a)
            at[p + a] = model->expert_inputs ? model->expert_inputs[a] : MOE_INPUT_FREE;
        at += 2 * p;
        if (names_bytes(model) == 0) {
            moe_put_u32(at, 0);
            at += 4;
        }
    }
    if (names_bytes(model) > 0) {
        size_t slots = moe_name_slots(model), d = model->n_features, count = 0;
        for (size_t slot = 0; slot < slots; ++slot)
            count += model->names[slot] != NULL;
        moe_put_u32(at, (uint32_t)count);
        at += 4;
        for (size_t slot = 0; slot < slots; ++slot) {
            const char *name = model->names[slot];
            if (name == NULL)
                continue;
            uint32_t kind = slot < d ? MOE_NAME_FEATURE : slot == d ? MOE_NAME_RESPONSE
                                                                    : MOE_NAME_CLASS;
            size_t index = slot < d ? slot : slot == d ? 0 : slot - d - 1;
            size_t length = strlen(name);
            moe_put_u32(at, kind);
            moe_put_u32(at + 4, (uint32_t)index);
            moe_put_u32(at + 8, (uint32_t)length);
            memcpy(at + 12, name, length);
            at += 12 + length;
        }
    }
    moe_put_u32(at, moe_crc32(out, size - CRC_SIZE));
}

moe_status moe_model_save_buffer(const moe_model_t *model, void *buffer, size_t capacity,
                                 size_t *written)
{
    if (written != NULL)
        *written = 0;
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    if (written == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "written is NULL");
    if (buffer == NULL && capacity > 0)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER,
                        "buffer is NULL but capacity is %zu (capacity 0 asks for the size)",
                        capacity);
    moe_status status = check_saveable(model);
    size_t size = 0;
    if (status == MOE_OK)
        status = serialized_size(model, &size);
    if (status != MOE_OK)
        return status;
    *written = size;
    if (buffer == NULL)
        return MOE_OK; /* the size query of moe/common.h */
    if (capacity < size)
        return moe_fail(NULL, MOE_ERR_BUFFER_TOO_SMALL,
                        "buffer holds %zu bytes, the model needs %zu", capacity, size);
    serialize(model, buffer, size);
    return MOE_OK;
}

moe_status moe_model_save(const moe_model_t *model, const char *path)
{
    if (model == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "model is NULL");
    if (path == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "path is NULL");
    moe_status status = check_saveable(model);
    size_t size = 0;
    if (status == MOE_OK)
        status = serialized_size(model, &size);
    if (status != MOE_OK)
        return status;
    if (size > MOE_MODEL_FILE_MAX)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "the model needs %zu bytes, more than the %zu a model file may hold "
                        "(use moe_model_save_buffer)",
                        size, MOE_MODEL_FILE_MAX);
    unsigned char *bytes = malloc(size);
    if (bytes == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes", size);
    serialize(model, bytes, size);
    status = moe_save_file(path, bytes, size);
    free(bytes);
    return status;
}

/* Loading ------------------------------------------------------------------ */

static moe_status header_size_field(const char *name, uint64_t value, size_t *out)
{
#if SIZE_MAX < UINT64_MAX
    if (value > SIZE_MAX)
        return moe_fail(NULL, MOE_ERR_FORMAT,
                        "%s is %" PRIu64 ", more than this platform can address", name, value);
#else
    (void)name;
#endif
    *out = (size_t)value;
    return MOE_OK;
}

/* The structure fields of a header whose checksum is already verified. */
static moe_status read_spec(const unsigned char *bytes, moe_model_spec *spec)
{
    uint32_t family = moe_get_u32(bytes + OFFSET_FAMILY);
    uint32_t link = moe_get_u32(bytes + OFFSET_LINK);
    uint32_t intercept = moe_get_u32(bytes + OFFSET_INTERCEPT);
    if (family > (uint32_t)moe_family_count() || moe_family_lookup((moe_family)family) == NULL)
        return moe_fail(NULL, MOE_ERR_FORMAT, "unknown expert family %" PRIu32, family);
    if (link != MOE_LINK_IDENTITY && link != MOE_LINK_SIGMOID && link != MOE_LINK_RELU)
        return moe_fail(NULL, MOE_ERR_FORMAT, "unknown link %" PRIu32, link);
    if (intercept > 1)
        return moe_fail(NULL, MOE_ERR_FORMAT, "intercept field must be 0 or 1, got %" PRIu32,
                        intercept);
    spec->version = MOE_MODEL_SPEC_VERSION;
    spec->family = (moe_family)family;
    spec->link = (moe_link)link;
    spec->intercept = (int)intercept;
    moe_status status =
        header_size_field("n_experts", moe_get_u64(bytes + OFFSET_EXPERTS), &spec->n_experts);
    if (status == MOE_OK)
        status = header_size_field("n_features", moe_get_u64(bytes + OFFSET_FEATURES),
                                   &spec->n_features);
    if (status == MOE_OK)
        status = header_size_field("n_classes", moe_get_u64(bytes + OFFSET_CLASSES),
                                   &spec->n_classes);
    return status;
}

/* Read `count` doubles, all finite, into `values`. */
static moe_status read_finite(const unsigned char **at, double *values, size_t count,
                              const char *what)
{
    for (size_t i = 0; i < count; ++i, *at += 8) {
        values[i] = moe_get_double(*at);
        if (!isfinite(values[i]))
            return moe_fail(NULL, MOE_ERR_FORMAT, "%s value %zu is not finite", what, i);
    }
    return MOE_OK;
}

static moe_status read_parameters(struct moe_model *model, const unsigned char *at)
{
    moe_status status = read_finite(&at, model->gate, moe_gate_size(model), "gate");
    if (status == MOE_OK)
        status = read_finite(&at, model->experts, moe_experts_size(model), "expert");
    if (status == MOE_OK && model->variances != NULL)
        status = read_finite(&at, model->variances, model->n_experts, "variance");
    if (status == MOE_OK && model->degrees != NULL)
        status = read_finite(&at, model->degrees, model->n_experts, "degrees");
    if (status != MOE_OK)
        return status;
    size_t p = model->n_inputs;
    const double *reference = model->gate + (model->n_experts - 1) * p;
    for (size_t j = 0; j < p; ++j)
        if (reference[j] != 0.0)
            return moe_fail(NULL, MOE_ERR_FORMAT,
                            "the gate row of the last (reference) expert must be zero, "
                            "but its value %zu is %g",
                            j, reference[j]);
    /* Multinomial experts are stored with their last class as the zero reference, as
       moe_model_set_experts leaves them; anything else would change under canonicalize. */
    if (model->family_ops->uses_classes)
        for (size_t k = 0; k < model->n_experts; ++k) {
            const double *last = model->experts + ((k + 1) * model->expert_rows - 1) * p;
            for (size_t j = 0; j < p; ++j)
                if (last[j] != 0.0)
                    return moe_fail(NULL, MOE_ERR_FORMAT,
                                    "the reference (last) class row of expert %zu must be "
                                    "zero, but its value %zu is %g",
                                    k, j, last[j]);
        }
    size_t held = moe_inputs_first_violation(model->n_experts, p, model->gate_inputs,
                                             model->gate);
    if (held < moe_gate_size(model))
        return moe_fail(NULL, MOE_ERR_FORMAT,
                        "gate value %zu is %g, but the gate does not see input %zu", held,
                        model->gate[held], held % p);
    held = moe_inputs_first_violation(model->n_experts * model->expert_rows, p,
                                      model->expert_inputs, model->experts);
    if (held < moe_experts_size(model))
        return moe_fail(NULL, MOE_ERR_FORMAT,
                        "expert value %zu is %g, not the value its input %zu is held at", held,
                        model->experts[held], held % p);
    if (model->variances != NULL)
        for (size_t k = 0; k < model->n_experts; ++k)
            if (!(model->variances[k] > 0.0))
                return moe_fail(NULL, MOE_ERR_FORMAT, "variance %zu is %g, not positive", k,
                                model->variances[k]);
    if (model->degrees != NULL)
        for (size_t k = 0; k < model->n_experts; ++k)
            if (!moe_degrees_valid(model->degrees[k]))
                return moe_fail(NULL, MOE_ERR_FORMAT,
                                "degrees of freedom %zu are %g, outside [%g, %g]", k,
                                model->degrees[k], MOE_DEGREES_MIN, MOE_DEGREES_MAX);
    return MOE_OK;
}

/* The names section of a version 2 or 3 model: `length` bytes at `at`, exactly. */
static moe_status read_names(struct moe_model *model, uint32_t version, const unsigned char *at,
                             size_t length)
{
    const unsigned char *end = at + length;
    uint32_t count = moe_get_u32(at);
    at += 4;
    size_t slots = moe_name_slots(model), previous = 0;
    if (count == 0 && version == 2)
        return moe_fail(NULL, MOE_ERR_FORMAT, "a version 2 model has an empty names section");
    if (count == 0)
        return at == end ? MOE_OK
                         : moe_fail(NULL, MOE_ERR_FORMAT, "%zu bytes follow the names section",
                                    (size_t)(end - at));
    if ((model->names = calloc(slots, sizeof(char *))) == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate names");
    for (uint32_t entry = 0; entry < count; ++entry) {
        if ((size_t)(end - at) < 12)
            return moe_fail(NULL, MOE_ERR_FORMAT, "name %" PRIu32 " is cut short", entry);
        uint32_t kind = moe_get_u32(at), index = moe_get_u32(at + 4), bytes = moe_get_u32(at + 8);
        at += 12;
        size_t slot = kind <= MOE_NAME_CLASS ? moe_name_slot(model, (int)kind, index) : slots;
        if (slot >= slots)
            return moe_fail(NULL, MOE_ERR_FORMAT,
                            "name %" PRIu32 " (kind %" PRIu32 ", index %" PRIu32
                            ") does not exist in this model",
                            entry, kind, index);
        if (entry > 0 && slot <= previous)
            return moe_fail(NULL, MOE_ERR_FORMAT,
                            "name %" PRIu32 " is out of order or repeated", entry);
        if (bytes == 0 || bytes > MOE_NAME_MAX || (size_t)(end - at) < bytes ||
            memchr(at, '\0', bytes) != NULL)
            return moe_fail(NULL, MOE_ERR_FORMAT,
                            "name %" PRIu32 " has a bad length (%" PRIu32 ") or a NUL byte",
                            entry, bytes);
        if ((model->names[slot] = malloc((size_t)bytes + 1)) == NULL)
            return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate names");
        memcpy(model->names[slot], at, bytes);
        model->names[slot][bytes] = '\0';
        at += bytes;
        previous = slot;
    }
    if (at != end)
        return moe_fail(NULL, MOE_ERR_FORMAT, "%zu bytes follow the names section",
                        (size_t)(end - at));
    return MOE_OK;
}

/*
 * The inputs section of a version 3 model (2 p bytes at `at`) into the spec: the roles must
 * be in range, with at most one offset, on a feature. The arrays the spec points to are
 * `features` (2 d bytes, the caller's).
 */
static moe_status read_inputs(const unsigned char *at, moe_model_spec *spec,
                              unsigned char *features)
{
    size_t d = spec->n_features, first = (size_t)spec->intercept, p = d + first;
    int takes_trials = moe_family_lookup(spec->family)->takes_trials;
    spec->offset_feature = -1;
    spec->trials_feature = -1;
    for (size_t a = 0; a < 2 * p; ++a) {
        int expert = a >= p;
        size_t input = expert ? a - p : a;
        unsigned role = at[a];
        int offset = expert && role == MOE_INPUT_OFFSET && input >= first;
        int trials = expert && takes_trials && role == MOE_INPUT_TRIALS && input >= first &&
                     at[input] == MOE_INPUT_UNSEEN;
        if (role > MOE_INPUT_FREE && !offset && !trials)
            return moe_fail(NULL, MOE_ERR_FORMAT, "the %s's input %zu has an invalid role %u",
                            expert ? "experts" : "gate", input, role);
        if ((offset && spec->offset_feature >= 0) || (trials && spec->trials_feature >= 0))
            return moe_fail(NULL, MOE_ERR_FORMAT, "the experts have more than one %s",
                            offset ? "offset" : "trials column");
        if (offset)
            spec->offset_feature = (long)(input - first);
        if (trials)
            spec->trials_feature = (long)(input - first);
        if (input >= first)
            features[(expert ? d : 0) + input - first] = role != MOE_INPUT_UNSEEN;
    }
    spec->gate_features = features;
    spec->expert_features = features + d;
    spec->gate_intercept = first ? at[0] : 1;
    spec->expert_intercept = first ? at[p] : 1;
    return MOE_OK;
}

/* Whether the model's inputs are exactly the section's (else it would not save the same). */
static int same_inputs_section(const struct moe_model *model, const unsigned char *at)
{
    size_t p = model->n_inputs;
    if (moe_model_sees_all(model))
        return 0;
    for (size_t a = 0; a < p; ++a)
        if (at[a] != (model->gate_inputs ? model->gate_inputs[a] : MOE_INPUT_FREE) ||
            at[p + a] != (model->expert_inputs ? model->expert_inputs[a] : MOE_INPUT_FREE))
            return 0;
    return 1;
}

/* The header's fixed fields and the checksum, before anything is allocated; *version
   receives the format version. */
static moe_status check_header(const unsigned char *bytes, size_t size, uint32_t *version_out)
{
    if (size < HEADER_SIZE + CRC_SIZE)
        return moe_fail(NULL, MOE_ERR_FORMAT,
                        "%zu bytes are too few for a model (header and checksum take %u)", size,
                        HEADER_SIZE + CRC_SIZE);
    if (memcmp(bytes, signature, sizeof signature) != 0) {
        if (bytes[1] == 'M' && bytes[2] == 'O' && bytes[3] == 'E')
            return moe_fail(NULL, MOE_ERR_FORMAT,
                            "damaged model signature (was the file transferred as text?)");
        return moe_fail(NULL, MOE_ERR_FORMAT, "not a libmoe model (no model signature)");
    }
    uint32_t version = moe_get_u32(bytes + OFFSET_VERSION);
    *version_out = version;
    if (version == 0)
        return moe_fail(NULL, MOE_ERR_FORMAT, "format version 0 is not valid");
    if (version > FORMAT_VERSION)
        return moe_fail(NULL, MOE_ERR_FORMAT,
                        "format version %" PRIu32 " is newer than this libmoe supports (%u)",
                        version, FORMAT_VERSION);
    uint64_t declared = moe_get_u64(bytes + OFFSET_TOTAL_SIZE);
    if (declared != (uint64_t)size)
        return moe_fail(NULL, MOE_ERR_FORMAT,
                        "the header declares %" PRIu64 " bytes, but %zu are present", declared,
                        size);
    uint32_t stored = moe_get_u32(bytes + size - CRC_SIZE);
    uint32_t computed = moe_crc32(bytes, size - CRC_SIZE);
    if (stored != computed)
        return moe_fail(NULL, MOE_ERR_FORMAT,
                        "checksum mismatch (stored %08" PRIx32 ", computed %08" PRIx32
                        "): the model data is corrupt",
                        stored, computed);
    uint32_t flags = moe_get_u32(bytes + OFFSET_FLAGS);
    if (flags != 0)
        return moe_fail(NULL, MOE_ERR_FORMAT, "header flags are %08" PRIx32 ", must be 0",
                        flags);
    uint32_t reserved = moe_get_u32(bytes + OFFSET_RESERVED);
    if (reserved != 0)
        return moe_fail(NULL, MOE_ERR_FORMAT, "reserved header field is %08" PRIx32
                        ", must be 0", reserved);
    return MOE_OK;
}

/*
 * The payload length the header implies must match before anything is allocated, so a
 * short input never makes the loader allocate more than a small multiple of its own size.
 * Unavailable families are left to moe_model_allocate, which rejects them without
 * allocating.
 */
static moe_status check_payload(const moe_model_spec *spec, uint32_t version, size_t payload)
{
    const struct moe_family_ops *ops = moe_family_lookup(spec->family);
    if (ops != NULL) {
        uint64_t inputs = 0, needed = 0;
        int fits = add_u64(spec->n_features, (uint64_t)spec->intercept, &inputs) &&
                   payload_bytes(spec->n_experts, inputs, ops->uses_classes ? spec->n_classes : 1,
                                 per_expert_arrays(ops), &needed);
        /* The inputs section is 2 bytes an input: bounded by the payload (checked without
           overflow) before the loader allocates anything by the header's feature count. */
        uint64_t sections = version == 2 ? 4 : 0;
        if (version == 3)
            fits = fits && mul_u64(inputs, 2, &sections) && add_u64(sections, 4, &sections);
        int exact = version == 1 ? needed == (uint64_t)payload
                                 : needed <= (uint64_t)payload && payload - needed >= sections;
        if (!fits || !exact) {
            char expected[32] = "more than 2^64";
            if (fits)
                snprintf(expected, sizeof expected, "%" PRIu64, needed);
            return moe_fail(NULL, MOE_ERR_FORMAT,
                            "the header describes %zu experts, %zu features and %zu classes, "
                            "which need %s parameter bytes%s, but %zu are present",
                            spec->n_experts, spec->n_features, spec->n_classes, expected,
                            version == 1   ? ""
                            : version == 2 ? " and a names section"
                                           : " and the inputs and names sections",
                            payload);
        }
    }
    return MOE_OK;
}

moe_status moe_model_load_buffer(moe_model_t **out, const void *buffer, size_t size)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (buffer == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "buffer is NULL");
    const unsigned char *bytes = buffer;
    uint32_t version = 0;
    moe_status status = check_header(bytes, size, &version);
    if (status != MOE_OK)
        return status;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    if ((status = read_spec(bytes, &spec)) != MOE_OK)
        return status;
    size_t payload = size - HEADER_SIZE - CRC_SIZE;
    if ((status = check_payload(&spec, version, payload)) != MOE_OK)
        return status;
    /* check_payload has bounded the parameters and the inputs section by the payload. */
    const struct moe_family_ops *ops = moe_family_lookup(spec.family);
    uint64_t parameters = 0;
    unsigned char *features = NULL;
    const unsigned char *inputs = NULL;
    if (version == 3 && ops != NULL) {
        payload_bytes(spec.n_experts, spec.n_features + (size_t)spec.intercept,
                      ops->uses_classes ? spec.n_classes : 1, per_expert_arrays(ops),
                      &parameters);
        inputs = bytes + HEADER_SIZE + parameters;
        if ((features = malloc(2 * spec.n_features + 1)) == NULL)
            return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the model's inputs");
        if ((status = read_inputs(inputs, &spec, features)) != MOE_OK) {
            free(features);
            return status;
        }
    }
    char detail[MOE_MESSAGE_SIZE] = "";
    struct moe_model *model = NULL;
    status = moe_model_allocate(&model, &spec, detail);
    free(features);
    if (status == MOE_ERR_OUT_OF_MEMORY)
        return moe_fail(NULL, status, "%s", detail);
    /* Every link the header can name is valid for Gaussian experts; a classification
       family with a link other than identity is a file no libmoe writes. */
    if (status != MOE_OK)
        return moe_fail(NULL, MOE_ERR_FORMAT, "invalid model structure: %s", detail);
    /* What is read below is exactly what the model holds, and must be exactly the payload. */
    uint64_t held = 0;
    if (!payload_bytes(model->n_experts, model->n_inputs, model->expert_rows,
                       per_expert_arrays(model->family_ops), &held) ||
        (version == 1 ? held != (uint64_t)payload : held + 4 > (uint64_t)payload)) {
        moe_model_free(model);
        return moe_fail(NULL, MOE_ERR_FORMAT, "the parameters take %zu bytes, %" PRIu64
                        " expected", payload, held);
    }
    size_t sections = version == 3 ? 2 * model->n_inputs : 0;
    if (version == 3 && !same_inputs_section(model, inputs))
        status = moe_fail(NULL, MOE_ERR_FORMAT,
                          "the inputs section is not the one this structure is saved with "
                          "(every input seen, or a role the structure does not keep)");
    if (status == MOE_OK)
        status = read_parameters(model, bytes + HEADER_SIZE);
    if (status == MOE_OK && version >= 2)
        status = read_names(model, version, bytes + HEADER_SIZE + held + sections,
                            payload - (size_t)held - sections);
    if (status != MOE_OK) {
        moe_model_free(model);
        return status;
    }
    *out = model;
    return MOE_OK;
}

static const moe_file_kind model_file = {signature, sizeof signature, FORMAT_VERSION,
                                         MOE_MODEL_FILE_MAX, "a model file"};

moe_status moe_model_load(moe_model_t **out, const char *path)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (path == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "path is NULL");
    unsigned char *bytes;
    size_t size;
    moe_status status = moe_read_file(path, &model_file, &bytes, &size);
    if (status != MOE_OK)
        return status;
    status = moe_model_load_buffer(out, bytes, size);
    free(bytes);
    if (status != MOE_OK) {
        /* Name the file in the message; copy first, the thread slot is rewritten. */
        char detail[MOE_MESSAGE_SIZE];
        memcpy(detail, moe_last_error(), sizeof detail);
        detail[sizeof detail - 1] = '\0';
        return moe_fail(NULL, status, "'%s': %s", path, detail);
    }
    return MOE_OK;
}
