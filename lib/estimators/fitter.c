/* The fitter handle: estimator selection, options, progress, and the fit driver. */
#define _POSIX_C_SOURCE 200809L
#include "estimators/fitter_impl.h"
#include "common/check.h"
#include "model/family.h"
#include "model/posterior.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static moe_status fitter_new(moe_fitter_t **out, const moe_estimator_ops *ops,
                             const moe_builtin_estimator *builtin)
{
    struct moe_fitter *fitter = calloc(1, sizeof *fitter);
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a fitter");
    fitter->ops = ops;
    fitter->builtin = builtin;
    moe_option_values_default(&fitter->options);
    /* report.version stays 0 until a fit runs: that is how get_report knows there is none. */
    moe_status status = ops->create(&fitter->state);
    if (status != MOE_OK) {
        free(fitter);
        return moe_fail(NULL, status, "estimator '%s' could not create its state", ops->name);
    }
    *out = fitter;
    return MOE_OK;
}

moe_status moe_fitter_create(moe_fitter_t **out, const char *estimator)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (estimator == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "estimator name is NULL");
    const moe_builtin_estimator *builtin = moe_builtin_find(estimator);
    if (builtin == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "no built-in estimator named '%s'", estimator);
    return fitter_new(out, builtin->ops, builtin);
}

moe_status moe_fitter_create_custom(moe_fitter_t **out, const moe_estimator_ops *ops)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (ops == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "ops is NULL");
    if (ops->abi_version != MOE_ESTIMATOR_ABI_VERSION)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "estimator ABI version %u is not supported (this libmoe has %d)",
                        ops->abi_version, MOE_ESTIMATOR_ABI_VERSION);
    if (ops->name == NULL || ops->name[0] == '\0')
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "estimator name is missing");
    if (ops->create == NULL || ops->destroy == NULL || ops->fit == NULL)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s' lacks create, destroy or fit", ops->name);
    return fitter_new(out, ops, NULL);
}

void moe_fitter_free(moe_fitter_t *fitter)
{
    if (fitter == NULL)
        return;
    fitter->ops->destroy(fitter->state);
    free(fitter->trace);
    free(fitter);
}

const char *moe_fitter_estimator_name(const moe_fitter_t *fitter)
{
    return fitter == NULL ? NULL : fitter->ops->name;
}

const char *moe_fitter_last_error(const moe_fitter_t *fitter)
{
    return fitter == NULL ? "" : fitter->message;
}

moe_status moe_option_bounds(moe_option option, double *lower, double *upper, int *is_integer)
{
    const moe_option_info *info = moe_option_info_get(option);
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown option number %d", (int)option);
    if (lower != NULL)
        *lower = info->lower;
    if (upper != NULL)
        *upper = info->upper;
    if (is_integer != NULL)
        *is_integer = info->is_integer;
    return MOE_OK;
}

/* Look an option up and check the fitter's estimator reads it. */
static moe_status usable_option(struct moe_fitter *fitter, moe_option option,
                                const moe_option_info **info)
{
    *info = moe_option_info_get(option);
    if (*info == NULL)
        return moe_fail(fitter->message, MOE_ERR_NOT_FOUND, "unknown option number %d",
                        (int)option);
    if (fitter->builtin != NULL && !(fitter->builtin->option_mask & MOE_OPTION_BIT(option)))
        return moe_fail(fitter->message, MOE_ERR_UNSUPPORTED,
                        "estimator '%s' does not use option '%s'", fitter->ops->name,
                        (*info)->name);
    return MOE_OK;
}

static moe_status store_value(struct moe_fitter *fitter, const moe_option_info *info,
                              double value, long long integer)
{
    if (info->is_integer) {
        if ((double)integer < info->lower || (double)integer > info->upper)
            return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                            "option '%s' must be in [%.17g, %.17g], got %lld", info->name,
                            info->lower, info->upper, integer);
        fitter->options.integer[info->id] = integer;
    } else {
        if (!isfinite(value) || value < info->lower || value > info->upper)
            return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                            "option '%s' must be in [%g, %g], got %g", info->name, info->lower,
                            info->upper, value);
        fitter->options.real[info->id] = value;
    }
    return MOE_OK;
}

