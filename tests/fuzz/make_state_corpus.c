/*
 * Writes the committed seed corpus of the fitter-state harness (tests/fuzz/corpus/state/):
 * the state of every estimator with its defaults and with options set, and ismm sessions of
 * every family at each stage (before the first call, inside the warm start, started with
 * rows waiting in an unfinished batch, with the other bound and Polyak averaging), on the
 * shapes the harness continues them with (state_rows.h: restricted inputs and offsets
 * too). Run by hand when the format
 * changes:
 *
 *   build/tests/fuzz/make_state_corpus tests/fuzz/corpus/state
 */
#include <stdio.h>
#include <stdlib.h>

#include "state_rows.h"

static int save(const moe_fitter_t *fitter, const char *directory, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    moe_status status = moe_fitter_save_state(fitter, path);
    if (status != MOE_OK)
        fprintf(stderr, "%s: %s\n", path, moe_fitter_last_error(fitter));
    return status == MOE_OK ? 0 : 1;
}

/* An option the estimator does not read (MOE_ERR_UNSUPPORTED) is left out of its corpus
   entry; any other failure ends the run. */
static void allow_unread(const moe_fitter_t *fitter, moe_status status, moe_option option)
{
    if (status != MOE_OK && status != MOE_ERR_UNSUPPORTED) {
        fprintf(stderr, "%s: %s\n", moe_option_name(option), moe_fitter_last_error(fitter));
        exit(1);
    }
}

static moe_fitter_t *make(const char *estimator)
{
    moe_fitter_t *fitter = NULL;
    if (moe_fitter_create(&fitter, estimator) != MOE_OK) {
        fprintf(stderr, "%s: %s\n", estimator, moe_last_error());
        exit(1);
    }
    allow_unread(fitter, moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 20), MOE_OPT_MAX_ITER);
    allow_unread(fitter, moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 2), MOE_OPT_N_INIT);
    return fitter;
}

/* One ismm session of a family fed `calls` calls of STATE_ROWS rows, saved. */
static int ismm_session(const char *directory, const char *name, const state_shape *shape,
                        const char *const *options, size_t calls)
{
    moe_family family = shape->family;
    moe_fitter_t *fitter = make("ismm");
    for (size_t o = 0; options[o] != NULL; o += 2)
        if (moe_fitter_set_option(fitter, options[o], options[o + 1]) != MOE_OK) {
            fprintf(stderr, "%s: %s\n", name, moe_fitter_last_error(fitter));
            exit(1);
        }
    moe_model_t *model = state_model_of(shape);
    double X[STATE_ROWS * STATE_FEATURES], y[STATE_ROWS];
    int failures = 0;
    for (size_t c = 0; c < calls; ++c) {
        state_rows(family, c * STATE_ROWS, X, y);
        if (moe_fitter_partial_fit(fitter, model, STATE_ROWS, X, STATE_FEATURES, y, NULL) !=
            MOE_OK) {
            fprintf(stderr, "%s, call %zu: %s\n", name, c, moe_fitter_last_error(fitter));
            failures = 1;
        }
    }
    failures += save(fitter, directory, name);
    moe_model_free(model);
    moe_fitter_free(fitter);
    return failures;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
        return 2;
    }
    const char *directory = argv[1];
    int failures = 0;
    const char *estimators[] = {"em", "gem", "gd", "cqt", "ismm", "ot"};
    for (size_t e = 0; e < 6; ++e) {
        char name[64];
        moe_fitter_t *fitter = make(estimators[e]);
        snprintf(name, sizeof name, "%s_defaults.state", estimators[e]);
        failures += save(fitter, directory, name);
        allow_unread(fitter, moe_fitter_set_double(fitter, MOE_OPT_TOLERANCE, 1e-4),
                     MOE_OPT_TOLERANCE);
        allow_unread(fitter, moe_fitter_set_int(fitter, MOE_OPT_SEED, 12345), MOE_OPT_SEED);
        allow_unread(fitter, moe_fitter_set_int(fitter, MOE_OPT_BATCH_SIZE, 5),
                     MOE_OPT_BATCH_SIZE);
        snprintf(name, sizeof name, "%s_options.state", estimators[e]);
        failures += save(fitter, directory, name);
        moe_fitter_free(fitter);
    }
    const char *warm[] = {"warm_start", "40", "batch_size", "7", NULL};
    const char *started[] = {"warm_start", "30", "batch_size", "7", NULL};
    const char *other[] = {"warm_start", "20", "batch_size", "0", "bound", "bohning",
                           "polyak", "1", NULL};
    for (size_t f = 0; f < STATE_SHAPES; ++f) {
        char name[96];
        const state_shape *shape = &state_shapes[f];
        if (shape->inputs == STATE_OFFSET) /* ismm takes no offset: no session to save */
            continue;
        snprintf(name, sizeof name, "ismm_%s_warm.state", shape->name);
        failures += ismm_session(directory, name, shape, warm, 1);
        snprintf(name, sizeof name, "ismm_%s_waiting.state", shape->name);
        failures += ismm_session(directory, name, shape, started, 2);
        snprintf(name, sizeof name, "ismm_%s_bohning_polyak.state", shape->name);
        failures += ismm_session(directory, name, shape, other, 3);
    }
    return failures == 0 ? 0 : 1;
}
