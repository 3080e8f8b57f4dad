/*
 * Fuzz harness: fitter states (moe_fitter_load_state_buffer, what `moe fit --resume` reads),
 * and what a caller does with a state the library accepts.
 *
 * The bytes go to a fitter of the estimator they name (ismm when the name is none the
 * library knows). A rejected state must come back with a message and leave the fitter as it
 * was. An accepted one must save again to bytes that load back to the same bytes, and the
 * session it holds must go on: a partial fit on a few fixed rows of each family's model, with
 * every input seen, with the gate and the experts restricted to other columns, and with an
 * offset (state_rows.h), must
 * either succeed with a finite log-likelihood, or fail with a message and leave the session
 * exactly as before the call (include/moe/fitter.h promises both). A broken promise traps,
 * which the fuzzer reports as a crash.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "repaired.h"
#include "state_rows.h"

#define REQUIRE(condition)                                                                     \
    do {                                                                                       \
        if (!(condition))                                                                      \
            __builtin_trap();                                                                  \
    } while (0)

/* An option set to a valid value: only an estimator that does not read it may refuse. */
static void require_set(moe_status status)
{
    REQUIRE(status == MOE_OK || status == MOE_ERR_UNSUPPORTED);
}

/* The fitter's state (malloc'ed), or NULL when memory runs out. */
static unsigned char *state_of(const moe_fitter_t *fitter, size_t *size)
{
    size_t needed = 0;
    REQUIRE(moe_fitter_save_state_buffer(fitter, NULL, 0, &needed) == MOE_OK && needed > 0);
    unsigned char *bytes = malloc(needed);
    if (bytes == NULL)
        return NULL;
    REQUIRE(moe_fitter_save_state_buffer(fitter, bytes, needed, size) == MOE_OK &&
            *size == needed);
    return bytes;
}

static int same_state(const moe_fitter_t *fitter, const unsigned char *bytes, size_t size)
{
    size_t now_size = 0;
    unsigned char *now = state_of(fitter, &now_size);
    int same = now == NULL || (now_size == size && memcmp(now, bytes, size) == 0);
    free(now);
    return same;
}

/* The estimator the bytes name, when the library has it. */
static moe_fitter_t *fitter_for(const uint8_t *data, size_t size)
{
    char name[64] = "ismm";
    if (size >= 28) {
        uint32_t length = (uint32_t)data[24] | (uint32_t)data[25] << 8 |
                          (uint32_t)data[26] << 16 | (uint32_t)data[27] << 24;
        if (length > 0 && length < sizeof name && size - 28 >= length) {
            memcpy(name, data + 28, length);
            name[length] = '\0';
        }
    }
    moe_fitter_t *fitter = NULL;
    if (memchr(name, '\0', sizeof name) == name + strlen(name) &&
        moe_fitter_create(&fitter, name) == MOE_OK)
        return fitter;
    REQUIRE(moe_fitter_create(&fitter, "ismm") == MOE_OK);
    return fitter;
}

/* Go on with the session on each family's model: success, or a failure that changed
   nothing. The options that only bound the work are capped and the start is k-means, so
   that no input is slow. */
static void continue_session(const unsigned char *state, size_t size)
{
    double X[STATE_ROWS * STATE_FEATURES], y[STATE_ROWS];
    for (size_t f = 0; f < STATE_SHAPES; ++f) {
        moe_fitter_t *fitter = fitter_for(state, size);
        REQUIRE(moe_fitter_load_state_buffer(fitter, state, size) == MOE_OK);
        long long value = 0;
        if (moe_fitter_get_int(fitter, MOE_OPT_MAX_ITER, &value) == MOE_OK && value > 20)
            require_set(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 20));
        if (moe_fitter_get_int(fitter, MOE_OPT_N_INIT, &value) == MOE_OK && value > 2)
            require_set(moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 2));
        require_set(moe_fitter_set_int(fitter, MOE_OPT_THREADS, 1));
        /* The default start's search runs some 1e6 row-iterations on a warm start of a few
           rows (8 s an input under the sanitizers); k-means starts the same session code. */
        require_set(moe_fitter_set_int(fitter, MOE_OPT_INIT, MOE_INIT_KMEANS));
        moe_model_t *model = state_model_of(&state_shapes[f]);
        REQUIRE(model != NULL);
        state_rows(state_shapes[f].family, 0, X, y);
        size_t before_size = 0;
        unsigned char *before = state_of(fitter, &before_size);
        moe_status status =
            moe_fitter_partial_fit(fitter, model, STATE_ROWS, X, STATE_FEATURES, y, NULL);
        if (status != MOE_OK) {
            REQUIRE(moe_fitter_last_error(fitter)[0] != '\0');
            if (before != NULL)
                REQUIRE(same_state(fitter, before, before_size));
        } else {
            double loglik = NAN;
            moe_status judged =
                moe_model_loglik(model, STATE_ROWS, X, STATE_FEATURES, y, NULL, &loglik);
            REQUIRE(judged != MOE_OK || !isnan(loglik));
        }
        free(before);
        moe_model_free(model);
        moe_fitter_free(fitter);
    }
}

static void check_bytes(const uint8_t *data, size_t size)
{
    moe_fitter_t *fitter = fitter_for(data, size);
    size_t fresh_size = 0;
    unsigned char *fresh = state_of(fitter, &fresh_size);
    moe_status status = moe_fitter_load_state_buffer(fitter, data, size);
    if (status != MOE_OK) {
        REQUIRE(moe_fitter_last_error(fitter)[0] != '\0');
        if (fresh != NULL)
            REQUIRE(same_state(fitter, fresh, fresh_size));
        free(fresh);
        moe_fitter_free(fitter);
        return;
    }
    free(fresh);
    /* What was accepted saves to bytes that load back to themselves. */
    size_t saved_size = 0;
    unsigned char *saved = state_of(fitter, &saved_size);
    moe_fitter_free(fitter);
    if (saved == NULL)
        return;
    moe_fitter_t *again = fitter_for(saved, saved_size);
    REQUIRE(moe_fitter_load_state_buffer(again, saved, saved_size) == MOE_OK);
    REQUIRE(same_state(again, saved, saved_size));
    moe_fitter_free(again);
    continue_session(saved, saved_size);
    free(saved);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each input twice: as it is, and with its size field and checksum made right, so that
   mutations get past the checksum to the structure and to the estimator's own state. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_bytes(data, size);
    fuzz_check_repaired(data, size, 24 + 4, check_bytes);
    return 0;
}
