/* Fitter options: by number or by name, their descriptions, bounds, and the decimal text
   form. The pinned options' values live in the fitter; an estimator's own in its state,
   reached through its table's set_option and get_option. */
#define _POSIX_C_SOURCE 200809L
#include "fitter/fitter_impl.h"
#include "common/check.h"
#include "common/versioned.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t keyword_count(const char *const *keywords)
{
    size_t count = 0;
    while (keywords != NULL && keywords[count] != NULL)
        ++count;
    return count;
}

/* The bounds a value must meet: a keyword option's are its keywords' indices. */
static void option_bounds(const moe_option_info *info, double *lower, double *upper,
                          unsigned int *flags)
{
    if (info->type == MOE_OPTION_KEYWORD) {
        *lower = 0.0;
        *upper = (double)keyword_count(info->keywords) - 1.0;
        *flags = 0;
    } else {
        *lower = info->lower;
        *upper = info->upper;
        *flags = info->flags;
    }
}

/* MOE_OK when value is one the option takes; else the message says why. */
static moe_status check_value(char *message, const moe_option_info *info, double value)
{
    double lower, upper;
    unsigned int flags;
    option_bounds(info, &lower, &upper, &flags);
    int integral = info->type != MOE_OPTION_REAL;
    int below = (flags & MOE_OPTION_LOWER_OPEN) ? !(value > lower) : !(value >= lower);
    int above = (flags & MOE_OPTION_UPPER_OPEN) ? !(value < upper) : !(value <= upper);
    if (!isfinite(value) || below || above)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT, "option '%s' must be in %c%.17g, %.17g%c, got %.17g",
                        info->name, (flags & MOE_OPTION_LOWER_OPEN) ? '(' : '[', lower, upper,
                        (flags & MOE_OPTION_UPPER_OPEN) ? ')' : ']', value);
    if (integral && value != floor(value))
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "option '%s' takes an integer, got %.17g", info->name, value);
    return MOE_OK;
}

/* Look a pinned option up and check the fitter's estimator reads it. */
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

static void store_pinned(struct moe_fitter *fitter, const moe_option_info *info, double value,
                         long long integer)
{
    if (info->type == MOE_OPTION_REAL)
        fitter->options.real[info->number] = value;
    else
        fitter->options.integer[info->number] = integer;
}

moe_status moe_fitter_set_int(moe_fitter_t *fitter, moe_option option, long long value)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    const moe_option_info *info;
    moe_status status = usable_option(fitter, option, &info);
    if (status == MOE_OK && (value > (1ll << 53) || value < -(1ll << 53)))
        status = moe_fail(fitter->message, MOE_ERR_INVALID_ARGUMENT,
                          "option '%s' must be in [%.17g, %.17g], got %lld", info->name,
                          info->lower, info->upper, value);
    if (status == MOE_OK)
        status = check_value(fitter->message, info, (double)value);
    if (status == MOE_OK)
        store_pinned(fitter, info, (double)value, value);
    return status;
}

moe_status moe_fitter_set_double(moe_fitter_t *fitter, moe_option option, double value)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    const moe_option_info *info;
    moe_status status = usable_option(fitter, option, &info);
    if (status == MOE_OK)
        status = check_value(fitter->message, info, value);
    if (status == MOE_OK)
        store_pinned(fitter, info, value, (long long)value);
    return status;
}

moe_status moe_fitter_get_int(const moe_fitter_t *fitter, moe_option option, long long *value)
{
    if (fitter == NULL || value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "value" : "fitter");
    const moe_option_info *info = moe_option_info_get(option);
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown option number %d", (int)option);
    *value = moe_option_values_int(&fitter->options, info);
    return MOE_OK;
}

moe_status moe_fitter_get_double(const moe_fitter_t *fitter, moe_option option, double *value)
{
    if (fitter == NULL || value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "value" : "fitter");
    const moe_option_info *info = moe_option_info_get(option);
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown option number %d", (int)option);
    *value = moe_option_values_double(&fitter->options, info);
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

/* Text to a value the option takes: a keyword (or its index), a decimal integer, or a
   decimal number, within the bounds. */
static moe_status parse_value(char *message, const moe_option_info *info, const char *text,
                              double *value)
{
    for (size_t k = 0; info->type == MOE_OPTION_KEYWORD && info->keywords[k] != NULL; ++k)
        if (strcmp(info->keywords[k], text) == 0) {
            *value = (double)k;
            return MOE_OK;
        }
    parse_outcome outcome;
    if (info->type == MOE_OPTION_REAL) {
        outcome = parse_number(text, value);
        if (outcome == NOT_A_NUMBER)
            return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                            "option '%s' takes a decimal number, got '%s'", info->name, text);
    } else {
        long long integer = 0;
        outcome = parse_integer(text, &integer);
        if (outcome == NOT_A_NUMBER)
            return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                            info->type == MOE_OPTION_KEYWORD
                                ? "option '%s' takes a keyword or its index, got '%s'"
                                : "option '%s' takes a decimal integer, got '%s'",
                            info->name, text);
        if (outcome == PARSED && (integer > (1ll << 53) || integer < -(1ll << 53)))
            outcome = OVERFLOWS;
        *value = (double)integer;
    }
    if (outcome != PARSED)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT, "option '%s': '%s' %s", info->name,
                        text, parse_problem(outcome));
    return check_value(message, info, *value);
}

