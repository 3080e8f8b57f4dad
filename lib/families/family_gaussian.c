/*
 * Gaussian regression experts: y | x, expert k ~ N(g(beta_k' x~), sigma_k^2), g the model's
 * link (identity, sigmoid or ReLU; include/moe/model.h).
 * With the identity link the M-step is weighted least squares per expert followed by the
 * weighted residual variance, both exact maximisers of the EM surrogate. With a ridge
 * penalty the two are a conditional maximisation (ECM): the coefficients at the current
 * variance, then the variance at the new coefficients, so the penalised surrogate still
 * never decreases. With another link the coefficients take Gauss-Newton steps that are
 * kept only when they lower the weighted squared error (see link_m_step), and the variance
 * follows in closed form as before.
 */
#include "model/family.h"
#include "common/columns.h"
#include "common/simd.h"
#include "common/alloc.h"
#include "common/linalg.h"
#include "common/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double log_two_pi = 1.8378770664093454835606594728112;

static int gaussian_supports_link(moe_link link)
{
    return link == MOE_LINK_IDENTITY || link == MOE_LINK_SIGMOID || link == MOE_LINK_RELU;
}

/*
 * The link's value g(t) and slope g'(t). ReLU's slope is 1 above zero and 0 at zero and
 * below (the subgradient convention of docs/ARCHITECTURE.md). The sigmoid comes from
 * e = exp(-|t|), which cannot overflow, and its slope is e / (1 + e)^2 from the same e:
 * s (1 - s) would round to zero in the tails, where the slope is tiny but not zero.
 * A NaN predictor stays NaN in the value, so the checks downstream still see it.
 */
static void link_value(moe_link link, double t, double *value, double *slope)
{
    if (link == MOE_LINK_SIGMOID) {
        double e = moe_exp(-fabs(t)), inverse = 1.0 / (1.0 + e);
        *value = t >= 0.0 ? inverse : e * inverse;
        *slope = e * inverse * inverse;
    } else if (link == MOE_LINK_RELU) {
        *value = t <= 0.0 ? 0.0 : t;
        *slope = t > 0.0 ? 1.0 : 0.0;
    } else {
        *value = t;
        *slope = 1.0;
    }
}

/* means = g(linear) for a non-identity link, count values; the arrays must differ. The
   sigmoid's exponentials go through one array call: this is the E-step's inner loop. */
static void link_means(moe_link link, size_t count, const double *linear, double *means)
{
    if (link == MOE_LINK_RELU) {
        for (size_t i = 0; i < count; ++i)
            means[i] = linear[i] <= 0.0 ? 0.0 : linear[i];
        return;
    }
    for (size_t i = 0; i < count; ++i)
        means[i] = -fabs(linear[i]);
    moe_exp_array(count, means, means);
    for (size_t i = 0; i < count; ++i) {
        double e = means[i], inverse = 1.0 / (1.0 + e);
        means[i] = linear[i] >= 0.0 ? inverse : e * inverse;
    }
}

static size_t gaussian_expert_free_params(const struct moe_model *model)
{
    return moe_expert_free_inputs(model) + 1; /* coefficients and the variance */
}

static moe_status gaussian_check_response(const struct moe_model *model, size_t n,
                                          const double *X, size_t ldx, const double *y,
                                          char *message)
{
    (void)X;
    (void)ldx;
    (void)model;
    (void)n;
    (void)y;
    (void)message;
    return MOE_OK; /* any finite value; finiteness is checked for every family */
}

/* log N(y; mean, 1 / inverse) of a block's rows, as constant - e^2 inverse / 2. At d = 5
   this loop on SSE2's two lanes was 3% of an EM iteration. */
static inline __attribute__((always_inline)) void
normal_density_body(size_t rows, double constant, double inverse, const double *mean,
                    const double *y, double *density)
{
    for (size_t i = 0; i < rows; ++i) {
        double residual = y[i] - mean[i];
        density[i] = constant - 0.5 * residual * residual * inverse;
    }
}

MOE_SIMD_PROCEDURE(normal_density, normal_density_body,
                   (size_t rows, double constant, double inverse, const double *mean,
                    const double *y, double *density),
                   (rows, constant, inverse, mean, y, density))

static void gaussian_log_density(const struct moe_model *model, size_t rows,
    const double *columns, const double *linear,
                                 const double *y, double *out, double *scratch)
{
    (void)columns;
    size_t K = model->n_experts;
    const double *means = linear;
    if (model->link != MOE_LINK_IDENTITY) {
        link_means(model->link, rows * K, linear, scratch);
        means = scratch;
    }
    for (size_t k = 0; k < K; ++k) {
        double variance = model->variances[k];
        normal_density(rows, -0.5 * (log_two_pi + log(variance)), 1.0 / variance,
                       means + k * rows, y, out + k * rows);
    }
}

static size_t gaussian_prediction_width(const struct moe_model *model)
{
    (void)model;
    return 1;
}

