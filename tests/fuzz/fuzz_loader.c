/*
 * Fuzz harness: the model loader, and everything a caller may do with what it accepts.
 *
 * Any byte string goes to moe_model_load_buffer. A rejected one must come back with a
 * message and no model. An accepted one is used as a caller would: saved again (it must
 * give the same bytes, as docs in lib/model/io.c promise), cloned, asked for predictions,
 * gate probabilities, posteriors, the log-likelihood and the criteria on a small fixed data
 * set, and canonicalised. Each answer must be MOE_OK with finite, well-formed values
 * (probability rows summing to 1) or an error status with a message; canonicalize must
 * either leave the model unchanged or keep its predictions valid. A broken promise traps,
 * which the fuzzer reports as a crash.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "repaired.h"

#define REQUIRE(condition)                                                                     \
    do {                                                                                       \
        if (!(condition))                                                                      \
            __builtin_trap();                                                                  \
    } while (0)

enum { ROWS = 5 };

/* An error status must come with a message. */
static void require_outcome(moe_status status)
{
    if (status != MOE_OK)
        REQUIRE(moe_last_error()[0] != '\0');
}

static void require_probability_rows(const double *values, size_t rows, size_t width)
{
    for (size_t i = 0; i < rows; ++i) {
        double sum = 0.0;
        for (size_t k = 0; k < width; ++k) {
            double v = values[i * width + k];
            REQUIRE(isfinite(v) && v >= 0.0 && v <= 1.0 + 1e-12);
            sum += v;
        }
        if (width > 1)
            REQUIRE(fabs(sum - 1.0) <= 1e-12);
    }
}

typedef struct workspace {
    size_t d, K, width;
    double *X, *y, *out;
} workspace;

static int workspace_make(workspace *w, const moe_model_t *model)
{
    w->d = moe_model_n_features(model);
    w->K = moe_model_n_experts(model);
    size_t classes = moe_model_n_classes(model);
    moe_family family = moe_model_family(model);
    w->width = family == MOE_FAMILY_MULTINOMIAL ? classes : 1;
    size_t columns = w->K > w->width ? w->K : w->width;
    w->X = malloc((ROWS * w->d + 1) * sizeof(double));
    w->y = malloc(ROWS * sizeof(double));
    w->out = malloc(ROWS * columns * sizeof(double));
    if (w->X == NULL || w->y == NULL || w->out == NULL)
        return 0;
    /* Fixed, ordinary rows: mixed signs, one far-out row. */
    for (size_t i = 0; i < ROWS; ++i) {
        for (size_t j = 0; j < w->d; ++j)
            w->X[i * w->d + j] = (double)((int)((i * 7 + j * 3) % 9) - 4) * (i == 3 ? 25.0 : 0.5);
        /* real responses (Gaussian, t), labels, or counts 0..4 (Poisson) */
        size_t labels = family == MOE_FAMILY_LOGISTIC      ? 2
                        : family == MOE_FAMILY_MULTINOMIAL ? classes
                        : family == MOE_FAMILY_POISSON     ? 5
                                                           : 0;
        w->y[i] = labels == 0 ? 0.25 * (double)i - 0.5 : (double)(i % labels);
    }
    return 1;
}

static void workspace_free(workspace *w)
{
    free(w->X);
    free(w->y);
    free(w->out);
}

