/*
 * An estimator's options declared once (lib/common/option_fields.h): the table, the fields
 * and set/get that one list macro expands to. cqt, ismm and ot declare theirs this way; the
 * fitter trusts set_option to store exactly what its entry allows, and ismm's saved state is
 * held to the same test.
 */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/option_fields.h"
#include "moe/estimator.h"
#include "moe/moe.h"
#include "support/runner.h"

typedef struct test_settings {
    double rate;
    size_t count;
    int mode;
    int flag;
    double fraction;
} test_settings;

static const char *const mode_keywords[] = {"first", "second", "third", NULL};

#define TEST_OPTIONS(X, S)                                                                   \
    X(S, rate, "rate", MOE_OPTION_REAL, 0, 0, 10, 2.5, NULL, "a closed real")               \
    X(S, count, "count", MOE_OPTION_INTEGER, 0, 1, 9007199254740992.0, 30, NULL,            \
      "an integer in a size_t")                                                             \
    X(S, mode, "mode", MOE_OPTION_KEYWORD, 0, 0, 0, 2, mode_keywords, "a keyword")          \
    X(S, flag, "flag", MOE_OPTION_INTEGER, 0, 0, 1, 1, NULL, "an integer in an int")        \
    X(S, fraction, "fraction", MOE_OPTION_REAL, MOE_OPTION_LOWER_OPEN | MOE_OPTION_UPPER_OPEN, \
      0.5, 1, 0.75, NULL, "an open real")
MOE_OPTION_LIST(static, test, test_settings, TEST_OPTIONS);
MOE_OPTION_ACCESSORS(test)

static double value_of(const test_settings *settings, size_t index)
{
    double value = -1.0;
    ck_assert_int_eq(moe_option_list_get(&test_option_list, settings, index, &value), MOE_OK);
    return value;
}

static void expect_entry(size_t index, const char *name, moe_option_type type,
                         unsigned int flags, double lower, double upper, double default_value,
                         const char *const *keywords, size_t offset, moe_field_kind kind)
{
    const moe_option_info *entry = &test_option_table[index];
    ck_assert_uint_eq(entry->version, MOE_OPTION_INFO_VERSION);
    ck_assert_str_eq(entry->name, name);
    ck_assert_int_eq(entry->type, type);
    ck_assert_uint_eq(entry->flags, flags);
    ck_assert(entry->lower == lower && entry->upper == upper);
    ck_assert(entry->default_value == default_value);
    ck_assert_ptr_eq(entry->keywords, keywords);
    ck_assert_ptr_nonnull(entry->description);
    ck_assert_int_eq(entry->number, 0);
    ck_assert_uint_eq(test_option_fields[index].offset, offset);
    ck_assert_int_eq(test_option_fields[index].kind, kind);
}

START_TEST(the_table_matches_the_declarations)
{
    ck_assert_uint_eq(sizeof test_option_table / sizeof test_option_table[0], 5);
    ck_assert_uint_eq(MOE_OPTION_COUNT(test_settings, TEST_OPTIONS), 5);
    ck_assert_ptr_eq(test_option_list.table, test_option_table);
    ck_assert_ptr_eq(test_option_list.fields, test_option_fields);
    ck_assert_uint_eq(test_option_list.count, 5);
    expect_entry(0, "rate", MOE_OPTION_REAL, 0, 0, 10, 2.5, NULL,
                 offsetof(test_settings, rate), MOE_FIELD_DOUBLE);
    expect_entry(1, "count", MOE_OPTION_INTEGER, 0, 1, 9007199254740992.0, 30, NULL,
                 offsetof(test_settings, count), MOE_FIELD_SIZE);
    expect_entry(2, "mode", MOE_OPTION_KEYWORD, 0, 0, 0, 2, mode_keywords,
                 offsetof(test_settings, mode), MOE_FIELD_INT);
    expect_entry(3, "flag", MOE_OPTION_INTEGER, 0, 0, 1, 1, NULL,
                 offsetof(test_settings, flag), MOE_FIELD_INT);
    expect_entry(4, "fraction", MOE_OPTION_REAL, MOE_OPTION_LOWER_OPEN | MOE_OPTION_UPPER_OPEN,
                 0.5, 1, 0.75, NULL, offsetof(test_settings, fraction), MOE_FIELD_DOUBLE);
    ck_assert_str_eq(test_option_table[4].description, "an open real");
}
END_TEST

