/*
 * The gate's Hessian-free Newton step (pass/softmax.c): conjugate gradients on
 * Hessian-vector products, preconditioned by the fixed-curvature bound. Run to convergence
 * its direction is the Newton direction of the formed Hessian; truncated, the step the
 * Newton loop takes with it never raises the objective.
 */
#include "common/data.h"
#include "common/inputs.h"
#include "common/linalg.h"
#include "pass/gate.h"
#include "moe/kernels.h"
#include "pass/softmax.h"
#include "support/runner.h"
#include "support/synthetic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 700, FEATURES = 4, CLASSES = 4, P = FEATURES + 1, M = (CLASSES - 1) * P };

typedef struct problem_fixture {
    double X[ROWS * FEATURES], weights[ROWS], targets[ROWS * CLASSES];
    double coefficients[CLASSES * P], curvature[P * P];
    unsigned char inputs[P];
    moe_data data;
    moe_softmax_problem problem;
} problem_fixture;

/* Random rows, weights and soft targets; a random gate; l2 and held inputs when asked. The
   curvature is the bound E_w[x x'] / 2 + l2 off the intercept, as the gate's. */
static void fixture_make(problem_fixture *f, uint64_t seed, double l2, int hold)
{
    test_rng rng = {seed};
    double total = 0.0;
    for (size_t i = 0; i < ROWS; ++i) {
        for (size_t j = 0; j < FEATURES; ++j)
            f->X[i * FEATURES + j] = (1.0 + (double)j) * test_normal(&rng) + 0.5;
        f->weights[i] = 0.2 + test_uniform(&rng);
        total += f->weights[i];
        test_probabilities(&rng, CLASSES, f->targets + i * CLASSES);
    }
    memset(f->coefficients, 0, sizeof f->coefficients);
    for (size_t a = 0; a < M; ++a)
        f->coefficients[a] = 0.7 * test_normal(&rng);
    moe_data data = {ROWS, FEATURES, FEATURES, 1, f->X, NULL, f->weights};
    f->data = data;
    memset(f->curvature, 0, sizeof f->curvature);
    double row[P];
    for (size_t i = 0; i < ROWS; ++i) {
        moe_data_load_block(&f->data, i, 1, row);
        for (size_t a = 0; a < P; ++a)
            for (size_t b = 0; b < P; ++b)
                f->curvature[a * P + b] += 0.5 * f->weights[i] * row[a] * row[b] / total;
    }
    for (size_t j = 1; j < P; ++j)
        f->curvature[j * P + j] += l2;
    memset(f->inputs, MOE_INPUT_FREE, sizeof f->inputs);
    if (hold) {
        f->inputs[2] = MOE_INPUT_UNSEEN;
        for (size_t a = 0; a + 1 < CLASSES; ++a)
            f->coefficients[a * P + 2] = 0.0;
        moe_inputs_restrict_step(1, P, f->inputs, f->curvature, NULL);
    }
    moe_softmax_problem problem = {&f->data, CLASSES, f->targets, NULL, 0, NULL, 0, total, l2,
                                   1, 1, hold ? f->inputs : NULL, f->curvature};
    f->problem = problem;
}

static double max_relative_gap(const double *a, const double *b, size_t count)
{
    double scale = 0.0, gap = 0.0;
    for (size_t i = 0; i < count; ++i)
        scale = fmax(scale, fabs(b[i]));
    for (size_t i = 0; i < count; ++i)
        gap = fmax(gap, fabs(a[i] - b[i]));
    return gap / scale;
}

START_TEST(converged_direction_is_newtons)
{
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        problem_fixture f;
        fixture_make(&f, seed, seed % 2 ? 0.0 : 0.05, seed % 3 == 0);
        char message[256] = "";
        double direction[M], newton[M], gradient[M], hessian[M * M];
        size_t products = 0;
        EXPECT_STATUS(moe_softmax_hessian_free_direction(&f.problem, f.coefficients, direction,
                                                         1e-14, 4 * M, &products, message),
                      MOE_OK);
        moe_softmax_problem formed = f.problem;
        formed.curvature = NULL;
        EXPECT_STATUS(moe_softmax_gradient(&formed, f.coefficients, gradient, NULL, message),
                      MOE_OK);
        EXPECT_STATUS(moe_softmax_hessian(&formed, f.coefficients, hessian, message), MOE_OK);
        for (size_t a = 0; a < M; ++a)
            newton[a] = -gradient[a];
        double work[M * (M + 1)];
        int ridge_used = 0;
        ck_assert_int_eq(moe_solve_spd(M, hessian, newton, work, &ridge_used), 0);
        double gap = max_relative_gap(direction, newton, M);
        ck_assert_msg(gap <= 1e-8, "seed %u: Hessian-free direction off Newton's by %g",
                      (unsigned)seed, gap);
        ck_assert_uint_gt(products, 0);
        ck_assert_uint_le(products, 4 * M);
    }
}
END_TEST