/* The estimator's own option of that name: its index in the table, or option_count. */
static size_t estimator_option(const struct moe_fitter *fitter, const char *name)
{
    size_t index = 0;
    while (index < fitter->ops.option_count &&
           strcmp(fitter->ops.option_table[index].name, name) != 0)
        ++index;
    return index;
}

moe_status moe_fitter_set_option(moe_fitter_t *fitter, const char *name, const char *value)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    if (name == NULL || value == NULL)
        return moe_fail(fitter->message, MOE_ERR_NULL_POINTER, "option %s is NULL",
                        name == NULL ? "name" : "value");
    const moe_option_info *info = moe_option_info_find(name);
    double parsed = 0.0;
    moe_status status;
    if (info != NULL) {
        status = usable_option(fitter, (moe_option)info->number, &info);
        if (status == MOE_OK)
            status = parse_value(fitter->message, info, value, &parsed);
        if (status == MOE_OK)
            store_pinned(fitter, info, parsed, (long long)parsed);
        return status;
    }
    size_t index = estimator_option(fitter, name);
    if (index == fitter->ops.option_count)
        return moe_fail(fitter->message, MOE_ERR_NOT_FOUND, "estimator '%s' has no option '%s'",
                        fitter->ops.name, name);
    status = parse_value(fitter->message, &fitter->ops.option_table[index], value, &parsed);
    if (status != MOE_OK)
        return status;
    status = fitter->ops.set_option(fitter->state, index, parsed);
    if (status != MOE_OK)
        return moe_fail(fitter->message, status,
                        "estimator '%s' refused option '%s' = '%s'%s", fitter->ops.name, name,
                        value,
                        fitter->session.active ? " in the middle of a streaming session "
                                                 "(moe_fitter_reset ends it)"
                                               : "");
    return MOE_OK;
}

moe_status moe_fitter_get_option(const moe_fitter_t *fitter, const char *name, double *value)
{
    if (fitter == NULL || name == NULL || value == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL",
                        fitter == NULL ? "fitter" : name == NULL ? "name" : "value");
    const moe_option_info *info = moe_option_info_find(name);
    if (info != NULL && (fitter->option_mask & MOE_OPTION_BIT(info->number)))
        return moe_fitter_get_double(fitter, (moe_option)info->number, value);
    size_t index = estimator_option(fitter, name);
    if (index == fitter->ops.option_count)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "estimator '%s' has no option '%s'",
                        fitter->ops.name, name);
    return fitter->ops.get_option(fitter->state, index, value);
}

size_t moe_fitter_option_count(const moe_fitter_t *fitter)
{
    if (fitter == NULL)
        return 0;
    size_t count = fitter->ops.option_count;
    for (size_t i = 0; i < moe_pinned_option_count(); ++i)
        count += (fitter->option_mask & MOE_OPTION_BIT(moe_pinned_option_at(i)->number)) != 0;
    return count;
}

/* moe_option_info's versions (common/versioned.h). */
static const moe_struct_layout info_layout = {"option info", MOE_OPTION_INFO_VERSION,
                                              {sizeof(moe_option_info)}};
_Static_assert(MOE_OPTION_INFO_VERSION == 1, "a new version appends its size to info_layout");

moe_status moe_option_info_init(moe_option_info *info, unsigned int version)
{
    if (info == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "info is NULL");
    moe_option_info zero;
    memset(&zero, 0, sizeof zero);
    return moe_struct_fill(info, version, &zero, &info_layout, NULL);
}

