/* Fitter options: by number or by name, bounds, and the decimal text form. */
#define _POSIX_C_SOURCE 200809L
#include "fitter/fitter_impl.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    if (!(fitter->option_mask & MOE_OPTION_BIT(option)))
        return moe_fail(fitter->message, MOE_ERR_UNSUPPORTED,
                        "estimator '%s' does not use option '%s'", fitter->ops.name,
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
        if (fitter->ops.set_option == NULL)
            return moe_fail(fitter->message, MOE_ERR_NOT_FOUND,
                            "estimator '%s' has no option '%s'", fitter->ops.name, name);
        moe_status status = fitter->ops.set_option(fitter->state, name, value);
        if (status != MOE_OK)
            return moe_fail(fitter->message, status, "estimator '%s' rejected option '%s' = '%s'",
                            fitter->ops.name, name, value);
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


moe_status moe_option_parse_real(const char *text, double *value)
{
    if (text == NULL || value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", text == NULL ? "text" : "value");
    double parsed = 0.0;
    parse_outcome outcome = parse_number(text, &parsed);
    if (outcome != PARSED)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "'%s' %s", text, parse_problem(outcome));
    *value = parsed;
    return MOE_OK;
}

moe_status moe_option_parse_integer(const char *text, long long *value)
{
    if (text == NULL || value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", text == NULL ? "text" : "value");
    long long parsed = 0;
    parse_outcome outcome = parse_integer(text, &parsed);
    if (outcome == NOT_A_NUMBER)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "'%s' is not a decimal integer", text);
    if (outcome != PARSED)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "'%s' %s", text, parse_problem(outcome));
    *value = parsed;
    return MOE_OK;
}
