/*
 * moe fit --batch-size B: a CSV file (or standard input) streamed through the estimator's
 * partial fit, a piece at a time, so the file is never held whole: the table keeps the rows
 * of one piece, the estimator its running statistics. --checkpoint saves the session's state
 * after every piece, at the end and on Ctrl-C; --resume continues a saved session with new
 * rows.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include "cli.h"
#include "row_message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes read at a time. */
enum { PIECE = 1 << 16 };

typedef struct stream {
    const fit_arguments *a;
    moe_fitter_t *fitter;
    moe_model_t *model;
    table data;
    size_t rows;
    int interrupted;
} stream;

static int checkpoint(const stream *s)
{
    if (s->a->checkpoint == NULL)
        return 0;
    if (moe_fitter_save_state(s->fitter, s->a->checkpoint) != MOE_OK) {
        fprintf(stderr, "moe: cannot save the checkpoint: %s\n",
                moe_fitter_last_error(s->fitter));
        return EXIT_FIT_PROBLEM;
    }
    return 0;
}

/* The model, once the header says how many features there are. */
static int create_model(stream *s)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_GAUSSIAN;
    if (moe_link_from_name(s->a->link, &spec.link) != MOE_OK)
        return usage_error("--link: '%s' is not identity, sigmoid or relu", s->a->link);
    spec.intercept = !s->a->no_intercept;
    spec.n_experts = s->a->experts;
    spec.n_features = s->data.d;
    model_inputs inputs;
    int code = resolve_model_inputs(s->a, &s->data, &inputs);
    if (code != 0)
        return code;
    spec_set_inputs(&spec, &inputs);
    moe_status status = moe_model_create(&s->model, &spec);
    free_model_inputs(&inputs);
    if (status != MOE_OK)
        return usage_error("cannot create the model: %s", moe_last_error());
    if (fit_name_model(s->model, &s->data, NULL, 0) != 0)
        return usage_error("cannot name the model: %s", moe_model_last_error(s->model));
    return 0;
}

/* The complete rows read so far, through the partial fit. */
static int consume(stream *s)
{
    table *t = &s->data;
    if (t->n == 0)
        return 0;
    moe_status status = moe_fitter_partial_fit(s->fitter, s->model, t->n, t->X, t->d, t->y, NULL);
    if (status == MOE_ERR_CANCELLED) {
        s->interrupted = 1;
        return EXIT_FIT_PROBLEM;
    }
    if (status != MOE_OK) {
        char context[64], buffer[1024];
        snprintf(context, sizeof context, "after %zu rows, ", s->rows);
        return fit_failure(status, context,
                           row_message(moe_fitter_last_error(s->fitter), s->a->data, t, 0,
                                       buffer, sizeof buffer));
    }
    s->rows += t->n;
    return checkpoint(s);
}

/* --resume continues a session with the settings it was started with: an option given again
   must say the same, for other settings would make the continued stream another model than
   the uninterrupted one. Threads are the exception (results do not depend on them). */
typedef struct saved_session {
    const char *estimator;
    const unsigned char *bytes;
    size_t size;
} saved_session;

static int agrees_with_session(void *opaque, const char *name, const char *value)
{
    const saved_session *saved = opaque;
    if (strcmp(name, "threads") == 0)
        return 0;
    moe_fitter_t *probe = NULL;
    unsigned char *after = NULL;
    size_t size = 0;
    int code = 0;
    /* A value no fitter takes is a plain usage error; one a fresh fitter takes but the
       session refuses (estimators refuse to change their schedule mid-session) or that
       changes the saved settings is a conflict. */
    if (moe_fitter_create(&probe, saved->estimator) != MOE_OK)
        code = usage_error("--resume: %s", moe_last_error());
    else if (moe_fitter_set_option(probe, name, value) != MOE_OK)
        code = usage_error("option %s=%s: %s", name, value, moe_fitter_last_error(probe));
    else if (moe_fitter_load_state_buffer(probe, saved->bytes, saved->size) != MOE_OK)
        code = usage_error("--resume: %s", moe_fitter_last_error(probe));
    int refused = code == 0 && moe_fitter_set_option(probe, name, value) != MOE_OK;
    if (code == 0 && !refused &&
        (moe_fitter_save_state_buffer(probe, NULL, 0, &size) != MOE_OK ||
         (after = malloc(size)) == NULL ||
         moe_fitter_save_state_buffer(probe, after, size, &size) != MOE_OK))
        code = usage_error("--resume: %s", moe_last_error());
    else if (code == 0 && (refused || size != saved->size || memcmp(after, saved->bytes, size) != 0))
        code = usage_error("--resume: %s=%s is not the saved session's setting; a session goes "
                           "on with the settings it was started with (leave the option out, "
                           "or start a new session)",
                           name, value);
    free(after);
    moe_fitter_free(probe);
    return code;
}

