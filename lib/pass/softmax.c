#include "pass/softmax.h"
#include "common/inputs.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/linalg.h"
#include "common/parallel.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A pass's sums (accumulated over row chunks, possibly on threads) and the Newton solver's
 * vectors. sums = [data term, total weight, gradient (m), Hessian parts]; a pass without
 * the Hessian fills only the prefix. The assembled Hessian is kept apart, so that of an
 * earlier pass survives a gradient-only pass.
 */
typedef struct softmax_workspace {
    size_t classes, inputs, free_params; /* C, p, m = (C - 1) p */
    double *sums;
    double *gradient;     /* m, in sums */
    double *parts;        /* moe_softmax_hessian_parts, in sums (Newton only) */
    double *hessian;      /* m x m (Newton only) */
    double *direction;    /* m */
    double *work;         /* m x (m + 1) (Newton with a Hessian only) */
    double *saved;        /* m */
    /* Hessian-free directions (problem->curvature): the probabilities (n x C) of the last
       pass with derivatives, the conjugate-gradient vectors (4 m) and the preconditioner's
       scratch (p (p + 2)). */
    double *probability;
    double *vectors;
    double *solve_work;
} softmax_workspace;

static void workspace_free(softmax_workspace *w)
{
    free(w->sums);
    free(w->hessian);
    free(w->direction);
    free(w->work);
    free(w->saved);
    free(w->probability);
    free(w->vectors);
    free(w->solve_work);
}

static moe_status workspace_allocate(softmax_workspace *w, const moe_softmax_problem *problem,
                                     int newton, char *message)
{
    size_t C = problem->n_classes, p = moe_data_inputs(problem->data);
    memset(w, 0, sizeof *w);
    w->classes = C;
    w->inputs = p;
    w->free_params = (C - 1) * p;
    size_t m = w->free_params;
    int free_of_hessian = newton && problem->curvature != NULL;
    if (newton && !free_of_hessian && m > MOE_NEWTON_MAX_UNKNOWNS)
        return moe_fail(message, MOE_ERR_UNSUPPORTED,
                        "a Newton step over %zu unknowns is too large (limit %d); "
                        "use gradient steps (the inner_steps option)",
                        m, MOE_NEWTON_MAX_UNKNOWNS);
    int with_hessian = newton && !free_of_hessian;
    size_t size = 2 + m + (with_hessian ? moe_softmax_hessian_parts(C, p) : 0);
    w->sums = moe_calloc_array(size, 1, sizeof(double));
    int ok = w->sums != NULL;
    if (newton) {
        w->direction = moe_alloc_array(m, 1, sizeof(double));
        w->saved = moe_alloc_array(m, 1, sizeof(double));
        ok = ok && w->direction && w->saved;
    }
    if (with_hessian) {
        w->hessian = moe_alloc_array(m, m, sizeof(double));
        w->work = moe_alloc_array(m, m + 1, sizeof(double));
        ok = ok && w->hessian != NULL && w->work != NULL;
    }
    if (free_of_hessian) {
        w->probability = moe_alloc_array(problem->data->n, C, sizeof(double));
        w->vectors = moe_alloc_array(4 * m, 1, sizeof(double));
        w->solve_work = moe_alloc_array(p, p + 2, sizeof(double));
        ok = ok && w->probability && w->vectors && w->solve_work;
    }
    if (!ok) {
        workspace_free(w);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate a softmax regression workspace (%zu classes, %zu inputs)",
                        C, p);
    }
    w->gradient = w->sums + 2;
    if (with_hessian)
        w->parts = w->gradient + m;
    return MOE_OK;
}

static double row_weight(const moe_softmax_problem *problem, size_t row)
{
    double weight = moe_data_weight(problem->data, row);
    if (problem->row_scale != NULL)
        weight *= problem->row_scale[row * problem->row_scale_stride];
    return weight;
}

/* The coefficient row that a hard label selects. */
static size_t label_row(const moe_softmax_problem *problem, size_t row)
{
    size_t label = (size_t)problem->labels[row];
    if (problem->label_is_first_row)
        return label == 1 ? 0 : problem->n_classes - 1;
    return label;
}

static double target(const moe_softmax_problem *problem, size_t row, size_t c)
{
    if (problem->targets != NULL)
        return problem->targets[row * problem->n_classes + c];
    return label_row(problem, row) == c ? 1.0 : 0.0;
}

