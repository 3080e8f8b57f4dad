/*
 * ismm's state between partial fits as bytes (save_state, load_state of moe/estimator.h),
 * the fitter state file's estimator part: a header of ISMM_HEADER_WORDS little-endian
 * 8-byte words (common/bytes.h), then the statistics, the parameters, their average and the
 * waiting rows. Nothing loaded is trusted before it is checked.
 */
#include "estimators/ismm/ismm_session.h"
#include "common/bytes.h"
#include "common/check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ISMM_STATE_MAGIC 0x324d4d5349ULL /* "ISMM2" */
enum { ISMM_HEADER_WORDS = 22 };
/* The largest batch_size the option takes (2^53 - 1). */
#define ISMM_BATCH_MAX 9007199254740991ULL

static size_t arrays_length(const ismm_state *state)
{
    size_t d = state->shape.d;
    return ismm_statistics_size(&state->shape) + 2 * ismm_parameters_size(&state->shape) +
           state->waiting * (d + 2);
}

/*
 * Header words: magic; the options in their table's order (ismm_session.h: step_scale,
 * step_offset, step_decay, warm_start, bound, gate_solve, bound_eps, polyak), a real one as
 * a double and an integer or keyword one as an integer; ready, started, K, d, rows,
 * gaussian, intercept, steps, averaged, variance floor, warm rows, batch_size, waiting; then
 * (ready) s, theta, the average and the waiting rows (x, y, w each). Without a session every
 * word after the options is 0.
 */
_Static_assert(ISMM_HEADER_WORDS == 1 + ISMM_OPTION_COUNT + 13, "the header's words");

static void write_options(unsigned char **at, const ismm_settings *settings)
{
    for (size_t i = 0; i < ISMM_OPTION_COUNT; ++i) {
        double value = 0.0;
        (void)moe_option_list_get(&ismm_option_list, settings, i, &value); /* i is in range */
        if (ismm_option_list.fields[i].kind == MOE_FIELD_DOUBLE)
            moe_write_double(at, value);
        else
            moe_write_u64(at, (uint64_t)value); /* integral, within 2^53 */
    }
}

moe_status ismm_save_state(const void *opaque, void *buffer, size_t capacity,
                                  size_t *written)
{
    const ismm_state *state = opaque;
    size_t words = ISMM_HEADER_WORDS + (state->ready ? arrays_length(state) : 0);
    *written = words * 8;
    if (buffer == NULL && capacity == 0)
        return MOE_OK;
    if (capacity < words * 8)
        return MOE_ERR_BUFFER_TOO_SMALL;
    unsigned char *at = buffer;
    moe_write_u64(&at, ISMM_STATE_MAGIC);
    write_options(&at, &state->settings);
    moe_write_u64(&at, (uint64_t)state->ready);
    moe_write_u64(&at, (uint64_t)state->started);
    moe_write_u64(&at, state->shape.K);
    moe_write_u64(&at, state->shape.d);
    moe_write_u64(&at, ismm_model_expert_rows(&state->shape));
    moe_write_u64(&at, (uint64_t)state->shape.gaussian);
    moe_write_u64(&at, (uint64_t)state->shape.intercept);
    moe_write_u64(&at, state->steps);
    moe_write_u64(&at, state->averaged);
    moe_write_double(&at, state->variance_floor);
    moe_write_u64(&at, state->warm_rows);
    moe_write_u64(&at, state->batch_size);
    moe_write_u64(&at, state->waiting);
    if (!state->ready)
        return MOE_OK;
    size_t statistics = ismm_statistics_size(&state->shape);
    size_t parameters = ismm_parameters_size(&state->shape), d = state->shape.d;
    for (size_t i = 0; i < statistics; ++i)
        moe_write_double(&at, state->statistics[i]);
    for (size_t i = 0; i < parameters; ++i)
        moe_write_double(&at, state->parameters[i]);
    for (size_t i = 0; i < parameters; ++i)
        moe_write_double(&at, state->average[i]);
    for (size_t i = 0; i < state->waiting; ++i) {
        for (size_t j = 0; j < d; ++j)
            moe_write_double(&at, state->waiting_X[i * d + j]);
        moe_write_double(&at, state->waiting_y[i]);
        moe_write_double(&at, state->waiting_w[i]);
    }
    return MOE_OK;
}