moe_status moe_fitter_set_int(moe_fitter_t *fitter, moe_option option, long long value)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    const moe_option_info *info;
    moe_status status = usable_option(fitter, option, &info);
    if (status != MOE_OK)
        return status;
    return store_value(fitter, info, (double)value, value);
}

moe_status moe_fitter_set_double(moe_fitter_t *fitter, moe_option option, double value)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    const moe_option_info *info;
    moe_status status = usable_option(fitter, option, &info);
    if (status != MOE_OK)
        return status;
    if (info->is_integer) {
        if (!isfinite(value) || value != floor(value) || value < info->lower ||
            value > info->upper)
            return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                            "option '%s' takes an integer in [%.17g, %.17g], got %g", info->name,
                            info->lower, info->upper, value);
        return store_value(fitter, info, value, (long long)value);
    }
    return store_value(fitter, info, value, 0);
}

moe_status moe_fitter_get_int(const moe_fitter_t *fitter, moe_option option, long long *value)
{
    if (fitter == NULL || value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "value" : "fitter");
    const moe_option_info *info = moe_option_info_get(option);
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown option number %d", (int)option);
    *value = info->is_integer ? fitter->options.integer[option]
                              : (long long)fitter->options.real[option];
    return MOE_OK;
}

moe_status moe_fitter_get_double(const moe_fitter_t *fitter, moe_option option, double *value)
{
    if (fitter == NULL || value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "value" : "fitter");
    const moe_option_info *info = moe_option_info_get(option);
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown option number %d", (int)option);
    *value = info->is_integer ? (double)fitter->options.integer[option]
                              : fitter->options.real[option];
    return MOE_OK;
}

/*
 * Option values are decimal text: an optional sign, digits with an optional fraction, and an
 * optional exponent for real options. strtod alone would also take hexadecimal ("0x10" is
 * 16), "inf", "nan" and leading spaces, none of which a user writing an option means.
 */
static int decimal_syntax(const char *text, int allow_real)
{
    const char *at = text;
    if (*at == '+' || *at == '-')
        ++at;
    size_t digits = 0;
    while (*at >= '0' && *at <= '9')
        ++at, ++digits;
    if (allow_real && *at == '.') {
        ++at;
        while (*at >= '0' && *at <= '9')
            ++at, ++digits;
    }
    if (digits == 0)
        return 0;
    if (allow_real && (*at == 'e' || *at == 'E')) {
        ++at;
        if (*at == '+' || *at == '-')
            ++at;
        if (!(*at >= '0' && *at <= '9'))
            return 0;
        while (*at >= '0' && *at <= '9')
            ++at;
    }
    return *at == '\0';
}

/* Whether decimal text has a nonzero digit before its exponent. */
static int has_nonzero_digit(const char *text)
{
    for (const char *at = text; *at != '\0' && *at != 'e' && *at != 'E'; ++at)
        if (*at >= '1' && *at <= '9')
            return 1;
    return 0;
}

typedef enum parse_outcome { PARSED, NOT_A_NUMBER, OVERFLOWS, UNDERFLOWS } parse_outcome;

static const char *parse_problem(parse_outcome outcome)
{
    return outcome == OVERFLOWS    ? "overflows"
           : outcome == UNDERFLOWS ? "underflows (its magnitude is below the smallest "
                                     "normal double)"
                                   : "is not a decimal number";
}

/* strtod in the C locale whatever the process locale, for this thread only. */
static parse_outcome parse_number(const char *text, double *value)
{
    if (!decimal_syntax(text, 1))
        return NOT_A_NUMBER;
    locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_locale == (locale_t)0)
        return NOT_A_NUMBER;
    locale_t previous = uselocale(c_locale);
    char *end = NULL;
    errno = 0;
    *value = strtod(text, &end);
    int range_error = errno == ERANGE;
    uselocale(previous);
    freelocale(c_locale);
    if (*end != '\0')
        return NOT_A_NUMBER;
    if (isinf(*value))
        return OVERFLOWS;
    /* glibc reports ERANGE for subnormal results too; a nonzero literal read as zero is an
       underflow whatever errno says. */
    if ((range_error || *value == 0.0) && has_nonzero_digit(text) &&
        fabs(*value) < DBL_MIN)
        return UNDERFLOWS;
    return PARSED;
}

