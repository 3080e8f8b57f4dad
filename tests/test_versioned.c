/*
 * Versioned public structs (lib/common/versioned.h): init and copy-out write the bytes of
 * the caller's version and nothing past them. A caller built against an older header has
 * a smaller struct; a library that wrote its whole newer struct there would overrun the
 * caller's memory.
 */
#include <check.h>
#include <stddef.h>
#include <string.h>

#include "common/versioned.h"
#include "moe/estimator.h"
#include "moe/moe.h"
#include "support/runner.h"

#define GUARD 0xAB
#define ROOM 512

static unsigned char buffer[ROOM];

static void guard_all(void)
{
    memset(buffer, GUARD, sizeof buffer);
}

/* The first byte from `from` on that is not the guard's, or ROOM when none is. */
static size_t written_past(size_t from)
{
    for (size_t i = from; i < ROOM; ++i)
        if (buffer[i] != GUARD)
            return i;
    return ROOM;
}

START_TEST(a_copy_writes_its_versions_bytes_only)
{
    static const moe_struct_layout layout = {"test struct", 2, {16, 24}};
    unsigned char newest[24];
    memset(newest, 0x11, sizeof newest);
    guard_all();
    unsigned int version = 1;
    memcpy(buffer, &version, sizeof version);
    EXPECT_STATUS(moe_struct_copy_out(buffer, newest, &layout, NULL), MOE_OK);
    ck_assert_uint_eq(written_past(16), ROOM);
    ck_assert_uint_eq(buffer[15], 0x11);
    memcpy(&version, buffer, sizeof version);
    ck_assert_uint_eq(version, 1);
    guard_all();
    EXPECT_STATUS(moe_struct_fill(buffer, 2, newest, &layout, NULL), MOE_OK);
    ck_assert_uint_eq(written_past(24), ROOM);
    guard_all();
    EXPECT_STATUS(moe_struct_fill(buffer, 3, newest, &layout, NULL), MOE_ERR_UNSUPPORTED);
    EXPECT_STATUS(moe_struct_fill(buffer, 0, newest, &layout, NULL), MOE_ERR_UNSUPPORTED);
    ck_assert_uint_eq(written_past(0), ROOM);
}
END_TEST

/* A caller of moe_model_spec version 1 (libmoe 1.0's header: no inputs of the parts). */
START_TEST(an_older_spec_is_left_its_size)
{
    size_t old_size = offsetof(moe_model_spec, gate_features);
    guard_all();
    EXPECT_STATUS(moe_model_spec_init((moe_model_spec *)(void *)buffer, 1), MOE_OK);
    ck_assert_uint_eq(written_past(old_size), ROOM);
    moe_model_spec *spec = (moe_model_spec *)(void *)buffer;
    ck_assert_uint_eq(spec->version, 1);
    ck_assert_uint_eq(spec->n_experts, 2);
    moe_model_t *model = NULL;
    EXPECT_STATUS(moe_model_create(&model, spec), MOE_OK);
    ck_assert_uint_eq(written_past(old_size), ROOM);
    EXPECT_STATUS(moe_model_get_spec(model, spec), MOE_OK);
    ck_assert_uint_eq(written_past(old_size), ROOM);
    moe_model_free(model);
}
END_TEST

/* Every init and copy-out of the current versions: its struct's bytes and no more. */
START_TEST(current_structs_are_written_to_their_end)
{
    double X[40], y[40];
    for (int i = 0; i < 40; ++i) {
        X[i] = (double)i / 10.0;
        y[i] = i % 2 ? 1.0 + X[i] : -1.0 - X[i];
    }
    moe_model_t *model = NULL;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    EXPECT_STATUS(moe_model_create(&model, &spec), MOE_OK);
    moe_fitter_t *fitter = NULL;
    EXPECT_STATUS(moe_fitter_create(&fitter, "em"), MOE_OK);
    EXPECT_STATUS(moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 3), MOE_OK);
    guard_all();
    EXPECT_STATUS(moe_fit_report_init((moe_fit_report *)(void *)buffer, MOE_FIT_REPORT_VERSION),
                  MOE_OK);
    EXPECT_STATUS(moe_fitter_get_report(fitter, (moe_fit_report *)(void *)buffer),
                  MOE_ERR_INVALID_ARGUMENT); /* no fit yet: a report that says so */
    EXPECT_STATUS(moe_fitter_fit(fitter, model, 40, X, 1, y, NULL), MOE_OK);
    EXPECT_STATUS(moe_fitter_get_report(fitter, (moe_fit_report *)(void *)buffer), MOE_OK);
    ck_assert_uint_eq(written_past(sizeof(moe_fit_report)), ROOM);
    guard_all();
    EXPECT_STATUS(moe_criteria_init((moe_criteria *)(void *)buffer, MOE_CRITERIA_VERSION),
                  MOE_OK);
    EXPECT_STATUS(moe_model_criteria(model, 40, X, 1, y, NULL, (moe_criteria *)(void *)buffer),
                  MOE_OK);
    ck_assert_uint_eq(written_past(sizeof(moe_criteria)), ROOM);
    guard_all();
    EXPECT_STATUS(moe_option_info_init((moe_option_info *)(void *)buffer,
                                       MOE_OPTION_INFO_VERSION),
                  MOE_OK);
    EXPECT_STATUS(moe_fitter_option_info(fitter, 0, (moe_option_info *)(void *)buffer), MOE_OK);
    ck_assert_uint_eq(written_past(sizeof(moe_option_info)), ROOM);
    guard_all();
    EXPECT_STATUS(moe_estimator_ops_init((moe_estimator_ops *)(void *)buffer,
                                         MOE_ESTIMATOR_ABI_VERSION),
                  MOE_OK);
    ck_assert_uint_eq(written_past(sizeof(moe_estimator_ops)), ROOM);
    moe_fitter_free(fitter);
    moe_model_free(model);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("versioned");
    TCase *tc = tcase_create("versioned");
    tcase_add_test(tc, a_copy_writes_its_versions_bytes_only);
    tcase_add_test(tc, an_older_spec_is_left_its_size);
    tcase_add_test(tc, current_structs_are_written_to_their_end);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
