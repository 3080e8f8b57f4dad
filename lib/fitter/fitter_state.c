/*
 * A fitter's state on disk or in a buffer, so that a streaming session can go on in another
 * process (moe_fitter_save_state and friends).
 *
 * Layout, version 2 (common/bytes.h encoding: little-endian, fixed width):
 *
 *   offset  size  field
 *        0     8  signature 89 4D 4F 53 0D 0A 1A 0A  ("\x89MOS\r\n\x1a\n")
 *        8     4  u32 format version (2; 1 is read too)
 *       12     4  u32 flags, reserved: 0
 *       16     8  u64 total size in bytes, checksum included
 *       24     4  u32 name length L (1 to 255), then L bytes: the estimator's name
 *                 u32 option count C, then C entries of
 *                   u32 option number, u32 type (0 integer, 1 real), u64 value
 *                   (two's complement, or the double's bit pattern)
 *                 u64 samples seen, u64 batches, u32 session active (0 or 1)
 *                 (version 2) u64 steps, u64 scored rows, f64 scored log-likelihood: the
 *                 session's stream_* report fields (version 1: zero, so a session saved
 *                 by an older libmoe reports its prequential average from the resume on)
 *                 u64 estimator state length S, then S bytes (ops->save_state)
 *   size-4     4  u32 CRC-32 of bytes [0, size-4), as in model files
 *
 * Every option is written, so a state restores the fitter whatever the defaults of the
 * libmoe that reads it.
 */
#include "fitter/fitter_impl.h"
#include "common/bytes.h"
#include "common/checksum.h"
#include "common/read_file.h"
#include "common/save_file.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STATE_FORMAT_VERSION 2u
#define STATE_STREAM_SINCE 2u
#define STATE_NAME_MAX 255u
#define STATE_FILE_MAX ((size_t)1 << 32)

static const unsigned char state_signature[8] = {0x89, 0x4D, 0x4F, 0x53, 0x0D, 0x0A, 0x1A, 0x0A};

static const moe_file_kind state_file = {state_signature, sizeof state_signature,
                                         STATE_FORMAT_VERSION, STATE_FILE_MAX,
                                         "a fitter state file"};

/* The pinned options this build knows, in number order. Those 1.2 added are written only
   when they differ from their default, which a libmoe that does not know them runs: its
   1.1 can then read the state of every fitter that does not use them. */
static size_t known_options(const moe_fitter_t *fitter, moe_option *options)
{
    size_t count = 0;
    for (int id = 0; id < MOE_OPTION_SLOTS; ++id) {
        const moe_option_info *info = moe_option_info_get((moe_option)id);
        if (info == NULL)
            continue;
        if (id > MOE_OPT_UPDATE_DEGREES && info->type != MOE_OPTION_REAL &&
            (double)fitter->options.integer[id] == info->default_value)
            continue;
        options[count++] = (moe_option)id;
    }
    return count;
}

moe_status moe_fitter_save_state_buffer(const moe_fitter_t *fitter, void *buffer,
                                        size_t capacity, size_t *written)
{
    if (written != NULL)
        *written = 0;
    if (fitter == NULL || written == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "written" : "fitter");
    if (buffer == NULL && capacity > 0)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER,
                        "buffer is NULL but capacity is %zu (capacity 0 asks for the size)",
                        capacity);
    size_t name_length = strlen(fitter->ops.name);
    if (name_length > STATE_NAME_MAX)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "estimator name '%.40s...' is longer than %u bytes", fitter->ops.name,
                        STATE_NAME_MAX);
    size_t state_size = 0;
    if (fitter->ops.save_state != NULL) {
        moe_status status = fitter->ops.save_state(fitter->state, NULL, 0, &state_size);
        if (status != MOE_OK)
            return moe_fail(NULL, status, "estimator '%s' could not size its state",
                            fitter->ops.name);
    }
    moe_option options[MOE_OPTION_SLOTS];
    size_t count = known_options(fitter, options);
    size_t fixed = 24 + 4 + name_length + 4 + count * 16 + 8 + 8 + 4 + 24 + 8 + 4;
    if (state_size > SIZE_MAX - fixed)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "the estimator's state is too large");
    size_t size = fixed + state_size;
    *written = size;
    if (buffer == NULL)
        return MOE_OK;
    if (capacity < size)
        return moe_fail(NULL, MOE_ERR_BUFFER_TOO_SMALL,
                        "the fitter state needs %zu bytes, the buffer holds %zu", size, capacity);
    unsigned char *out = buffer, *at = out;
    memcpy(at, state_signature, 8);
    moe_put_u32(at + 8, STATE_FORMAT_VERSION);
    moe_put_u32(at + 12, 0);
    moe_put_u64(at + 16, size);
    at += 24;
    moe_put_u32(at, (uint32_t)name_length);
    memcpy(at + 4, fitter->ops.name, name_length);
    at += 4 + name_length;
    moe_put_u32(at, (uint32_t)count);
    at += 4;
    for (size_t i = 0; i < count; ++i, at += 16) {
        const moe_option_info *info = moe_option_info_get(options[i]);
        moe_put_u32(at, (uint32_t)options[i]);
        moe_put_u32(at + 4, info->type == MOE_OPTION_REAL ? 1u : 0u);
        if (info->type != MOE_OPTION_REAL)
            moe_put_u64(at + 8, (uint64_t)fitter->options.integer[options[i]]);
        else
            moe_put_double(at + 8, fitter->options.real[options[i]]);
    }
    moe_put_u64(at, fitter->session.samples_seen);
    moe_put_u64(at + 8, fitter->session.batches);
    moe_put_u32(at + 16, fitter->session.active ? 1u : 0u);
    moe_put_u64(at + 20, fitter->session.steps);
    moe_put_u64(at + 28, fitter->session.scored_rows);
    moe_put_double(at + 36, fitter->session.scored_loglik);
    moe_put_u64(at + 44, state_size);
    at += 52;
    if (state_size > 0) {
        size_t state_written = 0;
        moe_status status =
            fitter->ops.save_state(fitter->state, at, state_size, &state_written);
        if (status != MOE_OK || state_written != state_size) {
            *written = 0;
            return moe_fail(NULL, status != MOE_OK ? status : MOE_ERR_INTERNAL,
                            "estimator '%s' could not write its state of %zu bytes",
                            fitter->ops.name, state_size);
        }
        at += state_size;
    }
    moe_put_u32(at, moe_crc32(out, size - 4));
    return MOE_OK;
}