static void gaussian_predict(const struct moe_model *model, size_t rows, const double *block,
                             const double *gate_proba, double *out, double *scratch)
{
    size_t K = model->n_experts;
    moe_expert_linear(model, rows, block, scratch);
    if (model->link != MOE_LINK_IDENTITY)
        for (size_t i = 0; i < rows * K; ++i) {
            double slope;
            link_value(model->link, scratch[i], &scratch[i], &slope);
        }
    for (size_t i = 0; i < rows; ++i)
        out[i] = moe_dot(K, gate_proba + i * K, scratch + i * K);
}

/*
 * Sufficient statistics of the M-step, per expert k, with the residuals e = y - x'beta_k at
 * the current coefficients: the weighted Gram matrix G_k (upper triangle), rhs_k =
 * sum w r x e, the total weight and sum w r e^2. The update is then beta + delta with
 * (G + shrink) delta = rhs - shrink beta, and the new residual sum of squares follows
 * without a second pass (see gaussian_solve_statistics).
 * Layout: K grams (p x p), K rhs (p), K totals, K squares.
 * The update is the exact maximiser only for the identity link; other links have no
 * one-pass statistics (size 0), and EM calls m_step instead (moe_family_has_statistics).
 */
static size_t identity_statistics_size(const struct moe_model *model)
{
    size_t K = model->n_experts, p = model->n_inputs;
    return K * (p * p + p + 2);
}

static size_t gaussian_statistics_size(const struct moe_model *model)
{
    return model->link == MOE_LINK_IDENTITY ? identity_statistics_size(model) : 0;
}

/* Of a block by columns: scaled = w r e (K x rows), and totals[k] += sum w r, squares[k] +=
   sum w r e^2, by lanes (common/columns.h). */
static inline __attribute__((always_inline)) void
residual_sums_body(size_t rows, size_t K, const double *y, const double *weights,
                   const double *means, double *scaled, double *totals, double *squares)
{
    for (size_t k = 0; k < K; ++k) {
        const double *weight = weights + k * rows, *mean = means + k * rows;
        double *out = scaled + k * rows;
        for (size_t i = 0; i < rows; ++i)
            out[i] = weight[i] * (y[i] - mean[i]);
        totals[k] += moe_columns_sum(rows, weight);
        /* sum w r e^2 as (w r e) e */
        double lanes[MOE_LANES] = {0.0};
        size_t i = 0;
        for (; i + MOE_LANES <= rows; i += MOE_LANES)
            for (size_t j = 0; j < MOE_LANES; ++j)
                lanes[j] += out[i + j] * (y[i + j] - mean[i + j]);
        for (size_t j = 0; i + j < rows; ++j)
            lanes[j] += out[i + j] * (y[i + j] - mean[i + j]);
        squares[k] += moe_lanes_total(lanes);
    }
}

MOE_SIMD_PROCEDURE(residual_sums, residual_sums_body,
                   (size_t rows, size_t K, const double *y, const double *weights,
                    const double *means, double *scaled, double *totals, double *squares),
                   (rows, K, y, weights, means, scaled, totals, squares))

static int gaussian_normal_parts(const struct moe_model *model, double *constants,
                                 double *inverses)
{
    if (model->link != MOE_LINK_IDENTITY)
        return 0;
    for (size_t k = 0; k < model->n_experts; ++k) {
        double variance = model->variances[k];
        constants[k] = -0.5 * (log_two_pi + log(variance));
        inverses[k] = 1.0 / variance;
    }
    return 1;
}

static void gaussian_accumulate_normal_statistics(const struct moe_model *model, size_t rows,
                                                  const double *columns, const double *scaled,
                                                  const double *sums, double *statistics)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *grams = statistics, *rhs = grams + K * p * p, *totals = rhs + K * p;
    double *squares = totals + K;
    for (size_t k = 0; k < K; ++k) {
        totals[k] += sums[k];
        squares[k] += sums[K + k];
    }
    moe_product_abt_add(K, p, rows, scaled, columns, rhs);
}

static void gaussian_accumulate_statistics(const struct moe_model *model, size_t rows,
                                           const double *columns, const double *y,
                                           const double *weights, const double *means,
                                           double *work, double *statistics)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *grams = statistics, *rhs = grams + K * p * p, *totals = rhs + K * p;
    double *squares = totals + K;
    double *scaled = work; /* w r e, K x rows; the grams are the caller's */
    residual_sums(rows, K, y, weights, means, scaled, totals, squares);
    moe_product_abt_add(K, p, rows, scaled, columns, rhs);
}

typedef struct gaussian_pass {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    int residuals_only; /* sum w r e^2 at the model's coefficients into the squares slots */
} gaussian_pass;