double moe_softmax_penalty(const moe_softmax_problem *problem, const double *coefficients)
{
    if (problem->l2 == 0.0)
        return 0.0;
    size_t C = problem->n_classes, p = moe_data_inputs(problem->data);
    double sum = 0.0;
    for (size_t j = (size_t)problem->data->intercept; j < p; ++j) {
        double column = 0.0, squares = 0.0;
        for (size_t c = 0; c + 1 < C; ++c) {
            double value = coefficients[c * p + j];
            column += value;
            squares += value * value;
        }
        sum += problem->centred ? squares - column * column / (double)C : squares;
    }
    return 0.5 * problem->l2 * sum;
}

static void add_penalty_gradient(const moe_softmax_problem *problem, const double *coefficients,
                                 double *gradient)
{
    if (problem->l2 == 0.0)
        return;
    size_t C = problem->n_classes, p = moe_data_inputs(problem->data);
    for (size_t j = (size_t)problem->data->intercept; j < p; ++j) {
        double mean = 0.0;
        if (problem->centred) {
            for (size_t c = 0; c + 1 < C; ++c)
                mean += coefficients[c * p + j];
            mean /= (double)C;
        }
        for (size_t c = 0; c + 1 < C; ++c)
            gradient[c * p + j] += problem->l2 * (coefficients[c * p + j] - mean);
    }
}

/* Penalty Hessian: l2 (I - 11'/C) per input when centred, l2 I otherwise. */
static void add_penalty_hessian(const moe_softmax_problem *problem, size_t m, double *hessian)
{
    if (problem->l2 == 0.0)
        return;
    size_t C = problem->n_classes, p = moe_data_inputs(problem->data);
    double share = problem->centred ? 1.0 / (double)C : 0.0;
    for (size_t j = (size_t)problem->data->intercept; j < p; ++j)
        for (size_t a = 0; a + 1 < C; ++a)
            for (size_t b = 0; b + 1 < C; ++b)
                hessian[(a * p + j) * m + b * p + j] +=
                    problem->l2 * ((a == b ? 1.0 : 0.0) - share);
}

size_t moe_softmax_hessian_parts(size_t n_classes, size_t p)
{
    size_t J = n_classes - 1;
    return J * (J + 1) / 2 * p * p;
}

size_t moe_softmax_scratch_size(size_t rows, size_t n_classes, size_t p)
{
    size_t J = n_classes - 1, pairs = J * (J + 1) / 2;
    return rows * pairs + moe_weighted_grams_scratch(rows, p, pairs);
}

void moe_softmax_block_derivatives(size_t rows, size_t p, size_t n_classes, const double *block,
                                   const double *weights, const double *probability,
                                   const double *residuals, double *gradient, double *parts,
                                   double *scratch)
{
    size_t C = n_classes, J = C - 1, pairs = J * (J + 1) / 2;
    moe_product_atb_add(rows, J, p, residuals, block, gradient);
    if (parts == NULL)
        return;
    double *pair_weights = scratch, *gram_scratch = scratch + rows * pairs;
    moe_softmax_pair_weights(rows, C, weights, probability, pair_weights, pairs);
    moe_weighted_grams_add(rows, p, pairs, block, pair_weights, gram_scratch, parts);
}

static inline __attribute__((always_inline)) void
pair_weights_of(size_t rows, size_t n_classes, const double *weights, const double *probability,
                double *out, size_t stride)
{
    size_t C = n_classes, J = C - 1;
    for (size_t i = 0; i < rows; ++i) {
        const double *pi = probability + i * C;
        double *row = out + i * stride;
        for (size_t a = 0, at = 0; a < J; ++a) {
            row[at++] = weights[i] * pi[a] * (1.0 - pi[a]);
            for (size_t b = a + 1; b < J; ++b)
                row[at++] = weights[i] * pi[a] * pi[b];
        }
    }
}

void moe_softmax_pair_weights(size_t rows, size_t n_classes, const double *weights,
                              const double *probability, double *out, size_t stride)
{
    /* A constant class count unrolls the pair loops (EM's gate: K = 2 to 4 mostly). */
    switch (n_classes) {
    case 2: pair_weights_of(rows, 2, weights, probability, out, stride); break;
    case 3: pair_weights_of(rows, 3, weights, probability, out, stride); break;
    case 4: pair_weights_of(rows, 4, weights, probability, out, stride); break;
    default: pair_weights_of(rows, n_classes, weights, probability, out, stride); break;
    }
}