moe_status moe_fitter_option_info(const moe_fitter_t *fitter, size_t index,
                                  moe_option_info *info)
{
    if (fitter == NULL || info == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", fitter ? "info" : "fitter");
    moe_status status = moe_check_struct_version(NULL, "option info", info->version,
                                                 MOE_OPTION_INFO_VERSION);
    if (status != MOE_OK)
        return status;
    const moe_option_info *found = NULL;
    size_t seen = 0;
    for (size_t i = 0; i < moe_pinned_option_count() && found == NULL; ++i) {
        const moe_option_info *pinned = moe_pinned_option_at(i);
        if ((fitter->option_mask & MOE_OPTION_BIT(pinned->number)) && seen++ == index)
            found = pinned;
    }
    if (found == NULL && index - seen < fitter->ops.option_count && index >= seen)
        found = &fitter->ops.option_table[index - seen];
    if (found == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "fitter '%s' has %zu options, not %zu",
                        fitter->ops.name, moe_fitter_option_count(fitter), index + 1);
    moe_option_info copy = *found;
    option_bounds(found, &copy.lower, &copy.upper, &copy.flags);
    return moe_struct_copy_out(info, &copy, &info_layout, NULL);
}

/* A name a command line, a keyword argument of R or Python and a state file can all carry:
   a letter, then letters, digits or '_' (at most 63 bytes). A keyword may also hold '-'.
   Spaces, '=', control bytes or bytes above 127 could never be set by `name=value`, and a
   keyword of digits alone would read as the keyword's number. */
static int ascii_letter(unsigned char c) /* not isalpha: that follows the locale */
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int settable_word(const char *text, int keyword)
{
    size_t length = 0;
    if (text == NULL || !ascii_letter((unsigned char)text[0]))
        return 0;
    for (; text[length] != '\0'; ++length) {
        unsigned char c = (unsigned char)text[length];
        if (!(ascii_letter(c) || (c >= '0' && c <= '9') || c == '_' || (keyword && c == '-')))
            return 0;
    }
    return length <= 63;
}

/* The keywords of a keyword option: settable words, each once. */
static moe_status check_keywords(const moe_estimator_ops *ops, const moe_option_info *entry)
{
    for (size_t k = 0; entry->keywords[k] != NULL; ++k) {
        if (!settable_word(entry->keywords[k], 1))
            return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                            "estimator '%s': option '%s': keyword %zu is not a letter followed "
                            "by letters, digits, '_' or '-' (at most 63)",
                            ops->name, entry->name, k);
        for (size_t j = 0; j < k; ++j)
            if (strcmp(entry->keywords[j], entry->keywords[k]) == 0)
                return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                                "estimator '%s': option '%s' lists keyword '%s' twice",
                                ops->name, entry->name, entry->keywords[k]);
    }
    return MOE_OK;
}

/* One entry of an estimator's table: a name of its own, a known type, bounds that hold the
   default (integer bounds within 2^53, where doubles still count every integer). */
static moe_status check_entry(const moe_estimator_ops *ops, size_t index)
{
    const moe_option_info *entry = &ops->option_table[index];
    if (entry->version != MOE_OPTION_INFO_VERSION || entry->name == NULL ||
        entry->name[0] == '\0' || entry->description == NULL || entry->number != 0)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s': option %zu needs version MOE_OPTION_INFO_VERSION, a "
                        "name, a description and number 0",
                        ops->name, index);
    if (!settable_word(entry->name, 0))
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s': the name of option %zu is not a letter followed by "
                        "letters, digits or '_' (at most 63)",
                        ops->name, index);
    if (moe_option_info_find(entry->name) != NULL)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s': option '%s' has the name of a pinned option", ops->name,
                        entry->name);
    for (size_t j = 0; j < index; ++j)
        if (strcmp(ops->option_table[j].name, entry->name) == 0)
            return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                            "estimator '%s' declares option '%s' twice", ops->name, entry->name);
    int keyword = entry->type == MOE_OPTION_KEYWORD;
    if ((entry->type != MOE_OPTION_INTEGER && entry->type != MOE_OPTION_REAL && !keyword) ||
        (keyword && keyword_count(entry->keywords) == 0) || (!keyword && entry->keywords) ||
        (!keyword && (entry->flags & ~(MOE_OPTION_LOWER_OPEN | MOE_OPTION_UPPER_OPEN))))
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s': option '%s' has an unknown type or flags, or keywords "
                        "that do not fit its type",
                        ops->name, entry->name);
    if (keyword) {
        moe_status status = check_keywords(ops, entry);
        if (status != MOE_OK)
            return status;
    }
    double limit = 9007199254740992.0;
    if (entry->type == MOE_OPTION_INTEGER &&
        !(entry->lower >= -limit && entry->upper <= limit && entry->lower == floor(entry->lower) &&
          entry->upper == floor(entry->upper)))
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s': integer option '%s' needs integral bounds within 2^53",
                        ops->name, entry->name);
    char message[MOE_MESSAGE_SIZE];
    if (check_value(message, entry, entry->default_value) != MOE_OK)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "estimator '%s': the default of %s",
                        ops->name, message);
    return MOE_OK;
}

moe_status moe_option_table_check(const moe_estimator_ops *ops)
{
    if (ops->option_count == 0)
        return MOE_OK;
    if (ops->option_table == NULL || ops->set_option == NULL || ops->get_option == NULL)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s' declares %zu options without a table, set_option and "
                        "get_option",
                        ops->name, ops->option_count);
    if (ops->option_count > 1024)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "estimator '%s' declares %zu options",
                        ops->name, ops->option_count);
    for (size_t i = 0; i < ops->option_count; ++i) {
        moe_status status = check_entry(ops, i);
        if (status != MOE_OK)
            return status;
    }
    return MOE_OK;
}