static size_t gaussian_chunk(void *opaque, size_t start, size_t rows, double *statistics,
                             double *workspace)
{
    const gaussian_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    const moe_data *data = pass->data;
    size_t K = model->n_experts, p = model->n_inputs;
    /* by columns, as the E-step's pass calls accumulate_statistics */
    size_t R = moe_block_rows_for(rows);
    double *columns = workspace, *means = columns + R * p;
    double *weights = means + R * K, *work = weights + R * K;
    double *squares = statistics + K * (p * p + p + 1);
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset;
        size_t count = rows - offset < R ? rows - offset : R;
        moe_data_load_columns(data, first, count, columns);
        moe_expert_linear_columns(model, count, columns, means);
        for (size_t k = 0; k < K; ++k)
            for (size_t i = 0; i < count; ++i)
                weights[k * count + i] =
                    moe_data_weight(data, first + i) * pass->resp[(first + i) * K + k];
        if (!pass->residuals_only) {
            moe_weighted_grams_add_columns(
                count, p, K, columns, weights,
                work + moe_family_statistics_work(model, R), statistics);
            gaussian_accumulate_statistics(model, count, columns, data->y + first, weights,
                                           means, work, statistics);
            continue;
        }
        for (size_t k = 0; k < K; ++k)
            for (size_t i = 0; i < count; ++i) {
                double residual = data->y[first + i] - means[k * count + i];
                squares[k] += weights[k * count + i] * residual * residual;
            }
    }
    return 0;
}

static moe_status gaussian_run(const struct moe_model *model, const moe_data *data,
                               const double *resp, int residuals_only, size_t threads,
                               double *statistics, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    gaussian_pass pass = {model, data, resp, residuals_only};
    size_t R = moe_block_rows_for(data->n);
    moe_chunk_job job = {data->n, identity_statistics_size(model),
                         R * (p + 2 * K) + moe_family_statistics_work(model, R) +
                             moe_weighted_grams_scratch(R, p, K),
                         gaussian_chunk, &pass};
    size_t ignored = 0;
    return moe_run_chunks(&job, threads, statistics, &ignored, message);
}

/*
 * The M-step for a non-identity link. At its current variance, expert k's coefficients
 * minimise
 *   F(beta) = sum_i v_i (y_i - g(beta'x_i))^2 + shrink ||beta without intercept||^2,
 * v_i = w_i r_ik and shrink = N ridge sigma_k^2, the identity path's convention: F is
 * -2 sigma_k^2 times the expert's part of the penalised surrogate, up to a constant.
 * There is no closed form, so each expert takes Gauss-Newton steps: with e = y - g(t) and
 * J_i = g'(t_i) x_i, (J'VJ + shrink) delta = J'Ve - shrink beta. A step is kept only when
 * F falls; otherwise it is halved, so the surrogate never decreases and EM stays monotone.
 * The variance then is the weighted mean square of the residuals at the new coefficients.
 *
 * One pass sums, per expert at given coefficients: J'VJ (upper triangle), J'Ve, sum v,
 * sum v e^2 and sum v g'^2 (zero when no weighted row has a slope: a ReLU expert with
 * every predictor at or below zero).
 */
typedef struct link_pass {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    const double *coefficients; /* K x p */
    moe_link link;              /* identity: the least-squares sums */
} link_pass;

static size_t link_sums_size(size_t K, size_t p)
{
    return K * (p * p + p + 3);
}

/* Expert k's slots in the sums. */
typedef struct link_sums {
    double *gram, *rhs, *total, *squares, *slopes;
} link_sums;

static link_sums link_sums_of(double *sums, size_t K, size_t p, size_t k)
{
    double *rhs = sums + K * p * p, *totals = rhs + K * p;
    link_sums out = {sums + k * p * p, rhs + k * p, totals + k, totals + K + k,
                     totals + 2 * K + k};
    return out;
}

static size_t link_chunk(void *opaque, size_t start, size_t rows, double *sums,
                         double *workspace)
{
    const link_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    const moe_data *data = pass->data;
    size_t K = model->n_experts, p = model->n_inputs;
    double *grams = sums, *rhs = grams + K * p * p, *totals = rhs + K * p;
    double *squares = totals + K, *slopes = squares + K;
    size_t R = moe_block_rows_for(rows);
    double *block = workspace, *linear = block + R * p;
    double *curvature = linear + R * K, *scaled = curvature + R * K;
    double *scratch = scaled + R * K;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset;
        size_t count = rows - offset < R ? rows - offset : R;
        moe_data_load_block(data, first, count, block);
        moe_product_abt(count, K, p, block, pass->coefficients, linear);
        for (size_t i = 0; i < count; ++i) {
            double weight = moe_data_weight(data, first + i);
            for (size_t k = 0; k < K; ++k) {
                double v = weight * pass->resp[(first + i) * K + k], value, slope;
                link_value(pass->link, linear[i * K + k], &value, &slope);
                double residual = data->y[first + i] - value;
                totals[k] += v;
                squares[k] += v * residual * residual;
                slopes[k] += v * slope * slope;
                curvature[i * K + k] = v * slope * slope;
                scaled[i * K + k] = v * slope * residual;
            }
        }
        moe_weighted_grams_add(count, p, K, block, curvature, scratch, grams);
        moe_product_atb_add(count, K, p, scaled, block, rhs);
    }
    return 0;
}