static parse_outcome parse_integer(const char *text, long long *value)
{
    if (!decimal_syntax(text, 0))
        return NOT_A_NUMBER;
    char *end = NULL;
    errno = 0;
    *value = strtoll(text, &end, 10);
    if (*end != '\0')
        return NOT_A_NUMBER;
    return errno == ERANGE ? OVERFLOWS : PARSED;
}

moe_status moe_fitter_set_option(moe_fitter_t *fitter, const char *name, const char *value)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    if (name == NULL || value == NULL)
        return moe_fail(fitter->message, MOE_ERR_NULL_POINTER, "option %s is NULL",
                        name == NULL ? "name" : "value");
    const moe_option_info *info = moe_option_info_find(name);
    if (info == NULL) {
        if (fitter->ops->set_option == NULL)
            return moe_fail(fitter->message, MOE_ERR_NOT_FOUND,
                            "estimator '%s' has no option '%s'", fitter->ops->name, name);
        moe_status status = fitter->ops->set_option(fitter->state, name, value);
        if (status != MOE_OK)
            return moe_fail(fitter->message, status, "estimator '%s' rejected option '%s' = '%s'",
                            fitter->ops->name, name, value);
        return MOE_OK;
    }
    moe_status status = usable_option(fitter, info->id, &info);
    if (status != MOE_OK)
        return status;
    if (info->keywords != NULL)
        for (long long k = 0; info->keywords[k] != NULL; ++k)
            if (strcmp(info->keywords[k], value) == 0)
                return store_value(fitter, info, (double)k, k);
    if (info->is_integer) {
        long long integer;
        parse_outcome outcome = parse_integer(value, &integer);
        if (outcome == NOT_A_NUMBER)
            return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                            "option '%s' takes a decimal integer, got '%s'", name, value);
        if (outcome != PARSED)
            return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                            "option '%s': '%s' %s", name, value, parse_problem(outcome));
        return store_value(fitter, info, (double)integer, integer);
    }
    double real;
    parse_outcome outcome = parse_number(value, &real);
    if (outcome == NOT_A_NUMBER)
        return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                        "option '%s' takes a decimal number, got '%s'", name, value);
    if (outcome != PARSED)
        return moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT, "option '%s': '%s' %s",
                        name, value, parse_problem(outcome));
    return store_value(fitter, info, real, 0);
}

moe_status moe_fitter_set_progress(moe_fitter_t *fitter, moe_progress_fn callback,
                                   void *user_data)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    fitter->progress = callback;
    fitter->progress_data = user_data;
    return MOE_OK;
}

moe_status moe_fitter_get_report(const moe_fitter_t *fitter, moe_fit_report *report)
{
    if (fitter == NULL || report == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "report" : "fitter");
    if (report->version < 1 || report->version > MOE_FIT_REPORT_VERSION)
        return moe_fail(NULL, MOE_ERR_UNSUPPORTED,
                        "report version %u is not supported (set MOE_FIT_REPORT_VERSION)",
                        report->version);
    static const size_t version_sizes[] = {
        0,
        offsetof(moe_fit_report, gradient_evaluations) + sizeof(size_t),
        offsetof(moe_fit_report, floored_variances) + sizeof(size_t),
        sizeof(moe_fit_report),
    };
    unsigned int version = report->version;
    if (fitter->report.version == 0) {
        /* A caller that ignores the return value must not read a success either. */
        memset(report, 0, version_sizes[version]);
        report->version = version;
        report->status = MOE_ERR_INVALID_ARGUMENT;
        report->loglik = NAN;
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "no fit has run on this fitter");
    }
    memcpy(report, &fitter->report, version_sizes[version]);
    report->version = version;
    return MOE_OK;
}