void moe_softmax_finish_gradient(const moe_softmax_problem *problem, const double *coefficients,
                                 double *gradient)
{
    size_t m = (problem->n_classes - 1) * moe_data_inputs(problem->data);
    double inverse = 1.0 / problem->total_weight;
    for (size_t a = 0; a < m; ++a)
        gradient[a] *= inverse;
    add_penalty_gradient(problem, coefficients, gradient);
    moe_inputs_zero(problem->n_classes - 1, moe_data_inputs(problem->data), problem->inputs,
                    gradient);
}

void moe_softmax_finish_hessian(const moe_softmax_problem *problem, const double *parts,
                                double *hessian)
{
    size_t p = moe_data_inputs(problem->data), J = problem->n_classes - 1, m = J * p;
    double inverse = 1.0 / problem->total_weight;
    for (size_t a = 0, at = 0; a < J; ++a)
        for (size_t b = a; b < J; ++b, ++at) {
            const double *gram = parts + at * p * p;
            double sign = a == b ? inverse : -inverse;
            for (size_t i = 0; i < p; ++i)
                for (size_t j = 0; j < p; ++j) {
                    double value = sign * (i <= j ? gram[i * p + j] : gram[j * p + i]);
                    hessian[(a * p + i) * m + b * p + j] = value;
                    hessian[(b * p + j) * m + a * p + i] = value;
                }
        }
    add_penalty_hessian(problem, m, hessian);
    moe_inputs_restrict_step(J, p, problem->inputs, hessian, NULL);
}

typedef struct softmax_chunk_context {
    const moe_softmax_problem *problem;
    const double *coefficients;
    int want_gradient, want_hessian;
    double *probability; /* NULL, or n x C: the rows' probabilities are kept there */
} softmax_chunk_context;

/* Per-thread scratch of a pass, in doubles. */
static size_t chunk_workspace_size(size_t n, size_t C, size_t p, int want_hessian)
{
    size_t R = moe_block_rows_for(n);
    return R * p + 2 * R * C + R * (C - 1) + R +
           (want_hessian ? moe_softmax_scratch_size(R, C, p) : 0);
}

static size_t softmax_chunk(void *opaque, size_t start, size_t rows, double *sums,
                           double *memory)
{
    const softmax_chunk_context *context = opaque;
    const moe_softmax_problem *problem = context->problem;
    const moe_data *data = problem->data;
    size_t C = problem->n_classes, p = moe_data_inputs(data), J = C - 1, m = J * p;
    size_t R = moe_block_rows_for(rows);
    double *copy = memory, *log_proba = copy + R * p, *probability = log_proba + R * C;
    double *residuals = probability + R * C, *weights = residuals + R * J;
    double *scratch = weights + R;
    double *gradient = sums + 2, *parts = gradient + m;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset, count = rows - offset < R ? rows - offset : R;
        const double *block = moe_data_block(data, first, count, copy);
        moe_product_abt(count, C, p, block, context->coefficients, log_proba);
        moe_softmax_rows(count, C, log_proba, probability, NULL);
        if (context->probability != NULL)
            memcpy(context->probability + first * C, probability, count * C * sizeof(double));
        for (size_t i = 0; i < count; ++i) {
            size_t row = first + i;
            double weight = row_weight(problem, row);
            const double *log_p = log_proba + i * C, *proba = probability + i * C;
            weights[i] = weight;
            double loss = 0.0;
            if (weight > 0.0)
                for (size_t c = 0; c < C; ++c) {
                    double t = target(problem, row, c);
                    if (t > 0.0)
                        loss -= t * log_p[c];
                }
            sums[0] += weight * loss;
            sums[1] += weight;
            if (context->want_gradient)
                for (size_t c = 0; c < J; ++c)
                    residuals[i * J + c] = weight * (proba[c] - target(problem, row, c));
        }
        if (context->want_gradient)
            moe_softmax_block_derivatives(count, p, C, block, weights, probability, residuals,
                                          gradient, context->want_hessian ? parts : NULL,
                                          scratch);
    }
    return 0;
}

