#include "pass/gate.h"
#include "common/linalg.h"
#include "pass/softmax.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void moe_gate_logits(const struct moe_model *model, size_t rows, const double *block,
                     double *logits)
{
    moe_product_abt(rows, model->n_experts, model->n_inputs, block, model->gate, logits);
}

void moe_gate_log_proba(const struct moe_model *model, size_t rows, const double *block,
                        double *log_proba)
{
    size_t K = model->n_experts;
    moe_gate_logits(model, rows, block, log_proba);
    for (size_t i = 0; i < rows; ++i)
        moe_log_softmax(log_proba + i * K, K);
}

/*
 * The gate M-step is softmax regression of the responsibilities on x. The penalty is on the
 * gate rows centred over experts, (l2/2) sum_k ||w_k - mean_w||^2, rather than on the stored
 * rows: the stored rows are relative to the last expert, so a plain ||w||^2 would depend on
 * which expert happens to be the reference.
 */
moe_softmax_problem moe_gate_problem(const struct moe_model *model, const moe_data *data,
                                     const double *resp, double l2)
{
    moe_softmax_problem problem = {data, model->n_experts, resp, NULL, 0, NULL, 0,
                                   moe_data_total_weight(data), l2, 1, 1, model->gate_inputs,
                                   NULL};
    return problem;
}

double moe_gate_penalty(const struct moe_model *model, double l2)
{
    moe_data shape = {0, model->n_features, model->n_features, model->intercept, NULL, NULL, NULL};
    moe_softmax_problem problem = moe_gate_problem(model, &shape, NULL, l2);
    return moe_softmax_penalty(&problem, model->gate);
}

moe_status moe_gate_newton(struct moe_model *model, const moe_data *data, const double *resp,
                           const moe_gate_options *options, moe_gate_report *report,
                           char *message)
{
    if (model->n_experts == 1)
        return MOE_OK;
    moe_softmax_problem problem = moe_gate_problem(model, data, resp, options->l2);
    problem.threads = options->threads;
    problem.curvature = options->curvature;
    moe_newton_options newton = {options->max_newton, options->tolerance};
    moe_newton_report outcome = {0, 0, 0, 0};
    moe_status status = moe_softmax_newton(&problem, model->gate, &newton, &outcome, message);
    report->newton_steps += outcome.steps;
    report->ridge_fallbacks += outcome.ridge_fallbacks;
    report->line_search_failures += outcome.line_search_failures;
    report->separations += (size_t)outcome.separated;
    return status;
}

int moe_gate_solver_resolve(int solver, size_t K, size_t p, size_t n)
{
    (void)n;
    if (solver != MOE_GATE_SOLVER_AUTO)
        return solver;
    size_t J = K > 1 ? K - 1 : 1;
    if (J * p > MOE_NEWTON_MAX_UNKNOWNS)
        return MOE_GATE_SOLVER_HESSIAN_FREE;
    /* A Hessian's Grams cost J (J + 1) / 2 p^2 per row; a Hessian-free step about 4 J p per
       product, with some ten products and three passes a step: the Hessian costs more from
       K p > 104. Timed converged default fits agree (bench/RESULTS.md, "Where auto
       switches"): no clear winner at K p = 84 to 102, the Hessian-free step 1.2 to 2.8
       times faster from 124 up. */
    double formed = 0.5 * (double)(J * (J + 1)) * (double)(p * p);
    double products = 4.0 * (double)(J * p) * 13.0;
    return formed > products ? MOE_GATE_SOLVER_HESSIAN_FREE : MOE_GATE_SOLVER_NEWTON_STEP;
}

moe_status moe_gate_gradient_steps(struct moe_model *model, const moe_data *data,
                                   const double *resp, double l2, size_t threads, size_t steps,
                                   double step_size, char *message)
{
    if (model->n_experts == 1)
        return MOE_OK;
    moe_softmax_problem problem = moe_gate_problem(model, data, resp, l2);
    problem.threads = threads;
    return moe_softmax_gradient_steps(&problem, model->gate, steps, step_size, message);
}

moe_status moe_gate_gradient(const struct moe_model *model, const moe_data *data,
                             const double *resp, double l2, size_t threads, double *gradient,
                             char *message)
{
    if (model->n_experts == 1)
        return MOE_OK;
    moe_softmax_problem problem = moe_gate_problem(model, data, resp, l2);
    problem.threads = threads;
    return moe_softmax_gradient(&problem, model->gate, gradient, NULL, message);
}

moe_status moe_gate_bound_apply(struct moe_model *model, double *gradient,
                                const double *curvature, double *work, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    if (K == 1)
        return MOE_OK;
    double *sum = work + p * (p + 1);
    memset(sum, 0, p * sizeof(double));
    /* The curvature is restricted to the gate's inputs by its maker; a held input's
       gradient is zero, so its step is too. */
    moe_inputs_zero(K - 1, p, model->gate_inputs, gradient);
    for (size_t k = 0; k + 1 < K; ++k) {
        int ridge_used = 0;
        if (moe_solve_spd(p, curvature, gradient + k * p, work, &ridge_used) != 0)
            return moe_fail(message, MOE_ERR_NUMERICAL,
                            "the gate's curvature bound E[x x']/2 is singular");
        for (size_t j = 0; j < p; ++j)
            sum[j] += gradient[k * p + j];
    }
    /* (I - 11'/K)^-1 = I + 11' on the K - 1 free rows. */
    for (size_t k = 0; k + 1 < K; ++k)
        for (size_t j = 0; j < p; ++j)
            model->gate[k * p + j] -= gradient[k * p + j] + sum[j];
    return MOE_OK;
}

moe_status moe_gate_bound_step(struct moe_model *model, const moe_data *data, const double *resp,
                               double l2, size_t threads, const double *curvature, double *work,
                               char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    if (K == 1)
        return MOE_OK;
    double *gradient = malloc((K - 1) * p * sizeof(double));
    if (gradient == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the gate gradient");
    moe_status status = moe_gate_gradient(model, data, resp, l2, threads, gradient, message);
    if (status == MOE_OK)
        status = moe_gate_bound_apply(model, gradient, curvature, work, message);
    free(gradient);
    return status;
}
