/* The one main() body every Check test executable shares. */
#ifndef MOE_TESTS_RUNNER_H
#define MOE_TESTS_RUNNER_H

#include <check.h>
#include <moe/moe.h>

/* Assert a call's status, printing the library's thread message when it differs. */
#define EXPECT_STATUS(call, expected)                                                           \
    do {                                                                                       \
        moe_status got_ = (call);                                                              \
        moe_status want_ = (expected);                                                         \
        ck_assert_msg(got_ == want_, "%s returned %d (%s), expected %d (%s); last error: '%s'", \
                      #call, (int)got_, moe_strerror(got_), (int)want_, moe_strerror(want_),   \
                      moe_last_error());                                                       \
    } while (0)

/* Run every test of the suite (and free it); EXIT_SUCCESS if none failed. */
int run_suite(Suite *suite);

#endif