/* Load the saved session, check the command line's options against it, then apply threads. */
static int resume_session(stream *s, const char *estimator)
{
    const fit_arguments *a = s->a;
    if (moe_fitter_load_state(s->fitter, a->resume) != MOE_OK)
        return usage_error("--resume %s: %s", a->resume, moe_fitter_last_error(s->fitter));
    saved_session saved = {estimator, NULL, 0};
    unsigned char *bytes = NULL;
    int code = 0;
    if (moe_fitter_save_state_buffer(s->fitter, NULL, 0, &saved.size) != MOE_OK ||
        (bytes = malloc(saved.size)) == NULL ||
        moe_fitter_save_state_buffer(s->fitter, bytes, saved.size, &saved.size) != MOE_OK)
        code = usage_error("--resume %s: %s", a->resume, moe_last_error());
    saved.bytes = bytes;
    if (code == 0)
        code = agrees_with_session(&saved, "batch_size", a->batch_size);
    if (code == 0)
        code = fit_each_option(a, agrees_with_session, &saved);
    if (code == 0 && a->threads != NULL &&
        moe_fitter_set_option(s->fitter, "threads", a->threads) != MOE_OK)
        code = usage_error("--threads %s: %s", a->threads, moe_fitter_last_error(s->fitter));
    free(bytes);
    return code;
}

/* After the stream: the interruption's message and checkpoint, or the model, if one was
   fitted, summarised and saved. Returns the exit code. */
static int finish_stream(stream *s, const char *name, int code)
{
    const fit_arguments *a = s->a;
    if (s->interrupted) {
        /* A cancelled call changed nothing: the session (and the checkpoint) holds exactly
           the rows counted, so resuming with the rows after them continues the stream. */
        fprintf(stderr, "moe: fit interrupted after %zu rows of %s%s\n", s->rows, name,
                a->checkpoint != NULL ? "; the session is saved in the checkpoint: --resume "
                                        "it with the rows after those"
                                      : "");
        checkpoint(s);
    }
    moe_fit_report report = MOE_FIT_REPORT_INIT;
    if (code == 0 && (moe_fitter_get_report(s->fitter, &report) != MOE_OK ||
                      !(report.stages & MOE_STAGE_JOINT))) {
        /* The estimator fitted nothing yet (ismm's warm start is still collecting rows):
           the model is the empty one it started from, not a result. */
        fprintf(stderr, "moe: no model was fitted: the stream ended after %zu rows (session: "
                        "%zu rows), before the estimator's warm start had its rows; stream "
                        "more rows%s, or start sooner with --option warm_start=N\n",
                s->rows, report.samples_seen,
                a->checkpoint != NULL ? " (--resume the checkpoint)" : "");
        code = EXIT_USAGE;
    }
    if (code == 0) {
        /* A stream has no convergence test: the summary shows the session (rows, steps,
           prequential log-likelihood per row, MOE_STAGE_STREAM) and then what was read. */
        fit_summary summary = {NULL, NULL, &report,
                               moe_fitter_estimator_name(s->fitter), report.samples_seen, NULL, 0,
                               0.0, 0.0, 0, NULL};
        if (a->json)
            print_summary_json(stdout, s->model, &summary);
        else {
            print_summary(stdout, s->model, &summary);
            printf("\nfit: %s, streamed %zu rows in pieces of %d KiB (session: %zu rows, %zu "
                   "partial fits), %.3f s\n",
                   moe_fitter_estimator_name(s->fitter), s->rows, PIECE / 1024,
                   report.samples_seen, report.batches, report.seconds);
        }
        if (a->output != NULL && moe_model_save(s->model, a->output) != MOE_OK) {
            fprintf(stderr, "moe: cannot save the model: %s\n", moe_last_error());
            code = EXIT_FIT_PROBLEM;
        }
    }
    return code;
}