/*
 * One pass over the data at B: *data_sum receives the data term of Q times N, and when
 * asked w's gradient (scaled to the mean) and Hessian. *scaled_weight (if not NULL)
 * receives sum_i v_i. Fails only when the thread workspaces cannot be allocated.
 */
static moe_status softmax_pass(const moe_softmax_problem *problem, const double *coefficients,
                               softmax_workspace *w, int want_gradient, int want_hessian,
                               double *data_sum, double *scaled_weight, char *message)
{
    size_t C = w->classes, p = w->inputs, m = w->free_params;
    /* Hessian-free: the derivative pass keeps the probabilities the products need. */
    double *kept = want_hessian ? w->probability : NULL;
    want_hessian = want_hessian && w->parts != NULL;
    softmax_chunk_context context = {problem, coefficients, want_gradient, want_hessian, kept};
    size_t size = 2 + (want_gradient ? m : 0) + (want_hessian ? moe_softmax_hessian_parts(C, p) : 0);
    moe_chunk_job job = {problem->data->n, size, chunk_workspace_size(problem->data->n, C, p, want_hessian),
                         softmax_chunk, &context};
    size_t ignored = 0;
    moe_status status = moe_run_chunks(&job, problem->threads, w->sums, &ignored, message);
    if (status != MOE_OK)
        return status;
    if (want_gradient)
        moe_softmax_finish_gradient(problem, coefficients, w->gradient);
    if (want_hessian)
        moe_softmax_finish_hessian(problem, w->parts, w->hessian);
    *data_sum = w->sums[0];
    if (scaled_weight != NULL)
        *scaled_weight = w->sums[1];
    return MOE_OK;
}

moe_status moe_softmax_objective(const moe_softmax_problem *problem, const double *coefficients,
                                 double *objective, char *message)
{
    softmax_workspace w;
    moe_status status = workspace_allocate(&w, problem, 0, message);
    if (status != MOE_OK)
        return status;
    double sum = 0.0;
    status = softmax_pass(problem, coefficients, &w, 0, 0, &sum, NULL, message);
    if (status == MOE_OK)
        *objective = sum / problem->total_weight + moe_softmax_penalty(problem, coefficients);
    workspace_free(&w);
    return status;
}

moe_status moe_softmax_gradient(const moe_softmax_problem *problem, const double *coefficients,
                                double *gradient, double *objective, char *message)
{
    softmax_workspace w;
    moe_status status = workspace_allocate(&w, problem, 0, message);
    if (status != MOE_OK)
        return status;
    double sum = 0.0;
    status = softmax_pass(problem, coefficients, &w, 1, 0, &sum, NULL, message);
    if (status == MOE_OK) {
        memcpy(gradient, w.gradient, w.free_params * sizeof(double));
        if (objective != NULL)
            *objective = sum / problem->total_weight + moe_softmax_penalty(problem, coefficients);
    }
    workspace_free(&w);
    return status;
}

moe_status moe_softmax_hessian(const moe_softmax_problem *problem, const double *coefficients,
                               double *hessian, char *message)
{
    moe_softmax_problem formed = *problem;
    formed.curvature = NULL;
    problem = &formed;
    softmax_workspace w;
    moe_status status = workspace_allocate(&w, problem, 1, message);
    if (status != MOE_OK)
        return status;
    double ignored = 0.0;
    status = softmax_pass(problem, coefficients, &w, 1, 1, &ignored, NULL, message);
    if (status == MOE_OK)
        memcpy(hessian, w.hessian, w.free_params * w.free_params * sizeof(double));
    workspace_free(&w);
    return status;
}

/* ---- Hessian-free directions -------------------------------------------------------------- */

typedef struct product_context {
    const moe_softmax_problem *problem;
    const double *probability; /* n x C */
    const double *vector;      /* (C - 1) x p */
} product_context;

/* H v over a chunk (sum scale): for each row, with u = V x and s_a = p_a (u_a - p'u) over the
   free classes (the reference's u is zero), v_i s x'. Two products per block. */