/* Bounds-checked reading of the bytes. */
typedef struct reader {
    const unsigned char *at, *end;
} reader;

static int take(reader *r, size_t count, const unsigned char **bytes)
{
    if ((size_t)(r->end - r->at) < count)
        return 0;
    *bytes = r->at;
    r->at += count;
    return 1;
}

/* The session's counts and the estimator state's length; version 1 has no stream counts. */
static moe_status read_session(reader *r, uint32_t version, moe_session *session,
                               uint64_t *state_size, char *message)
{
    int stream = version >= STATE_STREAM_SINCE;
    const unsigned char *field;
    if (!take(r, stream ? 52 : 28, &field))
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state is cut short");
    moe_session read = {(int)moe_get_u32(field + 16), (size_t)moe_get_u64(field),
                        (size_t)moe_get_u64(field + 8), 0, 0, 0.0};
    if (stream) {
        read.steps = (size_t)moe_get_u64(field + 20);
        read.scored_rows = (size_t)moe_get_u64(field + 28);
        read.scored_loglik = moe_get_double(field + 36);
    }
    *state_size = moe_get_u64(field + (stream ? 44 : 20));
    if (moe_get_u32(field + 16) > 1)
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state's session flag is damaged");
    /* The counts describe a session the fitter could have run. */
    if (!isfinite(read.scored_loglik) || read.scored_rows > read.samples_seen ||
        read.steps > read.samples_seen || (!read.active && read.steps != 0))
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state's session counts are "
                                                 "damaged");
    *session = read;
    return MOE_OK;
}

