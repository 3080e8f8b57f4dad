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

/* A fitter of the named estimator with the given seed (asserting both calls succeed). */
moe_fitter_t *test_fitter(const char *estimator, unsigned long long seed);

/* The last fit's log-likelihood trace (malloc'd; the caller frees it) and its length. */
double *test_fit_trace(const moe_fitter_t *fitter, size_t *length);

/* One em run from a random start to a tight tolerance (seed `seed`): assert its trace of at
   least `min_length` log-likelihoods never falls (1e-12 relative) and the report counts no
   monotonicity violation. The model keeps the fit. */
void test_assert_em_monotone(moe_model_t *model, size_t n, const double *X, size_t d,
                             const double *y, const double *weights, unsigned long long seed,
                             size_t min_length);

/* Run every test of the suite (and free it); EXIT_SUCCESS if none failed. */
int run_suite(Suite *suite);

#endif