/* A saved state's header as read, before any of it is trusted. */
typedef struct saved_header {
    ismm_settings settings;
    uint64_t ready, started, K, d, rows, gaussian, intercept;
    uint64_t steps, averaged, warm_rows, batch_size, waiting;
    double floor;
} saved_header;

/*
 * The options' words into settings, each held to its table entry as ismm_set_option holds a
 * value; nonzero when one is no value its option takes. An integer word beyond 2^53 is none
 * (the fitter holds integer bounds within 2^53), and read as a double it could round into
 * the bounds.
 */
static int read_options(const unsigned char **at, ismm_settings *settings)
{
    int bad = 0;
    for (size_t i = 0; i < ISMM_OPTION_COUNT; ++i) {
        double value;
        if (ismm_option_list.fields[i].kind == MOE_FIELD_DOUBLE) {
            value = moe_read_double(at);
        } else {
            uint64_t word = moe_read_u64(at);
            value = word <= (1ULL << 53) ? (double)word : NAN;
        }
        bad |= moe_option_list_set(&ismm_option_list, settings, i, value) != MOE_OK;
    }
    return bad;
}

/* The header after the magic; nonzero when an option is no value its option takes. */
static int read_header(const unsigned char *at, saved_header *h)
{
    memset(&h->settings, 0, sizeof h->settings);
    int bad = read_options(&at, &h->settings);
    h->ready = moe_read_u64(&at);
    h->started = moe_read_u64(&at);
    h->K = moe_read_u64(&at);
    h->d = moe_read_u64(&at);
    h->rows = moe_read_u64(&at);
    h->gaussian = moe_read_u64(&at);
    h->intercept = moe_read_u64(&at);
    h->steps = moe_read_u64(&at);
    h->averaged = moe_read_u64(&at);
    h->floor = moe_read_double(&at);
    h->warm_rows = moe_read_u64(&at);
    h->batch_size = moe_read_u64(&at);
    h->waiting = moe_read_u64(&at);
    return bad;
}

/* The Polyak average's count after `steps` steps (polyak_update's rule). */
static uint64_t averaged_after(uint64_t polyak, uint64_t steps)
{
    return polyak == 0 || steps < polyak ? 0 : steps - polyak + 1;
}

/*
 * The session's shape and counts, each against the others and against the bytes present
 * (`words` after the header), before anything is allocated: a state can only describe a
 * session its own settings would have made, and it allocates no more than it carries.
 */
static int session_valid(const saved_header *h, size_t words, ismm_shape *shape)
{
    if (h->K < 1 || h->K > 4096 || h->d > 1000000 || h->rows < 1 || h->rows > 65536 ||
        h->gaussian > 1 || h->intercept > 1 || h->started > 1 || (h->gaussian && h->rows != 1))
        return 0;
    shape->K = (size_t)h->K;
    shape->d = (size_t)h->d;
    shape->gaussian = (int)h->gaussian;
    shape->multinomial = !h->gaussian && h->rows > 1;
    shape->rows = (size_t)h->rows - (shape->multinomial ? 1 : 0);
    shape->intercept = (int)h->intercept;
    shape->p = shape->d + (size_t)h->intercept;
    if (shape->p == 0 || h->warm_rows != ismm_configured_warm_rows(&h->settings, shape) ||
        h->batch_size > ISMM_BATCH_MAX)
        return 0;
    if (!h->started && (h->steps != 0 || h->averaged != 0 || h->floor != 0.0 ||
                        h->waiting >= h->warm_rows))
        return 0;
    if (h->started && (!(h->floor > 0.0) || !isfinite(h->floor) ||
                       h->averaged != averaged_after(h->settings.polyak, h->steps) ||
                       (h->batch_size == 0 ? h->waiting != 0 : h->waiting >= h->batch_size)))
        return 0;
    size_t fixed = ismm_statistics_size(shape) + 2 * ismm_parameters_size(shape);
    return words >= fixed && (words - fixed) % (shape->d + 2) == 0 &&
           (words - fixed) / (shape->d + 2) == h->waiting;
}

static int read_finite(const unsigned char **at, double *values, size_t count)
{
    int bad = 0;
    for (size_t i = 0; i < count; ++i)
        bad |= !isfinite(values[i] = moe_read_double(at));
    return bad;
}