static size_t product_chunk(void *opaque, size_t start, size_t rows, double *sums,
                            double *memory)
{
    const product_context *context = opaque;
    const moe_softmax_problem *problem = context->problem;
    size_t C = problem->n_classes, J = C - 1, p = moe_data_inputs(problem->data);
    size_t R = moe_block_rows_for(rows);
    double *copy = memory, *projected = copy + R * p;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset, count = rows - offset < R ? rows - offset : R;
        const double *block = moe_data_block(problem->data, first, count, copy);
        moe_product_abt(count, J, p, block, context->vector, projected);
        for (size_t i = 0; i < count; ++i) {
            const double *proba = context->probability + (first + i) * C;
            double *u = projected + i * J, mean = 0.0;
            for (size_t a = 0; a < J; ++a)
                mean += proba[a] * u[a];
            double weight = row_weight(problem, first + i);
            for (size_t a = 0; a < J; ++a)
                u[a] = weight * proba[a] * (u[a] - mean);
        }
        moe_product_atb_add(count, J, p, projected, block, sums);
    }
    return 0;
}

/* product = H vector (mean scale, penalty included, held inputs' entries zero): one pass. */
static moe_status hessian_product(const moe_softmax_problem *problem, const softmax_workspace *w,
                                  const double *vector, double *product, char *message)
{
    size_t n = problem->data->n, J = w->classes - 1, p = w->inputs, m = w->free_params;
    size_t R = moe_block_rows_for(n);
    product_context context = {problem, w->probability, vector};
    moe_chunk_job job = {n, m, R * p + R * J, product_chunk, &context};
    size_t ignored = 0;
    moe_status status = moe_run_chunks(&job, problem->threads, product, &ignored, message);
    if (status != MOE_OK)
        return status;
    double inverse = 1.0 / problem->total_weight;
    for (size_t a = 0; a < m; ++a)
        product[a] *= inverse;
    /* The penalty is quadratic: its Hessian times V is its gradient at V. */
    add_penalty_gradient(problem, vector, product);
    moe_inputs_zero(J, p, problem->inputs, product);
    return MOE_OK;
}

/* out = ((I - 11'/C) (x) curvature)^-1 in: per class the curvature's solve, then
   (I - 11'/C)^-1 = I + 11' over the free classes. 0 when the curvature is singular. */
static int precondition(const moe_softmax_problem *problem, const softmax_workspace *w,
                        const double *in, double *out)
{
    size_t J = w->classes - 1, p = w->inputs;
    double *sum = w->solve_work + p * (p + 1);
    memcpy(out, in, J * p * sizeof(double));
    memset(sum, 0, p * sizeof(double));
    for (size_t a = 0; a < J; ++a) {
        int ridge_used = 0;
        if (moe_solve_spd(p, problem->curvature, out + a * p, w->solve_work, &ridge_used) != 0)
            return 0;
        for (size_t j = 0; j < p; ++j)
            sum[j] += out[a * p + j];
    }
    for (size_t a = 0; a < J; ++a)
        for (size_t j = 0; j < p; ++j)
            out[a * p + j] += sum[j];
    moe_inputs_zero(J, p, problem->inputs, out);
    return 1;
}

/*
 * Preconditioned conjugate gradients on H x = b from x = 0, b held in `direction` on entry
 * and x left there: until the preconditioned residual falls to `tolerance` times its start
 * (in the norm r' M^-1 r) or after `limit` products. From zero every iterate satisfies
 * b'x = x'Hx > 0, so a truncated x is a descent direction with the Newton loop's decrement.
 * *solved 0 when not even one step could be taken (no curvature along the gradient).
 */
static moe_status conjugate_gradients(const moe_softmax_problem *problem, softmax_workspace *w,
                                      double *direction, double tolerance, size_t limit,
                                      size_t *products, int *solved, char *message)
{
    size_t m = w->free_params;
    double *residual = w->vectors, *preconditioned = residual + m, *search = residual + 2 * m;
    double *product = residual + 3 * m;
    memcpy(residual, direction, m * sizeof(double));
    memset(direction, 0, m * sizeof(double));
    *solved = 0;
    if (!precondition(problem, w, residual, preconditioned))
        return MOE_OK;
    memcpy(search, preconditioned, m * sizeof(double));
    double rho = moe_dot(m, residual, preconditioned), start = rho;
    for (size_t iteration = 0; iteration < limit && rho > tolerance * tolerance * start;
         ++iteration) {
        moe_status status = hessian_product(problem, w, search, product, message);
        if (status != MOE_OK)
            return status;
        ++*products;
        double curvature = moe_dot(m, search, product);
        if (!(curvature > 0.0))
            break;
        double alpha = rho / curvature;
        for (size_t a = 0; a < m; ++a) {
            direction[a] += alpha * search[a];
            residual[a] -= alpha * product[a];
        }
        *solved = 1;
        if (!precondition(problem, w, residual, preconditioned))
            break;
        double next = moe_dot(m, residual, preconditioned);
        for (size_t a = 0; a < m; ++a)
            search[a] = preconditioned[a] + next / rho * search[a];
        rho = next;
    }
    return MOE_OK;
}

