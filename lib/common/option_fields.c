#include "common/option_fields.h"

void moe_option_field_store(void *settings, const moe_option_field *field, double value)
{
    unsigned char *at = (unsigned char *)settings + field->offset;
    if (field->kind == MOE_FIELD_DOUBLE)
        *(double *)(void *)at = value;
    else if (field->kind == MOE_FIELD_SIZE)
        *(size_t *)(void *)at = (size_t)value;
    else
        *(int *)(void *)at = (int)value;
}

double moe_option_field_load(const void *settings, const moe_option_field *field)
{
    const unsigned char *at = (const unsigned char *)settings + field->offset;
    if (field->kind == MOE_FIELD_DOUBLE)
        return *(const double *)(const void *)at;
    if (field->kind == MOE_FIELD_SIZE)
        return (double)*(const size_t *)(const void *)at;
    return (double)*(const int *)(const void *)at;
}
