#include "common/option_fields.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>

static size_t keyword_count(const char *const *keywords)
{
    size_t count = 0;
    while (keywords != NULL && keywords[count] != NULL)
        ++count;
    return count;
}

int moe_option_value_valid(const moe_option_info *entry, double value)
{
    double lower = entry->lower, upper = entry->upper;
    unsigned int flags = entry->flags;
    if (entry->type == MOE_OPTION_KEYWORD) { /* its bounds and flags are ignored */
        lower = 0.0;
        upper = (double)keyword_count(entry->keywords) - 1.0;
        flags = 0;
    }
    int below = (flags & MOE_OPTION_LOWER_OPEN) ? !(value > lower) : !(value >= lower);
    int above = (flags & MOE_OPTION_UPPER_OPEN) ? !(value < upper) : !(value <= upper);
    if (!isfinite(value) || below || above)
        return 0;
    return entry->type == MOE_OPTION_REAL || value == floor(value);
}

/* Whether the field can hold an integral value: a table whose bounds reach beyond its
   field's type is refused rather than wrapped. */
static int field_holds(moe_field_kind kind, double value)
{
    if (kind == MOE_FIELD_SIZE)
        return value >= 0.0 && value < (double)SIZE_MAX;
    if (kind == MOE_FIELD_INT)
        return value >= (double)INT_MIN && value <= (double)INT_MAX;
    return 1;
}

moe_status moe_option_list_set(const moe_option_list *list, void *settings, size_t index,
                               double value)
{
    if (index >= list->count || !moe_option_value_valid(&list->table[index], value))
        return MOE_ERR_INVALID_ARGUMENT;
    const moe_option_field *field = &list->fields[index];
    if (!field_holds(field->kind, value))
        return MOE_ERR_INVALID_ARGUMENT;
    unsigned char *at = (unsigned char *)settings + field->offset;
    if (field->kind == MOE_FIELD_DOUBLE)
        *(double *)(void *)at = value;
    else if (field->kind == MOE_FIELD_SIZE)
        *(size_t *)(void *)at = (size_t)value;
    else
        *(int *)(void *)at = (int)value;
    return MOE_OK;
}

moe_status moe_option_list_get(const moe_option_list *list, const void *settings,
                               size_t index, double *value)
{
    if (index >= list->count)
        return MOE_ERR_INVALID_ARGUMENT;
    const moe_option_field *field = &list->fields[index];
    const unsigned char *at = (const unsigned char *)settings + field->offset;
    if (field->kind == MOE_FIELD_DOUBLE)
        *value = *(const double *)(const void *)at;
    else if (field->kind == MOE_FIELD_SIZE)
        *value = (double)*(const size_t *)(const void *)at;
    else
        *value = (double)*(const int *)(const void *)at;
    return MOE_OK;
}

moe_status moe_option_list_defaults(const moe_option_list *list, void *settings)
{
    for (size_t i = 0; i < list->count; ++i) {
        moe_status status = moe_option_list_set(list, settings, i, list->table[i].default_value);
        if (status != MOE_OK)
            return status;
    }
    return MOE_OK;
}
