/*
 * Names carried by a model (features, response, class labels): setting and
 * getting, copies, the version 2 file format, and rejection of damaged names
 * sections.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "common/checksum.h"
#include "support/runner.h"

static moe_model_t *make_model(moe_family family, size_t d, size_t classes)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = 2;
    spec.n_features = d;
    spec.n_classes = classes;
    moe_model_t *model = NULL;
    ck_assert_int_eq(moe_model_create(&model, &spec), MOE_OK);
    return model;
}

static unsigned char *save(const moe_model_t *model, size_t *size)
{
    size_t needed = 0;
    EXPECT_STATUS(moe_model_save_buffer(model, NULL, 0, &needed), MOE_OK);
    unsigned char *bytes = malloc(needed);
    ck_assert_int_eq(moe_model_save_buffer(model, bytes, needed, size), MOE_OK);
    ck_assert_uint_eq(*size, needed);
    return bytes;
}

static uint32_t read_u32(const unsigned char *at)
{
    return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 |
           (uint32_t)at[3] << 24;
}

START_TEST(names_are_set_read_and_cleared)
{
    moe_model_t *model = make_model(MOE_FAMILY_MULTINOMIAL, 2, 3);
    ck_assert_ptr_null(moe_model_get_name(model, MOE_NAME_FEATURE, 0));
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_FEATURE, 1, "height (cm)"), MOE_OK);
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_RESPONSE, 0, "species"), MOE_OK);
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_CLASS, 2, "virginica"), MOE_OK);
    ck_assert_str_eq(moe_model_get_name(model, MOE_NAME_FEATURE, 1), "height (cm)");
    ck_assert_str_eq(moe_model_get_name(model, MOE_NAME_RESPONSE, 0), "species");
    ck_assert_str_eq(moe_model_get_name(model, MOE_NAME_CLASS, 2), "virginica");
    ck_assert_ptr_null(moe_model_get_name(model, MOE_NAME_FEATURE, 0));
    /* Replacing and removing. */
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_CLASS, 2, "setosa"), MOE_OK);
    ck_assert_str_eq(moe_model_get_name(model, MOE_NAME_CLASS, 2), "setosa");
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_CLASS, 2, NULL), MOE_OK);
    ck_assert_ptr_null(moe_model_get_name(model, MOE_NAME_CLASS, 2));
    /* The caller's string is copied. */
    char buffer[] = "weight";
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_FEATURE, 0, buffer), MOE_OK);
    buffer[0] = 'W';
    ck_assert_str_eq(moe_model_get_name(model, MOE_NAME_FEATURE, 0), "weight");
    moe_model_free(model);
}
END_TEST

