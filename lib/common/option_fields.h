/*
 * An estimator's own options declared once. Each option is one row of a list macro of the
 * estimator's,
 *
 *   #define MY_OPTIONS(X, S)                                                              \
 *       X(S, field, "name", type, flags, lower, upper, default_value, keywords,          \
 *         "description")                                                                 \
 *       ...
 *
 * (S stands for the settings struct; field is the member of S holding the value, a double
 * for a real option, an int for a keyword option, a size_t or an int for an integer one),
 * and MOE_OPTION_LIST expands the list into the moe_option_info table of its ops
 * (moe_estimator_ops.option_table), the fields that table's entries live in, and the
 * moe_option_list that set_option and get_option go through. Nothing about an option is
 * written twice, so its name, bounds and default cannot drift apart from its field, and
 * set_option and get_option are one table lookup, never a list of names.
 */
#ifndef MOE_LIB_OPTION_FIELDS_H
#define MOE_LIB_OPTION_FIELDS_H

#include <stddef.h>
#include "moe/fitter.h"

typedef enum moe_field_kind {
    MOE_FIELD_DOUBLE = 0, /* a real option */
    MOE_FIELD_SIZE = 1,   /* an integer option of non-negative bounds, as size_t */
    MOE_FIELD_INT = 2     /* a keyword option (its index) or a flag, as int */
} moe_field_kind;

typedef struct moe_option_field {
    size_t offset; /* offsetof the field in the settings struct */
    moe_field_kind kind;
} moe_option_field;

/* An estimator's options: its table and, entry for entry, the fields of its settings. */
typedef struct moe_option_list {
    const moe_option_info *table;
    const moe_option_field *fields;
    size_t count;
} moe_option_list;

/* The kind of S's member `field`, from its type: a member of any other type does not
   compile, so a field cannot be read as what it is not. */
#define MOE_FIELD_KIND(S, field)                                                             \
    _Generic(((S *)0)->field, double: MOE_FIELD_DOUBLE, size_t: MOE_FIELD_SIZE,               \
             int: MOE_FIELD_INT)

/* What one row of an option list expands to, in each of the expansions below. */
#define MOE_OPTION_INFO_ROW(S, field, name, type, flags, lower, upper, default_value,        \
                            keywords, description)                                           \
    {MOE_OPTION_INFO_VERSION, name, type, flags, lower, upper, default_value, keywords,      \
     description, 0},
#define MOE_OPTION_FIELD_ROW(S, field, ...) {offsetof(S, field), MOE_FIELD_KIND(S, field)},
#define MOE_OPTION_COUNT_ROW(...) +1
/* A real option needs a double, a keyword option an int: checked as the list compiles. */
#define MOE_OPTION_KIND_ROW(S, field, name, type, ...)                                       \
    _Static_assert(((type) == MOE_OPTION_REAL) ==                                            \
                           (MOE_FIELD_KIND(S, field) == MOE_FIELD_DOUBLE) &&                 \
                       ((type) != MOE_OPTION_KEYWORD ||                                      \
                        MOE_FIELD_KIND(S, field) == MOE_FIELD_INT),                          \
                   "option " name ": its type does not fit its field's");

/* The number of options in LIST, a constant expression. */
#define MOE_OPTION_COUNT(S, LIST) (0 LIST(MOE_OPTION_COUNT_ROW, S))

/*
 * From LIST (rows as above, over the settings struct S): the table `prefix`_option_table,
 * the fields `prefix`_option_fields (static) and the moe_option_list `prefix`_option_list.
 * `storage` is the table's and the list's (static, or empty for ones another file declares
 * extern). Use at file scope, followed by a semicolon.
 */
#define MOE_OPTION_LIST(storage, prefix, S, LIST)                                            \
    LIST(MOE_OPTION_KIND_ROW, S)                                                             \
    storage const moe_option_info prefix##_option_table[] = {LIST(MOE_OPTION_INFO_ROW, S)};  \
    static const moe_option_field prefix##_option_fields[] = {                               \
        LIST(MOE_OPTION_FIELD_ROW, S)};                                                      \
    storage const moe_option_list prefix##_option_list = {                                   \
        prefix##_option_table, prefix##_option_fields, MOE_OPTION_COUNT(S, LIST)}

/*
 * set_option and get_option (moe/estimator.h), `prefix`_set_option and `prefix`_get_option,
 * for an estimator whose state is its settings struct. Use at file scope, without a
 * semicolon.
 */
#define MOE_OPTION_ACCESSORS(prefix)                                                         \
    static moe_status prefix##_set_option(void *settings, size_t index, double value)        \
    {                                                                                        \
        return moe_option_list_set(&prefix##_option_list, settings, index, value);           \
    }                                                                                        \
    static moe_status prefix##_get_option(const void *settings, size_t index, double *value) \
    {                                                                                        \
        return moe_option_list_get(&prefix##_option_list, settings, index, value);           \
    }

/* Whether the entry takes value: finite, within its bounds (open or closed as its flags
   say), integral for an integer option, a keyword's index for a keyword option. It is the
   fitter's test of a value before set_option, so that what a saved state carries can be
   held to it. */
int moe_option_value_valid(const moe_option_info *entry, double value);

/* Option `index`'s field of `settings` set to value; MOE_ERR_INVALID_ARGUMENT, the field
   unchanged, for an index beyond the list or a value the entry does not take or the field
   cannot hold. */
moe_status moe_option_list_set(const moe_option_list *list, void *settings, size_t index,
                               double value);
/* Option `index`'s value in `settings` (a keyword option: its index);
   MOE_ERR_INVALID_ARGUMENT for an index beyond the list. */
moe_status moe_option_list_get(const moe_option_list *list, const void *settings,
                               size_t index, double *value);
/* Every option of `settings` set to its default, as the fitter does at its creation: for
   settings an estimator needs without a fitter. */
moe_status moe_option_list_defaults(const moe_option_list *list, void *settings);

#endif