/* The arrays of a session whose header is valid; nonzero when a value is not one the session
   could hold. The waiting rows pass the checks partial_fit's rows pass. */
static int read_arrays(ismm_state *loaded, const unsigned char *at)
{
    const ismm_shape *shape = &loaded->shape;
    size_t statistics = ismm_statistics_size(shape), parameters = ismm_parameters_size(shape);
    int bad = read_finite(&at, loaded->statistics, statistics) |
              read_finite(&at, loaded->parameters, parameters) |
              read_finite(&at, loaded->average, parameters);
    ismm_parameters theta, average;
    ismm_parameters_map(shape, loaded->parameters, &theta);
    ismm_parameters_map(shape, loaded->average, &average);
    for (size_t k = 0; shape->gaussian && k < shape->K; ++k)
        bad |= (loaded->started && !(theta.variances[k] > 0.0)) ||
               (loaded->averaged > 0 && !(average.variances[k] > 0.0));
    size_t d = shape->d;
    for (size_t i = 0; i < loaded->waiting; ++i) {
        bad |= read_finite(&at, loaded->waiting_X + i * d, d);
        loaded->waiting_y[i] = moe_read_double(&at);
        double weight = loaded->waiting_w[i] = moe_read_double(&at);
        bad |= !(weight >= 0.0) || !isfinite(weight);
    }
    if (bad)
        return 1;
    /* No rows wait (the batches were whole): the checks of rows have nothing to see, and
       they refuse empty input. */
    if (loaded->waiting == 0)
        return 0;
    if (moe_check_response_values(NULL, loaded->waiting, loaded->waiting_y) != MOE_OK)
        return 1;
    if (!shape->gaussian) {
        size_t classes = shape->multinomial ? shape->rows + 1 : 2;
        if (moe_check_class_labels(NULL, loaded->waiting, loaded->waiting_y, classes,
                                   shape->multinomial ? "multinomial" : "logistic") != MOE_OK)
            return 1;
    }
    return 0;
}

moe_status ismm_load_state(void *opaque, const void *buffer, size_t size)
{
    ismm_state *state = opaque;
    if (size < ISMM_HEADER_WORDS * 8 || size % 8 != 0)
        return MOE_ERR_FORMAT;
    const unsigned char *at = buffer;
    if (moe_read_u64(&at) != ISMM_STATE_MAGIC)
        return MOE_ERR_FORMAT;
    saved_header h;
    int bad_options = read_header(at, &h);
    at += (ISMM_HEADER_WORDS - 1) * 8;
    if (bad_options || h.ready > 1)
        return MOE_ERR_FORMAT;
    ismm_state loaded;
    memset(&loaded, 0, sizeof loaded);
    loaded.settings = h.settings;
    if (!h.ready) {
        uint64_t floor_bits;
        memcpy(&floor_bits, &h.floor, sizeof floor_bits);
        if (size != ISMM_HEADER_WORDS * 8 ||
            (h.started | h.K | h.d | h.rows | h.gaussian | h.intercept | h.steps | h.averaged |
             floor_bits | h.warm_rows | h.batch_size | h.waiting) != 0)
            return MOE_ERR_FORMAT;
        ismm_release(state);
        *state = loaded;
        return MOE_OK;
    }
    ismm_shape shape;
    if (!session_valid(&h, size / 8 - ISMM_HEADER_WORDS, &shape))
        return MOE_ERR_FORMAT;
    if (ismm_allocate(&loaded, &shape, (size_t)h.warm_rows, (size_t)h.batch_size) != MOE_OK ||
        ismm_reserve(&loaded, (size_t)h.waiting) != MOE_OK) {
        ismm_release(&loaded);
        return MOE_ERR_OUT_OF_MEMORY;
    }
    loaded.started = (int)h.started;
    loaded.steps = h.steps;
    loaded.averaged = h.averaged;
    loaded.variance_floor = h.floor;
    loaded.waiting = (size_t)h.waiting;
    if (read_arrays(&loaded, at) != 0) {
        ismm_release(&loaded);
        return MOE_ERR_FORMAT;
    }
    ismm_release(state);
    *state = loaded;
    return MOE_OK;
}