START_TEST(bad_names_are_refused)
{
    moe_model_t *gaussian = make_model(MOE_FAMILY_GAUSSIAN, 2, 0);
    moe_model_t *logistic = make_model(MOE_FAMILY_LOGISTIC, 1, 0);
    EXPECT_STATUS(moe_model_set_name(NULL, MOE_NAME_FEATURE, 0, "x"), MOE_ERR_NULL_POINTER);
    EXPECT_STATUS(moe_model_set_name(gaussian, MOE_NAME_FEATURE, 2, "x"),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(moe_model_last_error(gaussian), "out of range"));
    EXPECT_STATUS(moe_model_set_name(gaussian, MOE_NAME_RESPONSE, 1, "y"),
                  MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_model_set_name(gaussian, MOE_NAME_CLASS, 0, "a"), MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_model_set_name(gaussian, (moe_name_kind)3, 0, "a"),
                  MOE_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(moe_model_set_name(gaussian, MOE_NAME_FEATURE, 0, ""), MOE_ERR_INVALID_ARGUMENT);
    char *long_name = malloc(MOE_NAME_MAX + 2);
    memset(long_name, 'a', MOE_NAME_MAX + 1);
    long_name[MOE_NAME_MAX + 1] = '\0';
    EXPECT_STATUS(moe_model_set_name(gaussian, MOE_NAME_FEATURE, 0, long_name),
                  MOE_ERR_INVALID_ARGUMENT);
    long_name[MOE_NAME_MAX] = '\0'; /* exactly the maximum */
    ck_assert_int_eq(moe_model_set_name(gaussian, MOE_NAME_FEATURE, 0, long_name), MOE_OK);
    free(long_name);
    /* Logistic experts have two class labels. */
    ck_assert_int_eq(moe_model_set_name(logistic, MOE_NAME_CLASS, 1, "yes"), MOE_OK);
    EXPECT_STATUS(moe_model_set_name(logistic, MOE_NAME_CLASS, 2, "maybe"),
                  MOE_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(moe_model_get_name(NULL, MOE_NAME_FEATURE, 0));
    ck_assert_ptr_null(moe_model_get_name(logistic, MOE_NAME_CLASS, 7));
    ck_assert_ptr_null(moe_model_get_name(logistic, (moe_name_kind)9, 0));
    moe_model_free(gaussian);
    moe_model_free(logistic);
}
END_TEST

START_TEST(names_survive_clone_and_files)
{
    moe_model_t *model = make_model(MOE_FAMILY_MULTINOMIAL, 2, 3);
    size_t plain_size = 0;
    unsigned char *plain = save(model, &plain_size);
    ck_assert_uint_eq(read_u32(plain + 8), 1); /* no names: version 1 */
    const char *labels[] = {"setosa", "versicolor", "virginica"};
    for (size_t c = 0; c < 3; ++c)
        ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_CLASS, c, labels[c]), MOE_OK);
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_FEATURE, 0, "petal length"), MOE_OK);
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_RESPONSE, 0, "species"), MOE_OK);

    moe_model_t *copy = NULL;
    ck_assert_int_eq(moe_model_clone(&copy, model), MOE_OK);
    ck_assert_int_eq(moe_model_set_name(model, MOE_NAME_CLASS, 0, "changed"), MOE_OK);
    ck_assert_str_eq(moe_model_get_name(copy, MOE_NAME_CLASS, 0), "setosa");
    ck_assert_ptr_null(moe_model_get_name(copy, MOE_NAME_FEATURE, 1));

    size_t size = 0;
    unsigned char *bytes = save(copy, &size);
    ck_assert_uint_eq(read_u32(bytes + 8), 2);
    ck_assert_uint_eq(size, plain_size + 4 + 5 * 12 + 6 + 10 + 9 + 12 + 7);
    moe_model_t *loaded = NULL;
    ck_assert_int_eq(moe_model_load_buffer(&loaded, bytes, size), MOE_OK);
    for (size_t c = 0; c < 3; ++c)
        ck_assert_str_eq(moe_model_get_name(loaded, MOE_NAME_CLASS, c), labels[c]);
    ck_assert_str_eq(moe_model_get_name(loaded, MOE_NAME_FEATURE, 0), "petal length");
    ck_assert_ptr_null(moe_model_get_name(loaded, MOE_NAME_FEATURE, 1));
    ck_assert_str_eq(moe_model_get_name(loaded, MOE_NAME_RESPONSE, 0), "species");
    size_t again_size = 0;
    unsigned char *again = save(loaded, &again_size);
    ck_assert_uint_eq(again_size, size);
    ck_assert(memcmp(again, bytes, size) == 0);
    /* Removing every name goes back to version 1, byte for byte. */
    for (size_t c = 0; c < 3; ++c)
        ck_assert_int_eq(moe_model_set_name(loaded, MOE_NAME_CLASS, c, NULL), MOE_OK);
    ck_assert_int_eq(moe_model_set_name(loaded, MOE_NAME_FEATURE, 0, NULL), MOE_OK);
    ck_assert_int_eq(moe_model_set_name(loaded, MOE_NAME_RESPONSE, 0, NULL), MOE_OK);
    free(again);
    again = save(loaded, &again_size);
    ck_assert_uint_eq(again_size, plain_size);
    ck_assert(memcmp(again, plain, plain_size) == 0);
    free(again);
    free(bytes);
    free(plain);
    moe_model_free(loaded);
    moe_model_free(copy);
    moe_model_free(model);
}
END_TEST

/*
 * A version 2 image of a Gaussian model (K = 2, d = 1) with `section` as its names
 * section: header and parameters from a real save, size and checksum recomputed.
 */
static unsigned char *with_section(const unsigned char *section, size_t section_size,
                                   size_t *size)
{
    moe_model_t *model = make_model(MOE_FAMILY_GAUSSIAN, 1, 0);
    size_t plain_size = 0;
    unsigned char *plain = save(model, &plain_size);
    moe_model_free(model);
    size_t body = plain_size - 4;
    *size = body + section_size + 4;
    unsigned char *bytes = malloc(*size);
    memcpy(bytes, plain, body);
    memcpy(bytes + body, section, section_size);
    bytes[8] = 2;
    for (int b = 0; b < 8; ++b)
        bytes[16 + b] = (unsigned char)((uint64_t)*size >> (8 * b));
    uint32_t crc = moe_crc32(bytes, *size - 4);
    for (int b = 0; b < 4; ++b)
        bytes[*size - 4 + b] = (unsigned char)(crc >> (8 * b));
    free(plain);
    return bytes;
}