int run_stream_fit(const fit_arguments *a)
{
    if (strcmp(a->family, "gaussian") != 0)
        return usage_error("streaming (--batch-size, --checkpoint, --resume) fits Gaussian "
                           "experts only; fit %s experts in memory (without those options)",
                           a->family);
    if (a->batch_size == NULL)
        return usage_error("--checkpoint and --resume stream the data: give --batch-size");
    stream s;
    memset(&s, 0, sizeof s);
    s.a = a;
    /* Streaming needs an estimator with a partial fit: ismm unless one was named. */
    const char *estimator = a->estimator_given ? a->estimator : "ismm";
    if (moe_fitter_create(&s.fitter, estimator) != MOE_OK)
        return usage_error("--estimator: %s", moe_last_error());
    int code = 0;
    if (a->resume != NULL)
        code = resume_session(&s, estimator);
    else if (moe_fitter_set_option(s.fitter, "batch_size", a->batch_size) != MOE_OK)
        code = usage_error("--batch-size %s: %s", a->batch_size, moe_fitter_last_error(s.fitter));
    else
        code = fit_set_options(s.fitter, a);
    FILE *file = NULL;
    int from_stdin = strcmp(a->data, "-") == 0;
    if (code == 0) {
        file = from_stdin ? stdin : fopen(a->data, "rb");
        if (file == NULL)
            code = usage_error("cannot open %s", a->data);
    }
    table_request request = {a->response, 0, NULL, 0, a->delimiter, 1, 0, 0};
    const char **features = NULL;
    /* As moe fit without streaming: without --features, the columns the parts name. */
    char *feature_list = a->features != NULL ? strdup(a->features) : model_columns(a);
    if (feature_list != NULL) {
        size_t count = 0;
        features = calloc(strlen(feature_list) + 1, sizeof *features);
        char *token = strtok(feature_list, ",");
        while (token != NULL && features != NULL) {
            features[count++] = token;
            token = strtok(NULL, ",");
        }
        request.features = features;
        request.n_features = count;
    }
    const char *name = from_stdin ? "standard input" : a->data;
    table_reader *reader = code == 0 ? table_reader_begin(name, &request, &s.data) : NULL;
    if (code == 0 && reader == NULL)
        code = usage_error("out of memory");
    fit_watch watch;
    fit_watch_begin(s.fitter, &watch);
    unsigned char *piece = malloc(PIECE);
    if (code == 0 && piece == NULL)
        code = usage_error("out of memory");
    int reading = code == 0;
    while (reading) {
        size_t got = fread(piece, 1, PIECE, file);
        /* Ctrl-C while waiting for rows (a read cut short by the signal is no read error):
           stop with the rows consumed so far, as after a cancelled call. */
        if (fit_interrupted()) {
            clearerr(file);
            s.interrupted = 1;
            code = EXIT_FIT_PROBLEM;
            break;
        }
        if (got > 0 && table_reader_feed(reader, piece, got) != 0)
            break; /* the reader's message comes with table_reader_end */
        if (s.model == NULL && table_reader_header_done(reader) && (code = create_model(&s)) != 0)
            break;
        if (s.model != NULL && (code = consume(&s)) != 0)
            break;
        if (s.model != NULL)
            table_reader_discard_rows(reader);
        if (got < PIECE)
            reading = 0;
    }
    if (file != NULL && ferror(file) && code == 0)
        code = usage_error("%s: read error", name);
    char error[1024];
    if (reader != NULL && table_reader_end(reader, error, sizeof error) != 0 && code == 0)
        code = usage_error("%s", error);
    /* A header the last piece completed. */
    if (code == 0 && s.model == NULL)
        code = create_model(&s);
    if (code == 0)
        code = consume(&s);
    fit_watch_end(&watch);
    code = finish_stream(&s, name, code);
    if (file != NULL && !from_stdin)
        fclose(file);
    free(piece);
    free(features);
    free(feature_list);
    table_free(&s.data);
    moe_model_free(s.model);
    moe_fitter_free(s.fitter);
    return code;
}