START_TEST(values_round_trip)
{
    test_settings settings;
    memset(&settings, 0, sizeof settings);
    ck_assert_int_eq(moe_option_list_defaults(&test_option_list, &settings), MOE_OK);
    for (size_t i = 0; i < test_option_list.count; ++i)
        ck_assert(value_of(&settings, i) == test_option_table[i].default_value);
    ck_assert(settings.rate == 2.5 && settings.count == 30 && settings.mode == 2 &&
              settings.flag == 1 && settings.fraction == 0.75);

    const double values[] = {0.1 + 0.2, 9007199254740992.0, 0, 0, nextafter(1.0, 0.0)};
    for (size_t i = 0; i < test_option_list.count; ++i) {
        ck_assert_int_eq(test_set_option(&settings, i, values[i]), MOE_OK);
        double back = -1.0;
        ck_assert_int_eq(test_get_option(&settings, i, &back), MOE_OK);
        ck_assert(back == values[i]);
    }
    ck_assert(settings.count == (size_t)1 << 53);
    ck_assert_int_eq(settings.mode, 0);
}
END_TEST

/* A refused value leaves the field as it was. */
static void expect_refused(test_settings *settings, size_t index, double value)
{
    double before = value_of(settings, index);
    ck_assert_msg(moe_option_list_set(&test_option_list, settings, index, value) ==
                      MOE_ERR_INVALID_ARGUMENT,
                  "option %zu took %.17g", index, value);
    ck_assert(value_of(settings, index) == before);
    ck_assert_int_eq(moe_option_value_valid(&test_option_table[index], value), 0);
}

static void expect_taken(test_settings *settings, size_t index, double value)
{
    ck_assert_int_eq(moe_option_value_valid(&test_option_table[index], value), 1);
    ck_assert_int_eq(moe_option_list_set(&test_option_list, settings, index, value), MOE_OK);
    ck_assert(value_of(settings, index) == value);
}

