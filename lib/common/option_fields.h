/*
 * Where an estimator keeps the values of its own options: one field of its settings struct
 * per entry of its option table (moe_estimator_ops.option_table), so that set_option and
 * get_option are one table lookup and never a list of names.
 */
#ifndef MOE_LIB_OPTION_FIELDS_H
#define MOE_LIB_OPTION_FIELDS_H

#include <stddef.h>

typedef enum moe_field_kind {
    MOE_FIELD_DOUBLE = 0, /* a real option */
    MOE_FIELD_SIZE = 1,   /* an integer option of non-negative bounds, as size_t */
    MOE_FIELD_INT = 2     /* a keyword option (its index) or a flag, as int */
} moe_field_kind;

typedef struct moe_option_field {
    size_t offset; /* offsetof the field in the settings struct */
    moe_field_kind kind;
} moe_option_field;

/* Store a value the fitter has checked against the option's entry (integral for SIZE and
   INT fields, within the entry's bounds). */
void moe_option_field_store(void *settings, const moe_option_field *field, double value);
double moe_option_field_load(const void *settings, const moe_option_field *field);

#endif