moe_status moe_fitter_get_trace(const moe_fitter_t *fitter, double *trace, size_t capacity,
                                size_t *length)
{
    if (length != NULL)
        *length = 0;
    if (fitter == NULL || length == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "length" : "fitter");
    if (trace == NULL && capacity > 0)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER,
                        "trace is NULL but capacity is %zu (capacity 0 asks for the length)",
                        capacity);
    if (fitter->report.version == 0)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "no fit has run on this fitter");
    *length = fitter->trace_length;
    if (trace == NULL)
        return MOE_OK; /* the size query of moe/common.h */
    if (capacity < fitter->trace_length)
        return moe_fail(NULL, MOE_ERR_BUFFER_TOO_SMALL,
                        "trace holds %zu values, the trace has %zu", capacity,
                        fitter->trace_length);
    if (fitter->trace_length > 0)
        memcpy(trace, fitter->trace, fitter->trace_length * sizeof(double));
    return MOE_OK;
}

static double now_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Everything an estimator may rely on: sizes, finiteness, labels, weights, sample count. */
static moe_status validate_fit_input(struct moe_fitter *fitter, const struct moe_model *model,
                                     size_t n, const double *X, size_t ldx, const double *y,
                                     const double *weights)
{
    char *message = fitter->message;
    if (model == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "model is NULL");
    moe_status status = moe_check_design(message, n, X, ldx, model->n_features);
    if (status == MOE_OK)
        status = moe_check_response_values(message, n, y);
    if (status == MOE_OK)
        status = model->family_ops->check_response(model, n, y, message);
    if (status == MOE_OK)
        status = moe_check_weights(message, n, weights);
    if (status != MOE_OK)
        return status;
    size_t usable = 0;
    for (size_t i = 0; i < n; ++i)
        usable += weights == NULL || weights[i] > 0.0;
    size_t needed = moe_model_n_free_params(model);
    if (usable < needed)
        return moe_fail(message, MOE_ERR_TOO_FEW_SAMPLES,
                        "%zu samples with positive weight for %zu free parameters", usable,
                        needed);
    return MOE_OK;
}

static void finish_report(struct moe_fitter *fitter, struct moe_fit_context *context,
                          moe_status status)
{
    /* An estimator that ran a single restart and succeeded need not name it. */
    if (status == MOE_OK && !context->result_set && context->n_traces == 1)
        moe_context_set_result(context, 0, 0);
    moe_fit_report *report = &fitter->report;
    report->n_restarts = context->n_traces;
    report->total_iterations = 0;
    for (size_t r = 0; r < context->n_traces; ++r)
        if (context->traces[r].length > 0)
            report->total_iterations += context->traces[r].length - 1;
    free(fitter->trace);
    fitter->trace = NULL;
    fitter->trace_length = 0;
    if (status == MOE_OK && context->loglik_evaluated)
        report->loglik = context->unrecorded_loglik;
    if (!context->result_set || context->best_restart >= context->n_traces)
        return;
    moe_trace *best = &context->traces[context->best_restart];
    report->best_restart = context->best_restart;
    report->converged = status == MOE_OK && context->converged;
    if (best->length > 0) {
        report->iterations = best->length - 1;
        report->loglik = best->values[best->length - 1];
    }
    fitter->trace = best->values;
    fitter->trace_length = best->length;
    best->values = NULL;
}

/*
 * What a successful estimator hands back must be finite: its parameters (built-ins write them
 * directly, past the setters' checks) and the log-likelihood the report will carry. An
 * estimator that recorded no iteration gets its log-likelihood evaluated here.
 */
