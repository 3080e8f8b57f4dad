/*
 * Gradient steps on several softmax problems in one pass per step
 * (moe_softmax_gradient_steps_stacked, EM's inner steps for classification experts): each
 * problem's steps are those it takes alone, and the result does not depend on the threads.
 */
#include "common/data.h"
#include "common/error.h"
#include "common/inputs.h"
#include "pass/softmax.h"
#include "support/runner.h"
#include "support/synthetic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* More rows than one chunk (common/parallel.h), so that the chunks' sums are added. */
enum { ROWS = 5000, FEATURES = 6, P = FEATURES + 1, PROBLEMS = 3, MAX_CLASSES = 4, STEPS = 3 };

typedef struct fixture {
    double *X, *weights, *labels, *resp;
    double coefficients[PROBLEMS * MAX_CLASSES * P];
    unsigned char inputs[P];
    size_t p; /* FEATURES, or P with the intercept */
    moe_data data;
    moe_softmax_problem problems[PROBLEMS];
} fixture;

/* Random rows and weights, labels of `classes` classes (binary coding when classes = 2),
   responsibilities as the row scales, random coefficients with zero reference rows. Without
   the intercept the passes read X in place (moe_data_block). */
static void fixture_make(fixture *f, size_t classes, int intercept, double l2, size_t threads,
                         uint64_t seed)
{
    size_t p = f->p = FEATURES + (size_t)intercept;
    test_rng rng = {seed};
    f->X = malloc(ROWS * FEATURES * sizeof(double));
    f->weights = malloc(ROWS * sizeof(double));
    f->labels = malloc(ROWS * sizeof(double));
    f->resp = malloc(ROWS * PROBLEMS * sizeof(double));
    ck_assert(f->X && f->weights && f->labels && f->resp);
    for (size_t i = 0; i < ROWS; ++i) {
        for (size_t j = 0; j < FEATURES; ++j)
            f->X[i * FEATURES + j] = test_normal(&rng) + 0.3 * (double)j;
        f->weights[i] = i % 17 == 0 ? 0.0 : 0.5 + test_uniform(&rng);
        f->labels[i] = (double)((size_t)(test_uniform(&rng) * (double)classes) % classes);
        test_probabilities(&rng, PROBLEMS, f->resp + i * PROBLEMS);
    }
    memset(f->coefficients, 0, sizeof f->coefficients);
    for (size_t e = 0; e < PROBLEMS; ++e)
        for (size_t a = 0; a < (classes - 1) * p; ++a)
            f->coefficients[e * classes * p + a] = 0.4 * test_normal(&rng);
    memset(f->inputs, MOE_INPUT_FREE, sizeof f->inputs);
    f->inputs[3] = MOE_INPUT_UNSEEN;
    moe_data data = {ROWS, FEATURES, FEATURES, intercept, f->X, f->labels, f->weights};
    f->data = data;
    int binary = classes == 2;
    for (size_t e = 0; e < PROBLEMS; ++e) {
        double total = 0.0;
        for (size_t i = 0; i < ROWS; ++i)
            total += f->weights[i] * f->resp[i * PROBLEMS + e];
        moe_softmax_problem problem = {&f->data, classes, NULL, f->labels, binary,
                                       f->resp + e, PROBLEMS, total, l2 * (double)(e + 1),
                                       !binary, threads, e == 1 ? f->inputs : NULL, NULL};
        f->problems[e] = problem;
    }
}

static void fixture_free(fixture *f)
{
    free(f->X);
    free(f->weights);
    free(f->labels);
    free(f->resp);
}

static void stacked_steps(fixture *f, size_t classes, double *out)
{
    char message[MOE_MESSAGE_SIZE] = "";
    memcpy(out, f->coefficients, PROBLEMS * classes * f->p * sizeof(double));
    EXPECT_STATUS(moe_softmax_gradient_steps_stacked(f->problems, PROBLEMS, out, STEPS, 0.3,
                                                     message),
                  MOE_OK);
}

START_TEST(stacked_steps_are_each_problems_own)
{
    static const size_t class_counts[] = {2, 3, MAX_CLASSES};
    size_t classes = class_counts[_i % 3], p = FEATURES + (size_t)(_i / 3);
    fixture f;
    fixture_make(&f, classes, _i / 3, 0.05, 1, 11 + (uint64_t)_i);
    double stacked[PROBLEMS * MAX_CLASSES * P]; /* P >= p */
    stacked_steps(&f, classes, stacked);
    char message[MOE_MESSAGE_SIZE] = "";
    for (size_t e = 0; e < PROBLEMS; ++e) {
        double alone[MAX_CLASSES * P];
        size_t size = classes * p;
        memcpy(alone, f.coefficients + e * size, size * sizeof(double));
        EXPECT_STATUS(moe_softmax_gradient_steps(&f.problems[e], alone, STEPS, 0.3, message),
                      MOE_OK);
        double scale = 0.0, gap = 0.0, moved = 0.0;
        for (size_t a = 0; a < size; ++a) {
            double value = stacked[e * size + a];
            scale = fmax(scale, fabs(alone[a]));
            gap = fmax(gap, fabs(value - alone[a]));
            moved = fmax(moved, fabs(value - f.coefficients[e * size + a]));
        }
        ck_assert_msg(gap <= 1e-12 * scale, "problem %zu, %zu classes: gap %g of %g", e,
                      classes, gap, scale);
        ck_assert_msg(moved > 1e-3, "problem %zu did not move", e);
        for (size_t c = 0; e == 1 && c + 1 < classes; ++c) /* input 3 is held */
            ck_assert(stacked[e * size + c * p + 3] == f.coefficients[e * size + c * p + 3]);
    }
    fixture_free(&f);
}
END_TEST

START_TEST(stacked_steps_do_not_depend_on_the_threads)
{
    double reference[PROBLEMS * MAX_CLASSES * P], other[PROBLEMS * MAX_CLASSES * P];
    for (size_t threads = 1; threads <= 3; ++threads) {
        fixture f;
        fixture_make(&f, MAX_CLASSES, 0, 0.0, threads, 5);
        stacked_steps(&f, MAX_CLASSES, threads == 1 ? reference : other);
        if (threads > 1)
            ck_assert_msg(memcmp(reference, other, PROBLEMS * MAX_CLASSES * f.p * sizeof(double)) == 0,
                          "%zu threads differ from one", threads);
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("softmax_stacked");
    TCase *cases = tcase_create("gradient steps");
    tcase_add_loop_test(cases, stacked_steps_are_each_problems_own, 0, 6);
    tcase_add_test(cases, stacked_steps_do_not_depend_on_the_threads);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