/* The Newton loop's view of a softmax problem (pass/newton.h): the pass at B, with the
   gradient on a full step's trial (free in the same pass) and the Hessian when asked. */
typedef struct softmax_newton {
    const moe_softmax_problem *problem;
    double *coefficients;
    softmax_workspace *w;
    double scaled_weight; /* sum_i v_i, from the passes with the gradient */
    size_t products;      /* Hessian-vector products */
} softmax_newton;

/* The truncated Newton direction's forcing term (the preconditioned residual relative to
   the gradient's) and the most products per direction: EM takes one step per iteration, so
   the direction need not be exact (bench/RESULTS.md, "Hessian-free gate steps"). */
#define HESSIAN_FREE_FORCING 0.1
#define HESSIAN_FREE_PRODUCTS 50

static moe_status softmax_solve(void *user, double *direction, int *solved, char *message)
{
    softmax_newton *s = user;
    return conjugate_gradients(s->problem, s->w, direction, HESSIAN_FREE_FORCING,
                               HESSIAN_FREE_PRODUCTS, &s->products, solved, message);
}

static moe_status softmax_evaluate(void *user, int level, double *objective,
                                   int *gradient_ready, char *message)
{
    softmax_newton *s = user;
    int want_gradient = level != MOE_NEWTON_OBJECTIVE;
    double sum = 0.0;
    moe_status status = softmax_pass(s->problem, s->coefficients, s->w, want_gradient,
                                     level == MOE_NEWTON_DERIVATIVES, &sum,
                                     want_gradient ? &s->scaled_weight : NULL, message);
    if (status != MOE_OK)
        return status;
    *objective = sum / s->problem->total_weight + moe_softmax_penalty(s->problem, s->coefficients);
    *gradient_ready = want_gradient;
    return MOE_OK;
}

moe_status moe_softmax_newton(const moe_softmax_problem *problem, double *coefficients,
                              const moe_newton_options *options, moe_newton_report *report,
                              char *message)
{
    softmax_workspace w;
    moe_status status = workspace_allocate(&w, problem, 1, message);
    if (status != MOE_OK)
        return status;
    softmax_newton s = {problem, coefficients, &w, 0.0, 0};
    /* The free rows 0..C-2 are contiguous: the first m values. */
    moe_newton_problem newton = {w.free_params, coefficients, w.gradient, w.hessian,
                                 w.direction, w.saved, w.work, softmax_evaluate, &s,
                                 problem->curvature != NULL ? softmax_solve : NULL};
    double objective = INFINITY;
    status = moe_newton_minimise(&newton, options, report, &objective, message);
    /* Perfectly fitted weighted data without a penalty (the objective is then the data
       term): the infimum is at infinity. */
    if (problem->l2 == 0.0 && s.scaled_weight > 0.0 &&
        moe_softmax_separated(objective * problem->total_weight, s.scaled_weight))
        report->separated = 1;
    workspace_free(&w);
    return status;
}

moe_status moe_softmax_hessian_free_direction(const moe_softmax_problem *problem,
                                             const double *coefficients, double *direction,
                                             double tolerance, size_t limit, size_t *products,
                                             char *message)
{
    if (problem->curvature == NULL)
        return moe_fail(message, MOE_ERR_INTERNAL, "a Hessian-free direction needs a curvature");
    softmax_workspace w;
    moe_status status = workspace_allocate(&w, problem, 1, message);
    if (status != MOE_OK)
        return status;
    double ignored = 0.0;
    status = softmax_pass(problem, coefficients, &w, 1, 1, &ignored, NULL, message);
    int solved = 0;
    *products = 0;
    if (status == MOE_OK) {
        for (size_t a = 0; a < w.free_params; ++a)
            direction[a] = -w.gradient[a];
        status = conjugate_gradients(problem, &w, direction, tolerance, limit, products,
                                     &solved, message);
    }
    workspace_free(&w);
    return status;
}