static moe_status link_run(const struct moe_model *model, const moe_data *data,
                           const double *resp, const double *coefficients, moe_link link,
                           size_t threads, double *sums, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    link_pass pass = {model, data, resp, coefficients, link};
    size_t R = moe_block_rows_for(data->n);
    moe_chunk_job job = {data->n, link_sums_size(K, p),
                         R * (p + 3 * K) + moe_weighted_grams_scratch(R, p, K), link_chunk,
                         &pass};
    size_t ignored = 0;
    return moe_run_chunks(&job, threads, sums, &ignored, message);
}

/* Halvings of one Gauss-Newton step before it counts as finding no decrease (a step is
   given up earlier, without counting, once its predicted gain is below the tolerance). */
#define LINK_MAX_HALVINGS 40

typedef struct link_expert {
    int active;         /* still taking steps */
    int pending;        /* direction is being tried at `fraction` */
    int least_squares;  /* a least-squares restart has been tried */
    int wants_restart;  /* asks for one in this round */
    size_t steps;       /* accepted steps */
    size_t halvings;
    double objective;   /* F at the accepted coefficients */
    double fraction;
    double decrease;    /* the step's predicted decrease of F (infinite: none) */
    double shrink;
    double unit;        /* 1 / (2 sigma^2 N): F to the mean surrogate's scale */
} link_expert;

static double link_penalty_norm(const struct moe_model *model, const double *beta)
{
    double sum = 0.0;
    for (size_t j = (size_t)model->intercept; j < model->n_inputs; ++j)
        sum += beta[j] * beta[j];
    return sum;
}

/* The system (J'VJ + shrink) delta = J'Ve - shrink beta of expert k from its sums;
   0, with delta and the ridge flag set, or -1 when it cannot be solved. */
static int link_direction(const struct moe_model *model, link_sums sums, double shrink,
                          const double *beta, double *matrix, double *delta, double *work,
                          int *ridge_used)
{
    size_t p = model->n_inputs;
    memcpy(matrix, sums.gram, p * p * sizeof(double));
    moe_symmetrize_upper(p, matrix);
    for (size_t j = 0; j < p; ++j) {
        int penalised = j >= (size_t)model->intercept;
        delta[j] = sums.rhs[j] - (penalised ? shrink * beta[j] : 0.0);
        if (penalised)
            matrix[j * p + j] += shrink;
    }
    moe_inputs_restrict_step(1, p, model->expert_inputs, matrix, delta);
    return moe_solve_spd(p, matrix, delta, work, ridge_used);
}

/* One M-step of the link experts: the call's inputs, its buffers and each expert's state. */
typedef struct link_mstep {
    struct moe_model *model;
    const moe_data *data;
    const double *resp;
    const moe_expert_mstep_options *options;
    moe_expert_mstep_report *report;
    char *message;
    double *current;    /* the sums at the accepted coefficients */
    double *trial_sums; /* the sums at the trial coefficients */
    double *trial;      /* K x p trial coefficients */
    double *directions; /* K x p */
    double *work;       /* the solver's work, then the matrix */
    double *matrix;
    double *zero;       /* K x p zeros: the least-squares sums' coefficients */
    link_expert *state;
} link_mstep;

static void link_mstep_free(link_mstep *m)
{
    free(m->current);
    free(m->trial_sums);
    free(m->trial);
    free(m->directions);
    free(m->work);
    free(m->zero);
    free(m->state);
}