moe_status moe_fitter_load_state_buffer(moe_fitter_t *fitter, const void *buffer, size_t size)
{
    if (fitter == NULL || buffer == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "buffer" : "fitter");
    const unsigned char *bytes = buffer;
    char *message = fitter->message;
    if (size < 24 + 4 || memcmp(bytes, state_signature, 8) != 0)
        return moe_fail(message, MOE_ERR_FORMAT, "these bytes are not a libmoe fitter state");
    /* Size and checksum first: a damaged version field is damage (MOE_ERR_FORMAT), and only
       an intact file of a newer format is MOE_ERR_UNSUPPORTED. */
    if (moe_get_u64(bytes + 16) != size)
        return moe_fail(message, MOE_ERR_FORMAT,
                        "the fitter state declares %llu bytes, %zu are present",
                        (unsigned long long)moe_get_u64(bytes + 16), size);
    if (moe_crc32(bytes, size - 4) != moe_get_u32(bytes + size - 4))
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state's checksum does not match");
    uint32_t version = moe_get_u32(bytes + 8);
    if (version == 0 || version > STATE_FORMAT_VERSION)
        return moe_fail(message, version > STATE_FORMAT_VERSION ? MOE_ERR_UNSUPPORTED
                                                                 : MOE_ERR_FORMAT,
                        "fitter state format version %u is not supported (this libmoe reads 1 to "
                        "%u)",
                        version, STATE_FORMAT_VERSION);
    if (moe_get_u32(bytes + 12) != 0)
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state's reserved flags are set");
    reader r = {bytes + 24, bytes + size - 4};
    const unsigned char *field;
    if (!take(&r, 4, &field))
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state is cut short");
    uint32_t name_length = moe_get_u32(field);
    const unsigned char *name;
    if (name_length == 0 || name_length > STATE_NAME_MAX || !take(&r, name_length, &name))
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state's estimator name is damaged");
    if (strlen(fitter->ops.name) != name_length ||
        memcmp(name, fitter->ops.name, name_length) != 0)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "the state is of estimator '%.*s', this fitter runs '%s'",
                        (int)name_length, (const char *)name, fitter->ops.name);
    moe_option_values options = fitter->options;
    if (!take(&r, 4, &field))
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state is cut short");
    uint32_t count = moe_get_u32(field);
    if (count > MOE_OPTION_SLOTS * 4u)
        return moe_fail(message, MOE_ERR_FORMAT, "the fitter state lists %u options", count);
    for (uint32_t i = 0; i < count; ++i) {
        if (!take(&r, 16, &field))
            return moe_fail(message, MOE_ERR_FORMAT, "the fitter state is cut short");
        uint32_t id = moe_get_u32(field), type = moe_get_u32(field + 4);
        const moe_option_info *info = id < MOE_OPTION_SLOTS ? moe_option_info_get((moe_option)id)
                                                            : NULL;
        if (info == NULL)
            return moe_fail(message, MOE_ERR_UNSUPPORTED,
                            "the fitter state sets option %u, which this libmoe does not know",
                            id);
        if (type != (info->type == MOE_OPTION_REAL ? 1u : 0u))
            return moe_fail(message, MOE_ERR_FORMAT, "option '%s' has the wrong type",
                            info->name);
        double value = info->type != MOE_OPTION_REAL ? (double)(int64_t)moe_get_u64(field + 8)
                                        : moe_get_double(field + 8);
        if (!isfinite(value) || value < info->lower || value > info->upper)
            return moe_fail(message, MOE_ERR_FORMAT, "option '%s' is out of its bounds (%g)",
                            info->name, value);
        if (info->type != MOE_OPTION_REAL)
            options.integer[id] = (long long)(int64_t)moe_get_u64(field + 8);
        else
            options.real[id] = value;
    }
    moe_session session;
    uint64_t state_size = 0;
    moe_status read = read_session(&r, version, &session, &state_size, message);
    if (read != MOE_OK)
        return read;
    if (state_size != (uint64_t)(r.end - r.at))
        return moe_fail(message, MOE_ERR_FORMAT,
                        "the estimator's state should fill the remaining %zu bytes, it "
                        "declares %llu",
                        (size_t)(r.end - r.at), (unsigned long long)state_size);
    if (state_size > 0 && fitter->ops.load_state == NULL)
        return moe_fail(message, MOE_ERR_FORMAT,
                        "the state carries %llu bytes for estimator '%s', which keeps none",
                        (unsigned long long)state_size, fitter->ops.name);
    if (fitter->ops.load_state != NULL) {
        moe_status status = fitter->ops.load_state(fitter->state, r.at, (size_t)state_size);
        if (status != MOE_OK)
            return moe_fail(message, status, "estimator '%s' rejected its saved state",
                            fitter->ops.name);
    }
    fitter->options = options;
    fitter->session = session;
    return MOE_OK;
}

moe_status moe_fitter_save_state(const moe_fitter_t *fitter, const char *path)
{
    if (fitter == NULL || path == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "path" : "fitter");
    size_t size = 0;
    moe_status status = moe_fitter_save_state_buffer(fitter, NULL, 0, &size);
    if (status != MOE_OK)
        return status;
    unsigned char *bytes = malloc(size);
    if (bytes == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes", size);
    status = moe_fitter_save_state_buffer(fitter, bytes, size, &size);
    if (status == MOE_OK)
        status = moe_save_file(path, bytes, size);
    free(bytes);
    return status;
}

moe_status moe_fitter_load_state(moe_fitter_t *fitter, const char *path)
{
    if (fitter == NULL || path == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "path" : "fitter");
    unsigned char *bytes = NULL;
    size_t size = 0;
    moe_status status = moe_read_file(path, &state_file, &bytes, &size);
    if (status != MOE_OK)
        return moe_fail(fitter->message, status, "%s", moe_last_error());
    status = moe_fitter_load_state_buffer(fitter, bytes, size);
    free(bytes);
    if (status != MOE_OK) {
        char detail[MOE_MESSAGE_SIZE];
        memcpy(detail, fitter->message, sizeof detail);
        return moe_fail(fitter->message, status, "'%s': %s", path, detail);
    }
    return MOE_OK;
}