moe_status moe_softmax_gradient_steps(const moe_softmax_problem *problem, double *coefficients,
                                      size_t steps, double step_size, char *message)
{
    softmax_workspace w;
    moe_status status = workspace_allocate(&w, problem, 0, message);
    if (status != MOE_OK)
        return status;
    double ignored = 0.0;
    for (size_t step = 0; step < steps && status == MOE_OK; ++step) {
        status = softmax_pass(problem, coefficients, &w, 1, 0, &ignored, NULL, message);
        if (status == MOE_OK)
            cblas_daxpy((int)w.free_params, -step_size, w.gradient, 1, coefficients, 1);
    }
    workspace_free(&w);
    return status;
}

/* ---- Gradient steps on problems that share their rows ------------------------------------ */

typedef struct stacked_context {
    const moe_softmax_problem *problems; /* count problems, data and labels shared */
    size_t count;
    const double *coefficients; /* count C x p blocks, one after the other */
} stacked_context;

/* Per-thread scratch of a stacked pass, in doubles: the block, all problems' logits and
   probabilities (R x count C each) and residuals (R x count (C - 1)). */
static size_t stacked_workspace_size(size_t n, size_t count, size_t C, size_t p)
{
    size_t R = moe_block_rows_for(n);
    return R * p + 2 * R * count * C + R * count * (C - 1);
}

/*
 * The gradients of all problems over a chunk (sum scale, count (C - 1) x p in sums): per
 * block, one product for every problem's logits and one for every problem's gradient. Row i's
 * logits of problem e are columns e C .. e C + C - 1 of the block's logits, so the softmax
 * runs on them as rows of their own. The arithmetic of each value is moe_softmax_gradient's.
 */
static size_t stacked_chunk(void *opaque, size_t start, size_t rows, double *sums,
                            double *memory)
{
    const stacked_context *context = opaque;
    const moe_softmax_problem *first = context->problems;
    size_t S = context->count, C = first->n_classes, J = C - 1;
    size_t p = moe_data_inputs(first->data), R = moe_block_rows_for(rows);
    double *copy = memory, *logits = copy + R * p, *probability = logits + R * S * C;
    double *residuals = probability + R * S * C;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t row0 = start + offset, count = rows - offset < R ? rows - offset : R;
        const double *block = moe_data_block(first->data, row0, count, copy);
        moe_product_abt(count, S * C, p, block, context->coefficients, logits);
        moe_softmax_rows(count * S, C, logits, probability, NULL);
        for (size_t i = 0; i < count; ++i) {
            size_t row = row0 + i;
            for (size_t e = 0; e < S; ++e) {
                double weight = row_weight(&context->problems[e], row);
                const double *proba = probability + (i * S + e) * C;
                double *residual = residuals + (i * S + e) * J;
                for (size_t c = 0; c < J; ++c)
                    residual[c] = weight * (proba[c] - target(first, row, c));
            }
        }
        moe_product_atb_add(count, S * J, p, residuals, block, sums);
    }
    return 0;
}

moe_status moe_softmax_gradient_steps_stacked(const moe_softmax_problem *problems, size_t count,
                                              double *coefficients, size_t steps,
                                              double step_size, char *message)
{
    if (count == 0)
        return MOE_OK;
    const moe_softmax_problem *first = problems;
    size_t n = first->data->n, C = first->n_classes, p = moe_data_inputs(first->data);
    size_t m = (C - 1) * p;
    double *gradients = moe_alloc_array(count, m, sizeof(double));
    if (gradients == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate the gradients of %zu softmax problems", count);
    stacked_context context = {problems, count, coefficients};
    moe_chunk_job job = {n, count * m, stacked_workspace_size(n, count, C, p), stacked_chunk,
                         &context};
    moe_status status = MOE_OK;
    for (size_t step = 0; step < steps && status == MOE_OK; ++step) {
        size_t ignored = 0;
        status = moe_run_chunks(&job, first->threads, gradients, &ignored, message);
        for (size_t e = 0; e < count && status == MOE_OK; ++e) {
            double *block = coefficients + e * C * p, *gradient = gradients + e * m;
            moe_softmax_finish_gradient(&problems[e], block, gradient);
            cblas_daxpy((int)m, -step_size, gradient, 1, block, 1);
        }
    }
    free(gradients);
    return status;
}

int moe_softmax_separated(double data_sum, double weight)
{
    return data_sum <= 1e-9 * weight;
}