static size_t put_entry(unsigned char *at, uint32_t kind, uint32_t index, const char *name,
                        uint32_t length)
{
    uint32_t fields[3] = {kind, index, length};
    for (int f = 0; f < 3; ++f)
        for (int b = 0; b < 4; ++b)
            at[4 * f + b] = (unsigned char)(fields[f] >> (8 * b));
    memcpy(at + 12, name, length);
    return 12 + length;
}

static void expect_section(const unsigned char *section, size_t size, moe_status expected,
                           const char *words)
{
    size_t total = 0;
    unsigned char *bytes = with_section(section, size, &total);
    moe_model_t *model = NULL;
    moe_status status = moe_model_load_buffer(&model, bytes, total);
    ck_assert_msg(status == expected, "%s: status %d, message '%s'", words, status,
                  moe_last_error());
    if (expected != MOE_OK)
        ck_assert_msg(strstr(moe_last_error(), words) != NULL, "'%s' not in '%s'", words,
                      moe_last_error());
    moe_model_free(model);
    free(bytes);
}

START_TEST(damaged_names_sections_are_rejected)
{
    unsigned char section[256];
    size_t at;
#define COUNT(c) (memset(section, 0, sizeof section), section[0] = (c), at = 4)
    COUNT(1); at += put_entry(section + at, 0, 0, "x", 1);
    expect_section(section, at, MOE_OK, "");
    COUNT(2); at += put_entry(section + at, 0, 0, "x", 1); at += put_entry(section + at, 1, 0, "y", 1);
    expect_section(section, at, MOE_OK, "");
    COUNT(0);
    expect_section(section, at, MOE_ERR_FORMAT, "empty names section");
    COUNT(1); at += put_entry(section + at, 3, 0, "x", 1);
    expect_section(section, at, MOE_ERR_FORMAT, "does not exist");
    COUNT(1); at += put_entry(section + at, 0, 1, "x", 1); /* d = 1 */
    expect_section(section, at, MOE_ERR_FORMAT, "does not exist");
    COUNT(1); at += put_entry(section + at, 2, 0, "a", 1); /* Gaussian: no classes */
    expect_section(section, at, MOE_ERR_FORMAT, "does not exist");
    COUNT(2); at += put_entry(section + at, 1, 0, "y", 1); at += put_entry(section + at, 0, 0, "x", 1);
    expect_section(section, at, MOE_ERR_FORMAT, "out of order");
    COUNT(2); at += put_entry(section + at, 0, 0, "x", 1); at += put_entry(section + at, 0, 0, "x", 1);
    expect_section(section, at, MOE_ERR_FORMAT, "out of order or repeated");
    COUNT(1); at += put_entry(section + at, 0, 0, "", 0);
    expect_section(section, at, MOE_ERR_FORMAT, "bad length");
    COUNT(1); at += put_entry(section + at, 0, 0, "a\0b", 3);
    expect_section(section, at, MOE_ERR_FORMAT, "NUL");
    COUNT(1); at += put_entry(section + at, 0, 0, "abc", 3);
    expect_section(section, at - 1, MOE_ERR_FORMAT, "bad length"); /* name cut short */
    COUNT(2); at += put_entry(section + at, 0, 0, "abc", 3);
    expect_section(section, at + 5, MOE_ERR_FORMAT, "cut short"); /* second entry cut */
    COUNT(1); at += put_entry(section + at, 0, 0, "abc", 3);
    expect_section(section, at + 2, MOE_ERR_FORMAT, "follow the names section");
    expect_section(section, 3, MOE_ERR_FORMAT, "names section"); /* no room for the count */
#undef COUNT
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("names");
    TCase *cases = tcase_create("names");
    tcase_add_test(cases, names_are_set_read_and_cleared);
    tcase_add_test(cases, bad_names_are_refused);
    tcase_add_test(cases, names_survive_clone_and_files);
    tcase_add_test(cases, damaged_names_sections_are_rejected);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