/* Predictions and everything computed from data; returns predict's status. */
static moe_status exercise(const moe_model_t *model, workspace *w)
{
    moe_family family = moe_model_family(model);
    moe_status status = moe_model_gate_proba(model, ROWS, w->X, w->d, w->out, ROWS * w->K);
    require_outcome(status);
    if (status == MOE_OK)
        require_probability_rows(w->out, ROWS, w->K);
    status = moe_model_posterior(model, ROWS, w->X, w->d, w->y, w->out, ROWS * w->K);
    require_outcome(status);
    if (status == MOE_OK)
        require_probability_rows(w->out, ROWS, w->K);
    double loglik = NAN;
    status = moe_model_loglik(model, ROWS, w->X, w->d, w->y, NULL, &loglik);
    require_outcome(status);
    if (status == MOE_OK)
        REQUIRE(isfinite(loglik));
    moe_criteria criteria = MOE_CRITERIA_INIT;
    status = moe_model_criteria(model, ROWS, w->X, w->d, w->y, NULL, &criteria);
    require_outcome(status);
    if (status == MOE_OK)
        REQUIRE(isfinite(criteria.aic) && isfinite(criteria.bic) && isfinite(criteria.icl) &&
                isfinite(criteria.entropy));
    status = moe_model_predict(model, ROWS, w->X, w->d, w->out, ROWS * w->width);
    require_outcome(status);
    if (status == MOE_OK) {
        if (family == MOE_FAMILY_LOGISTIC || family == MOE_FAMILY_MULTINOMIAL)
            require_probability_rows(w->out, ROWS, w->width);
        else if (family == MOE_FAMILY_POISSON)
            /* a mean count: exp of a finite predictor may overflow, never go below 0 */
            for (size_t i = 0; i < ROWS; ++i)
                REQUIRE(w->out[i] >= 0.0);
        else
            for (size_t i = 0; i < ROWS; ++i)
                REQUIRE(isfinite(w->out[i]));
    }
    return status;
}

/* The model's serialization (malloc'ed), or NULL. */
static unsigned char *serialize(const moe_model_t *model, size_t *size)
{
    size_t needed = 0;
    moe_status status = moe_model_save_buffer(model, NULL, 0, &needed);
    REQUIRE(status == MOE_OK && needed > 0);
    unsigned char *bytes = malloc(needed);
    if (bytes == NULL)
        return NULL;
    REQUIRE(moe_model_save_buffer(model, bytes, needed, size) == MOE_OK && *size == needed);
    return bytes;
}

static void check_bytes(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each input twice: as it is, and with its size field and checksum made right (repaired.h). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_bytes(data, size);
    fuzz_check_repaired(data, size, 64 + 4, check_bytes);
    return 0;
}

static void check_bytes(const uint8_t *data, size_t size)
{
    moe_model_t *model = (moe_model_t *)(uintptr_t)1;
    moe_status status = moe_model_load_buffer(&model, data, size);
    if (status != MOE_OK) {
        REQUIRE(model == NULL);
        require_outcome(status);
        return;
    }
    REQUIRE(model != NULL);

    /* Accepted bytes are exactly the model's serialization. */
    size_t saved_size = 0;
    unsigned char *saved = serialize(model, &saved_size);
    if (saved != NULL)
        REQUIRE(saved_size == size && memcmp(saved, data, size) == 0);

    moe_model_t *clone = NULL;
    status = moe_model_clone(&clone, model);
    require_outcome(status);
    if (status == MOE_OK) {
        size_t clone_size = 0;
        unsigned char *clone_bytes = serialize(clone, &clone_size);
        if (clone_bytes != NULL && saved != NULL)
            REQUIRE(clone_size == saved_size && memcmp(clone_bytes, saved, saved_size) == 0);
        free(clone_bytes);
    }

    workspace w;
    if (workspace_make(&w, model)) {
        exercise(model, &w);
        status = moe_model_canonicalize(model);
        require_outcome(status);
        REQUIRE(status == MOE_OK || status == MOE_ERR_NUMERICAL);
        size_t after_size = 0;
        unsigned char *after = serialize(model, &after_size);
        if (status != MOE_OK && after != NULL && saved != NULL)
            REQUIRE(after_size == saved_size && memcmp(after, saved, saved_size) == 0);
        if (status == MOE_OK) {
            exercise(model, &w);
            /* What canonicalize made still loads, to the same bytes. */
            moe_model_t *reloaded = NULL;
            if (after != NULL) {
                REQUIRE(moe_model_load_buffer(&reloaded, after, after_size) == MOE_OK);
                size_t again_size = 0;
                unsigned char *again = serialize(reloaded, &again_size);
                if (again != NULL)
                    REQUIRE(again_size == after_size && memcmp(again, after, after_size) == 0);
                free(again);
                moe_model_free(reloaded);
            }
        }
        free(after);
    }
    workspace_free(&w);
    free(saved);
    moe_model_free(clone);
    moe_model_free(model);
}