static moe_status link_mstep_allocate(link_mstep *m)
{
    size_t K = m->model->n_experts, p = m->model->n_inputs, size = link_sums_size(K, p);
    m->current = moe_alloc_array(size, 1, sizeof(double));
    m->trial_sums = moe_alloc_array(size, 1, sizeof(double));
    m->trial = moe_alloc_array(K, p, sizeof(double));
    m->directions = moe_alloc_array(K, p, sizeof(double));
    m->work = moe_alloc_array(2 * p + 1, p, sizeof(double));
    m->zero = moe_calloc_array(K, p, sizeof(double));
    m->state = calloc(K, sizeof *m->state);
    if (m->current == NULL || m->trial_sums == NULL || m->trial == NULL ||
        m->directions == NULL || m->work == NULL || m->zero == NULL || m->state == NULL)
        return moe_fail(m->message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    m->matrix = m->work + p * (p + 1);
    return MOE_OK;
}

/* The sums at the model's coefficients, and which experts have the weight to move. */
static moe_status link_mstep_start(link_mstep *m)
{
    struct moe_model *model = m->model;
    size_t K = model->n_experts, p = model->n_inputs;
    moe_status status = link_run(model, m->data, m->resp, model->experts, model->link,
                                 m->options->threads, m->current, m->message);
    for (size_t k = 0; status == MOE_OK && k < K; ++k) {
        link_expert *e = &m->state[k];
        link_sums sums = link_sums_of(m->current, K, p, k);
        if (!(*sums.total > m->options->min_weight)) {
            m->report->degenerate_experts++;
            continue;
        }
        e->active = 1;
        e->shrink = m->options->ridge * m->options->total_weight * model->variances[k];
        e->unit = 1.0 / (2.0 * model->variances[k] * m->options->total_weight);
        e->objective = *sums.squares + e->shrink * link_penalty_norm(model, model->experts + k * p);
    }
    return status;
}

static void link_begin_step(link_expert *e, double decrease)
{
    e->pending = 1;
    e->fraction = 1.0;
    e->halvings = 0;
    e->decrease = decrease;
}

/* A Gauss-Newton direction for every active expert without a pending one; returns nonzero
   when some expert asks for a least-squares restart. */
static int link_plan_directions(link_mstep *m)
{
    const struct moe_model *model = m->model;
    size_t K = model->n_experts, p = model->n_inputs;
    int restarts = 0;
    for (size_t k = 0; k < K; ++k) {
        link_expert *e = &m->state[k];
        if (!e->active || e->pending)
            continue;
        if (e->steps >= m->options->max_newton) {
            e->active = 0;
            continue;
        }
        link_sums sums = link_sums_of(m->current, K, p, k);
        const double *beta = model->experts + k * p;
        /* No slope anywhere (a ReLU expert below its kink on all its rows): Gauss-Newton
           cannot move. Its one way out is a restart from the least-squares fit, tried
           like any step (kept only if F falls). */
        if (!(*sums.slopes > 0.0)) {
            if (e->least_squares)
                e->active = 0;
            else
                e->wants_restart = restarts = 1;
            continue;
        }
        int ridge_used = 0;
        double *delta = m->directions + k * p;
        if (link_direction(model, sums, e->shrink, beta, m->matrix, delta, m->work,
                           &ridge_used) != 0) {
            m->report->line_search_failures++;
            e->active = 0;
            continue;
        }
        if (ridge_used)
            m->report->ridge_fallbacks++;
        double decrease = moe_dot(p, delta, sums.rhs) -
                          e->shrink * (moe_dot(p, delta, beta) -
                                       (model->intercept ? delta[0] * beta[0] : 0.0));
        /* The first step is always tried, as in the classification experts' Newton
           solver: a warm start within the tolerance would otherwise never move. */
        if (!(decrease > 0.0) ||
            (e->steps > 0 && decrease * e->unit <=
                                 m->options->tolerance * (1.0 + e->objective * e->unit))) {
            e->active = 0;
            continue;
        }
        link_begin_step(e, decrease);
    }
    return restarts;
}

/* The restarts asked for: a step from the current coefficients to the least-squares fit. */
static moe_status link_plan_restarts(link_mstep *m)
{
    const struct moe_model *model = m->model;
    size_t K = model->n_experts, p = model->n_inputs;
    /* The least-squares sums are the identity link's at zero coefficients. */
    moe_status status = link_run(model, m->data, m->resp, m->zero, MOE_LINK_IDENTITY,
                                 m->options->threads, m->trial_sums, m->message);
    for (size_t k = 0; status == MOE_OK && k < K; ++k) {
        link_expert *e = &m->state[k];
        if (!e->wants_restart)
            continue;
        e->wants_restart = 0;
        e->least_squares = 1;
        int ridge_used = 0;
        double *delta = m->directions + k * p;
        if (link_direction(model, link_sums_of(m->trial_sums, K, p, k), e->shrink,
                           m->zero + k * p, m->matrix, delta, m->work, &ridge_used) != 0) {
            e->active = 0;
            continue;
        }
        if (ridge_used)
            m->report->ridge_fallbacks++;
        for (size_t j = 0; j < p; ++j)
            delta[j] -= model->experts[k * p + j];
        link_begin_step(e, INFINITY); /* no prediction: halve to the limit */
    }
    return status;
}

/* Expert k's trial was judged: keep it (its sums become the current ones) or halve it. */
static void link_judge(link_mstep *m, size_t k)
{
    struct moe_model *model = m->model;
    size_t K = model->n_experts, p = model->n_inputs;
    link_expert *e = &m->state[k];
    link_sums tried = link_sums_of(m->trial_sums, K, p, k);
    double objective = *tried.squares + e->shrink * link_penalty_norm(model, m->trial + k * p);
    double tolerance = m->options->tolerance;
    if (objective < e->objective) {
        /* A step that gained next to nothing ends the iteration: where ReLU's kinks
           move, the Gauss-Newton decrement need not shrink near the optimum. */
        double gained = (e->objective - objective) * e->unit;
        if (gained <= tolerance * (1.0 + objective * e->unit))
            e->active = 0;
        link_sums kept = link_sums_of(m->current, K, p, k);
        memcpy(kept.gram, tried.gram, p * p * sizeof(double));
        memcpy(kept.rhs, tried.rhs, p * sizeof(double));
        *kept.total = *tried.total;
        *kept.squares = *tried.squares;
        *kept.slopes = *tried.slopes;
        memcpy(model->experts + k * p, m->trial + k * p, p * sizeof(double));
        e->objective = objective;
        e->pending = 0;
        e->steps++;
        m->report->newton_steps++;
        return;
    }
    /* Halve while the shorter step could still gain more than the tolerance. */
    e->fraction *= 0.5;
    e->halvings++;
    double scale = 1.0 + e->objective * e->unit;
    int negligible = e->fraction * e->decrease * e->unit <= tolerance * scale;
    if (negligible || e->halvings > LINK_MAX_HALVINGS) {
        e->pending = 0;
        e->active = 0;
        if (!negligible && isfinite(e->decrease))
            m->report->line_search_failures++;
    }
}

/* Every pending step tried in one pass over the rows. */
static moe_status link_try_steps(link_mstep *m)
{
    const struct moe_model *model = m->model;
    size_t K = model->n_experts, p = model->n_inputs;
    for (size_t k = 0; k < K; ++k)
        for (size_t j = 0; j < p; ++j)
            m->trial[k * p + j] =
                model->experts[k * p + j] +
                (m->state[k].pending ? m->state[k].fraction * m->directions[k * p + j] : 0.0);
    moe_status status = link_run(model, m->data, m->resp, m->trial, model->link,
                                 m->options->threads, m->trial_sums, m->message);
    for (size_t k = 0; status == MOE_OK && k < K; ++k)
        if (m->state[k].pending)
            link_judge(m, k);
    return status;
}

static void link_update_variances(link_mstep *m)
{
    size_t K = m->model->n_experts, p = m->model->n_inputs;
    for (size_t k = 0; k < K; ++k) {
        link_sums sums = link_sums_of(m->current, K, p, k);
        if (!(*sums.total > m->options->min_weight))
            continue;
        double variance = *sums.squares / *sums.total;
        if (!(variance >= m->options->variance_floor)) {
            variance = m->options->variance_floor;
            m->report->floored_variances++;
        }
        m->model->variances[k] = variance;
    }
}

static moe_status link_m_step(struct moe_model *model, const moe_data *data,
                              const double *resp, const moe_expert_mstep_options *options,
                              moe_expert_mstep_report *report, char *message)
{
    link_mstep m = {model, data, resp, options, report, message, NULL, NULL, NULL, NULL,
                    NULL, NULL, NULL, NULL};
    moe_status status = link_mstep_allocate(&m);
    if (status == MOE_OK)
        status = link_mstep_start(&m);
    /* Every round sets a direction for each active expert without one, then tries every
       pending step in one pass. Each expert has at most max_newton accepted steps of at
       most LINK_MAX_HALVINGS + 1 trials, so the rounds end. */
    while (status == MOE_OK) {
        if (link_plan_directions(&m))
            status = link_plan_restarts(&m);
        int pending = 0;
        for (size_t k = 0; k < model->n_experts; ++k)
            pending |= m.state[k].pending;
        if (status != MOE_OK || !pending)
            break;
        status = link_try_steps(&m);
    }
    if (status == MOE_OK && options->update_variance)
        link_update_variances(&m);
    link_mstep_free(&m);
    return status;
}

/* Below this share of the old residual sum of squares, the one-pass value of the new one is
   mostly rounding error of the subtraction, and the residuals are summed again. */
#define CANCELLATION_SHARE 1e-6

static moe_status gaussian_solve_statistics(struct moe_model *model, const moe_data *data,
                                            const double *resp, double *statistics,
                                            const moe_expert_mstep_options *options,
                                            moe_expert_mstep_report *report, char *message)
{
    /* Not reached for other links (their statistics size is 0), but if it were, data and
       resp are all the exact M-step needs. */
    if (model->link != MOE_LINK_IDENTITY)
        return link_m_step(model, data, resp, options, report, message);
    size_t K = model->n_experts, p = model->n_inputs;
    double *grams = statistics, *rhs = grams + K * p * p, *totals = rhs + K * p;
    double *squares = totals + K;
    double *work = moe_alloc_array(p + 2, p + 1, sizeof(double));
    double *rss = moe_alloc_array(K, 1, sizeof(double));
    unsigned char *active = calloc(K, 1);
    if (work == NULL || rss == NULL || active == NULL) {
        free(work);
        free(rss);
        free(active);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    }
    double *delta = work + p * (p + 1);
    int second_pass = 0;
    for (size_t k = 0; k < K; ++k) {
        if (!(totals[k] > options->min_weight)) {
            report->degenerate_experts++;
            continue;
        }
        double *gram = grams + k * p * p, *beta = model->experts + k * p;
        moe_symmetrize_upper(p, gram);
        /* Penalty N*ridge/2 ||beta||^2 against RSS / (2 sigma^2): in the normal equations
           it is N * ridge * sigma^2 on the diagonal. */
        double shrink = options->ridge * options->total_weight * model->variances[k];
        for (size_t j = 0; j < p; ++j)
            delta[j] = rhs[k * p + j] - (j >= (size_t)model->intercept ? shrink * beta[j] : 0.0);
        for (size_t j = (size_t)model->intercept; j < p; ++j)
            gram[j * p + j] += shrink;
        /* Held inputs: a zero step (their rows of gram become the identity's, which the
           residual sum below multiplies by that zero step). */
        moe_inputs_restrict_step(1, p, model->expert_inputs, gram, delta);
        int ridge_used = 0;
        if (moe_solve_spd(p, gram, delta, work, &ridge_used) != 0) {
            report->degenerate_experts++;
            continue;
        }
        if (ridge_used)
            report->ridge_fallbacks++;
        for (size_t j = (size_t)model->intercept; j < p; ++j)
            gram[j * p + j] -= shrink;
        /* sum w r (e - x'delta)^2 = sum w r e^2 - 2 delta'rhs + delta'G delta */
        double quadratic = 0.0;
        for (size_t a = 0; a < p; ++a)
            quadratic += delta[a] * moe_dot(p, gram + a * p, delta);
        rss[k] = squares[k] - 2.0 * moe_dot(p, delta, rhs + k * p) + quadratic;
        if (!(rss[k] > CANCELLATION_SHARE * squares[k]))
            second_pass = 1;
        for (size_t j = 0; j < p; ++j)
            beta[j] += delta[j];
        active[k] = 1;
    }
    moe_status status = MOE_OK;
    if (options->update_variance && second_pass) {
        size_t size = identity_statistics_size(model);
        double *again = moe_alloc_array(size, 1, sizeof(double));
        status = again == NULL
                     ? moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step")
                     : gaussian_run(model, data, resp, 1, options->threads, again, message);
        for (size_t k = 0; status == MOE_OK && k < K; ++k)
            rss[k] = again[size - K + k];
        free(again);
    }
    for (size_t k = 0; status == MOE_OK && options->update_variance && k < K; ++k) {
        if (!active[k])
            continue;
        double variance = rss[k] / totals[k];
        if (!(variance >= options->variance_floor)) {
            variance = options->variance_floor;
            report->floored_variances++;
        }
        model->variances[k] = variance;
    }
    free(work);
    free(rss);
    free(active);
    return status;
}

static moe_status gaussian_m_step(struct moe_model *model, const moe_data *data,
                                  const double *resp, const moe_expert_mstep_options *options,
                                  moe_expert_mstep_report *report, char *message)
{
    if (model->link != MOE_LINK_IDENTITY)
        return link_m_step(model, data, resp, options, report, message);
    double *statistics = moe_alloc_array(identity_statistics_size(model), 1, sizeof(double));
    if (statistics == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert M-step");
    moe_status status =
        gaussian_run(model, data, resp, 0, options->threads, statistics, message);
    if (status == MOE_OK)
        status = gaussian_solve_statistics(model, data, resp, statistics, options, report,
                                           message);
    free(statistics);
    return status;
}

/*
 * d/dbeta_k  = (1/N) sum_i w_i r_ik (mu_ik - y_i) g'(t_ik) x_i / sigma_k^2 + ridge beta_k
 * d/dlog s_k = (1/N) sum_i w_i r_ik (1 - (y_i - mu_ik)^2 / sigma_k^2) / 2
 * with t_ik = beta_k'x_i and mu_ik = g(t_ik) (g' = 1 for the identity link, ReLU's
 * subgradient convention as in link_value).
 * The sums run over row chunks (common/parallel.h): K x p coefficient sums, then K
 * log-variance sums.
 */
typedef struct gradient_pass {
    const struct moe_model *model;
    const moe_data *data;
    const double *resp;
    const double *precision; /* K */
} gradient_pass;

static size_t gradient_chunk(void *opaque, size_t start, size_t rows, double *sums,
                             double *workspace)
{
    const gradient_pass *pass = opaque;
    const struct moe_model *model = pass->model;
    const moe_data *data = pass->data;
    size_t K = model->n_experts, p = model->n_inputs;
    size_t R = moe_block_rows_for(rows);
    double *block = workspace, *scaled = block + R * p;
    double *coefficients = sums, *log_variances = sums + K * p;
    for (size_t offset = 0; offset < rows; offset += R) {
        size_t first = start + offset;
        size_t count = rows - offset < R ? rows - offset : R;
        moe_data_load_block(data, first, count, block);
        moe_expert_linear(model, count, block, scaled);
        for (size_t i = 0; i < count; ++i) {
            double weight = moe_data_weight(data, first + i);
            const double *r = pass->resp + (first + i) * K;
            for (size_t k = 0; k < K; ++k) {
                double mean, slope;
                link_value(model->link, scaled[i * K + k], &mean, &slope);
                double residual = data->y[first + i] - mean;
                double share = weight * r[k];
                log_variances[k] += 0.5 * share * (1.0 - residual * residual * pass->precision[k]);
                scaled[i * K + k] = -share * residual * slope * pass->precision[k];
            }
        }
        moe_product_atb_add(count, K, p, scaled, block, coefficients);
    }
    return 0;
}

static moe_status gaussian_gradient(const struct moe_model *model, const moe_data *data,
                                    const double *resp, double ridge, double total_weight,
                                    size_t threads, double *coefficients, double *log_variances,
                                    char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    double *sums = moe_alloc_array(K * p + K, 1, sizeof(double));
    double *precision = moe_alloc_array(K, 1, sizeof(double));
    if (sums == NULL || precision == NULL) {
        free(sums);
        free(precision);
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the expert gradient");
    }
    for (size_t k = 0; k < K; ++k)
        precision[k] = 1.0 / model->variances[k];
    gradient_pass pass = {model, data, resp, precision};
    moe_chunk_job job = {data->n, K * p + K, moe_block_rows_for(data->n) * (p + K),
                         gradient_chunk, &pass};
    size_t ignored = 0;
    moe_status status = moe_run_chunks(&job, threads, sums, &ignored, message);
    if (status == MOE_OK) {
        double inverse = 1.0 / total_weight;
        for (size_t k = 0; k < K; ++k) {
            for (size_t j = 0; j < p; ++j) {
                double value = sums[k * p + j] * inverse;
                if (j >= (size_t)model->intercept)
                    value += ridge * model->experts[k * p + j];
                coefficients[k * p + j] = value;
            }
            if (log_variances != NULL)
                log_variances[k] = sums[K * p + k] * inverse;
        }
    }
    free(sums);
    free(precision);
    return status;
}

/*
 * For the identity link the coefficient Hessian is E_w[r x x'] / sigma^2, so 1/sigma^2_min
 * bounds it. For other links this bounds the Gauss-Newton part g'^2 x x' / sigma^2 only:
 * g'^2 <= 1/16 for the sigmoid and <= 1 for ReLU. The remaining term, -e g''(t) x x' /
 * sigma^2, depends on the residuals and has no bound of this kind (ReLU's kinks none at
 * all), so the safe step is safe only near a fit whose residuals are small or average out;
 * gd's Armijo search covers the rest.
 */
static double gaussian_curvature(const struct moe_model *model)
{
    double smallest = model->variances[0];
    for (size_t k = 1; k < model->n_experts; ++k)
        if (model->variances[k] < smallest)
            smallest = model->variances[k];
    double slope_squared = model->link == MOE_LINK_SIGMOID ? 1.0 / 16.0 : 1.0;
    return slope_squared / smallest;
}

/* Identity link only (moe_model_information refuses the others): log f, the score in
   beta (e x~ / v) and in v, and -H. */
/* In v = sigma^2: the score e x~ / v and (e^2 / v - 1) / (2 v); minus the Hessian
   x~ x~' / v, e x~ / v^2 and (e^2 / v - 1 / 2) / v^2 (the identity link only). */
static void gaussian_information_terms(const struct moe_model *model, size_t k, size_t rows,
                                       const double *columns, const double *linear,
                                       const double *y, double *terms)
{
    (void)columns;
    moe_information_shape shape = moe_information_shape_of(model);
    const double *mean = linear + k * rows;
    double inverse = 1.0 / model->variances[k];
    double *a = terms + shape.a * rows, *b = terms + shape.b * rows;
    double *h = terms + shape.h * rows, *c = terms + shape.c * rows, *d = terms + shape.d * rows;
    for (size_t i = 0; i < rows; ++i) {
        double e = y[i] - mean[i], scaled = e * inverse;
        a[i] = scaled;
        b[i] = 0.5 * inverse * (scaled * e - 1.0);
        h[i] = inverse;
        c[i] = scaled * inverse;
        d[i] = inverse * inverse * (scaled * e - 0.5);
    }
}

static double gaussian_inverse_link(const struct moe_model *model, double eta)
{
    if (model->link == MOE_LINK_SIGMOID)
        return 1.0 / (1.0 + exp(-eta));
    if (model->link == MOE_LINK_RELU)
        return eta > 0.0 ? eta : 0.0;
    return eta;
}

const struct moe_family_ops moe_family_gaussian = {
    .id = MOE_FAMILY_GAUSSIAN,
    .name = "gaussian",
    .description = "y real: normal regression, identity, sigmoid or relu link",
    .uses_classes = 0,
    .has_variance = 1,
    .numeric_response = 1,
    .scale_kind = MOE_SCALE_VARIANCE,
    .supports_link = gaussian_supports_link,
    .information_terms = gaussian_information_terms,
    .inverse_link = gaussian_inverse_link,
    .expert_free_params = gaussian_expert_free_params,
    .normalize_experts = NULL,
    .check_response = gaussian_check_response,
    .log_density = gaussian_log_density,
    .prediction_width = gaussian_prediction_width,
    .predict = gaussian_predict,
    .m_step = gaussian_m_step,
    .statistics_size = gaussian_statistics_size,
    .accumulate_statistics = gaussian_accumulate_statistics,
    .normal_parts = gaussian_normal_parts,
    .accumulate_normal_statistics = gaussian_accumulate_normal_statistics,
    .solve_statistics = gaussian_solve_statistics,
    .gradient = gaussian_gradient,
    .curvature = gaussian_curvature,
};