START_TEST(truncated_steps_never_raise_the_objective)
{
    for (uint64_t seed = 11; seed <= 30; ++seed) {
        problem_fixture f;
        fixture_make(&f, seed, seed % 2 ? 0.0 : 0.01, seed % 4 == 0);
        /* Far starts too: the full step is then often too long and must be halved. */
        for (size_t a = 0; a < M; ++a)
            f.coefficients[a] *= 1.0 + (double)(seed % 5);
        if (seed % 4 == 0)
            for (size_t a = 0; a + 1 < CLASSES; ++a)
                f.coefficients[a * P + 2] = 0.0;
        char message[256] = "";
        double before = 0.0, after = 0.0;
        EXPECT_STATUS(moe_softmax_objective(&f.problem, f.coefficients, &before, message),
                      MOE_OK);
        for (size_t steps = 0; steps < 3; ++steps) {
            moe_newton_options options = {1, 1e-12};
            moe_newton_report report = {0, 0, 0, 0};
            EXPECT_STATUS(moe_softmax_newton(&f.problem, f.coefficients, &options, &report,
                                             message),
                          MOE_OK);
            EXPECT_STATUS(moe_softmax_objective(&f.problem, f.coefficients, &after, message),
                          MOE_OK);
            ck_assert_msg(after <= before + 1e-14 * (1.0 + fabs(before)),
                          "seed %u step %zu: %.17g -> %.17g", (unsigned)seed, steps, before,
                          after);
            ck_assert_msg(report.steps == 1 || after == before, "seed %u: no step taken",
                          (unsigned)seed);
            before = after;
        }
        if (seed % 4 == 0)
            for (size_t a = 0; a + 1 < CLASSES; ++a)
                ck_assert(f.coefficients[a * P + 2] == 0.0);
    }
}
END_TEST

/* auto's documented rule (include/moe/fitter.h, gate_solver): the Hessian-free step when
   K p > 104 or when the Newton system is over MOE_NEWTON_MAX_UNKNOWNS, else newton_step;
   a named solver is kept whatever the shape. */
START_TEST(auto_switches_where_documented)
{
    static const struct {
        size_t experts, inputs;
        int solver;
    } shapes[] = {
        {3, 6, MOE_GATE_SOLVER_NEWTON_STEP},   {4, 21, MOE_GATE_SOLVER_NEWTON_STEP},
        {2, 51, MOE_GATE_SOLVER_NEWTON_STEP},  {8, 13, MOE_GATE_SOLVER_NEWTON_STEP},
        {4, 31, MOE_GATE_SOLVER_HESSIAN_FREE}, {6, 21, MOE_GATE_SOLVER_HESSIAN_FREE},
        {8, 51, MOE_GATE_SOLVER_HESSIAN_FREE}, {2, 105, MOE_GATE_SOLVER_HESSIAN_FREE},
        /* (K - 1) p = 4097 unknowns, K p = 8194 */
        {2, MOE_NEWTON_MAX_UNKNOWNS + 1, MOE_GATE_SOLVER_HESSIAN_FREE},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        size_t K = shapes[s].experts, p = shapes[s].inputs;
        ck_assert_int_eq(moe_gate_solver_resolve(MOE_GATE_SOLVER_AUTO, K, p, 1000),
                         shapes[s].solver);
        ck_assert_int_eq(moe_gate_solver_resolve(MOE_GATE_SOLVER_NEWTON_STEP, K, p, 1000),
                         MOE_GATE_SOLVER_NEWTON_STEP);
        ck_assert_int_eq(moe_gate_solver_resolve(MOE_GATE_SOLVER_HESSIAN_FREE, K, p, 1000),
                         MOE_GATE_SOLVER_HESSIAN_FREE);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("hessian_free");
    TCase *cases = tcase_create("gate step");
    tcase_add_test(cases, converged_direction_is_newtons);
    tcase_add_test(cases, truncated_steps_never_raise_the_objective);
    tcase_add_test(cases, auto_switches_where_documented);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