static moe_status check_fit_outcome(struct moe_fitter *fitter, struct moe_fit_context *context)
{
    const struct moe_model *model = context->model;
    const double *arrays[] = {model->gate, model->experts, model->variances};
    size_t sizes[] = {moe_gate_size(model), moe_experts_size(model),
                      model->variances == NULL ? 0 : model->n_experts};
    const char *names[] = {"gate", "expert", "variance"};
    for (size_t a = 0; a < 3; ++a)
        for (size_t i = 0; i < sizes[a]; ++i)
            if (!isfinite(arrays[a][i]) || (a == 2 && !(arrays[a][i] > 0.0)))
                return moe_fail(fitter->message, MOE_ERR_NUMERICAL,
                                "estimator '%s' produced %s parameter %zu = %g",
                                fitter->ops->name, names[a], i, arrays[a][i]);
    if (!context->result_set && context->n_traces != 1) {
        moe_posterior_result result;
        moe_status status = moe_posterior_pass(model, &context->data, NULL, 1, &result,
                                               fitter->message);
        if (status != MOE_OK)
            return status;
        context->unrecorded_loglik = result.loglik;
        context->loglik_evaluated = 1;
    }
    return MOE_OK;
}

static moe_status run_fit(moe_fitter_t *fitter, moe_model_t *model, size_t n, const double *X,
                          size_t ldx, const double *y, const double *weights, int partial)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    double started = now_seconds();
    memset(&fitter->report, 0, sizeof fitter->report);
    fitter->report.version = MOE_FIT_REPORT_VERSION;
    fitter->report.loglik = NAN;
    fitter->message[0] = '\0';
    free(fitter->trace);
    fitter->trace = NULL;
    fitter->trace_length = 0;
    moe_status status = validate_fit_input(fitter, model, n, X, ldx, y, weights);
    if (status == MOE_OK && partial && fitter->ops->partial_fit == NULL)
        status = moe_fail(fitter->message, MOE_ERR_UNSUPPORTED,
                          "estimator '%s' does not support partial_fit", fitter->ops->name);
    if (status != MOE_OK) {
        fitter->report.status = status;
        fitter->report.seconds = now_seconds() - started;
        return status;
    }
    struct moe_fit_context context;
    memset(&context, 0, sizeof context);
    context.fitter = fitter;
    context.data.n = n;
    context.data.n_features = model->n_features;
    context.data.ldx = model->n_features == 0 ? 0 : ldx;
    context.data.intercept = model->intercept;
    context.data.X = X;
    context.data.y = y;
    context.data.weights = weights;
    status = moe_model_clone(&context.model, model);
    if (status != MOE_OK) {
        moe_fail_propagate(fitter->message, status);
    } else {
        status = partial ? fitter->ops->partial_fit(fitter->state, &context)
                         : fitter->ops->fit(fitter->state, &context);
        if (status != MOE_OK && fitter->message[0] == '\0')
            moe_fail(fitter->message, status, "estimator '%s' failed: %s", fitter->ops->name,
                     moe_strerror(status));
        else if (status != MOE_OK)
            moe_fail(NULL, status, "%s", fitter->message); /* mirror into the thread slot */
        if (status == MOE_OK)
            status = check_fit_outcome(fitter, &context);
        finish_report(fitter, &context, status);
        int keep = status == MOE_OK || (status == MOE_ERR_CANCELLED && context.result_set);
        if (keep) {
            moe_status ordered = moe_model_canonicalize(context.model);
            if (ordered != MOE_OK) {
                status = moe_fail(fitter->message, ordered,
                                  "could not put the fitted experts in canonical order: %s",
                                  moe_model_last_error(context.model));
                keep = 0;
            }
        }
        if (keep)
            moe_model_copy_parameters(model, context.model);
    }
    for (size_t r = 0; r < context.n_traces; ++r)
        free(context.traces[r].values);
    free(context.traces);
    moe_model_free(context.model);
    if (status == MOE_OK)
        fitter->message[0] = '\0'; /* a restart that failed on the way is not the outcome */
    fitter->report.status = status;
    fitter->report.seconds = now_seconds() - started;
    return status;
}

moe_status moe_fitter_fit(moe_fitter_t *fitter, moe_model_t *model, size_t n, const double *X,
                          size_t ldx, const double *y, const double *weights)
{
    return run_fit(fitter, model, n, X, ldx, y, weights, 0);
}

moe_status moe_fitter_partial_fit(moe_fitter_t *fitter, moe_model_t *model, size_t n,
                                  const double *X, size_t ldx, const double *y,
                                  const double *weights)
{
    return run_fit(fitter, model, n, X, ldx, y, weights, 1);
}