START_TEST(bounds_are_refused)
{
    test_settings settings;
    ck_assert_int_eq(moe_option_list_defaults(&test_option_list, &settings), MOE_OK);
    expect_taken(&settings, 0, 0.0); /* closed bounds hold their ends */
    expect_taken(&settings, 0, 10.0);
    expect_refused(&settings, 0, -1e-300);
    expect_refused(&settings, 0, nextafter(10.0, 11.0));
    expect_refused(&settings, 0, NAN);
    expect_refused(&settings, 0, INFINITY);
    expect_refused(&settings, 4, 0.5); /* open bounds do not */
    expect_refused(&settings, 4, 1.0);
    expect_taken(&settings, 4, nextafter(0.5, 1.0));
    expect_taken(&settings, 4, nextafter(1.0, 0.0));
    expect_refused(&settings, 1, 0.0);
    expect_refused(&settings, 1, 9007199254740994.0);
    expect_refused(&settings, 1, -1.0);
    expect_refused(&settings, 3, 2.0);

    double value = 0.0;
    ck_assert_int_eq(moe_option_list_set(&test_option_list, &settings, 5, 1.0),
                     MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_option_list_get(&test_option_list, &settings, 5, &value),
                     MOE_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(keyword_options_take_their_indices)
{
    test_settings settings;
    ck_assert_int_eq(moe_option_list_defaults(&test_option_list, &settings), MOE_OK);
    for (int k = 0; k < 3; ++k) {
        expect_taken(&settings, 2, k);
        ck_assert_int_eq(settings.mode, k);
    }
    /* A keyword option's bounds and flags are ignored: its keywords are its range. */
    expect_refused(&settings, 2, 3.0);
    expect_refused(&settings, 2, -1.0);
    expect_refused(&settings, 2, 1.5);
}
END_TEST

START_TEST(integer_options_refuse_non_integers)
{
    test_settings settings;
    ck_assert_int_eq(moe_option_list_defaults(&test_option_list, &settings), MOE_OK);
    expect_refused(&settings, 1, 2.5);
    expect_refused(&settings, 1, nextafter(30.0, 31.0));
    expect_refused(&settings, 3, 0.5);
    expect_taken(&settings, 0, 2.25); /* a real option takes fractions */
    expect_taken(&settings, 1, 7.0);
    ck_assert_uint_eq(settings.count, 7);
}
END_TEST

/* A table whose bounds reach beyond its fields' types: such values are refused, not
   wrapped into the field. */
typedef struct narrow_settings {
    int small;
    size_t unsigned_count;
} narrow_settings;

#define NARROW_OPTIONS(X, S)                                                                 \
    X(S, small, "small", MOE_OPTION_INTEGER, 0, 0, 1099511627776.0, 0, NULL, "too wide")     \
    X(S, unsigned_count, "unsigned_count", MOE_OPTION_INTEGER, 0, -5, 5, 0, NULL,           \
      "negative bounds")
MOE_OPTION_LIST(static, narrow, narrow_settings, NARROW_OPTIONS);

START_TEST(values_a_field_cannot_hold_are_refused)
{
    narrow_settings settings = {3, 4};
    ck_assert_int_eq(moe_option_list_set(&narrow_option_list, &settings, 0, 1099511627776.0),
                     MOE_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(moe_option_list_set(&narrow_option_list, &settings, 1, -1.0),
                     MOE_ERR_INVALID_ARGUMENT);
    ck_assert(settings.small == 3 && settings.unsigned_count == 4);
    ck_assert_int_eq(moe_option_list_set(&narrow_option_list, &settings, 0, 2147483647.0),
                     MOE_OK);
    ck_assert_int_eq(settings.small, 2147483647);
}
END_TEST

/* ---- The list as an estimator's table ----------------------------------------------------- */

static moe_status fields_create(void **state)
{
    *state = calloc(1, sizeof(test_settings));
    return *state != NULL ? MOE_OK : MOE_ERR_OUT_OF_MEMORY;
}

static void fields_destroy(void *state)
{
    free(state);
}

static moe_status fields_fit(void *state, moe_fit_context *context)
{
    (void)state;
    (void)context;
    return MOE_ERR_UNSUPPORTED;
}

START_TEST(a_fitter_takes_the_list_as_its_table)
{
    moe_estimator_ops ops;
    ck_assert_int_eq(moe_estimator_ops_init(&ops, MOE_ESTIMATOR_ABI_VERSION), MOE_OK);
    ops.name = "option-fields";
    ops.create = fields_create;
    ops.destroy = fields_destroy;
    ops.fit = fields_fit;
    ops.option_table = test_option_table;
    ops.option_count = test_option_list.count;
    ops.set_option = test_set_option;
    ops.get_option = test_get_option;
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create_custom(&fitter, &ops), MOE_OK);
    ck_assert_uint_eq(moe_fitter_option_count(fitter), 5);
    double value = 0.0;
    EXPECT_STATUS(moe_fitter_get_option(fitter, "mode", &value), MOE_OK);
    ck_assert(value == 2.0); /* the default, set at creation */
    EXPECT_STATUS(moe_fitter_set_option(fitter, "mode", "second"), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "mode", &value), MOE_OK);
    ck_assert(value == 1.0);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "count", "123456789"), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "count", &value), MOE_OK);
    ck_assert(value == 123456789.0);
    EXPECT_STATUS(moe_fitter_set_option(fitter, "fraction", "1"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_fitter_get_option(fitter, "fraction", &value), MOE_OK);
    ck_assert(value == 0.75);
    moe_option_info info;
    EXPECT_STATUS(moe_option_info_init(&info, MOE_OPTION_INFO_VERSION), MOE_OK);
    EXPECT_STATUS(moe_fitter_option_info(fitter, 4, &info), MOE_OK);
    ck_assert_str_eq(info.name, "fraction");
    ck_assert_str_eq(info.description, "an open real");
    moe_fitter_free(fitter);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("option_fields");
    TCase *tc = tcase_create("option_fields");
    tcase_add_test(tc, the_table_matches_the_declarations);
    tcase_add_test(tc, values_round_trip);
    tcase_add_test(tc, bounds_are_refused);
    tcase_add_test(tc, keyword_options_take_their_indices);
    tcase_add_test(tc, integer_options_refuse_non_integers);
    tcase_add_test(tc, values_a_field_cannot_hold_are_refused);
    tcase_add_test(tc, a_fitter_takes_the_list_as_its_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
