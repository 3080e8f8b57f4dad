/* The one main() body every Check test executable shares. */
#ifndef MOE_TESTS_RUNNER_H
#define MOE_TESTS_RUNNER_H

#include <check.h>

/* Run every test of the suite (and free it); EXIT_SUCCESS if none failed. */
int run_suite(Suite *suite);

#endif
