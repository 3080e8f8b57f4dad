/*
 * The observed information summed over the rows in one pass (information_pass.h).
 *
 * Louis' identity row by row: with responsibilities r_k, component k's complete-data score
 * s_k = grad log(pi_k f_k) and Hessian H_k, a row of weight v adds
 *   v [ -sum_k r_k H_k - sum_k r_k s_k s_k' + sbar sbar' ],  sbar = sum_k r_k s_k.
 * Every score and Hessian entry of these models is a scalar of the row times x~ (a
 * coefficient), times x~ x~' (two coefficients) or 1 (the experts' own parameters): the
 * gate's scores are (delta_ka - pi_a) x~, an expert's are its family's terms
 * (moe_information_shape). So the row adds, for every pair of coefficient blocks (the gate's
 * K - 1 rows, then each expert's R rows) one scalar times x~ x~', for every block and own
 * parameter one scalar times x~, and for every pair of own parameters one scalar. Writing
 * the covariance of the scores under r out block by block (the gate's shift by pi cancels
 * in it) gives those scalars:
 *   gate a, gate b:          (a = b)(pi_a - r_a) - pi_a pi_b + r_a r_b
 *   gate a, expert l's term: (r_a - (l = a)) r_l t_l
 *   expert k's t, u:         (k = l) r_k (minus-Hessian_k(t, u) - t_k u_k) + r_k t_k r_l u_l
 * with t, u an expert's score terms (a_q or b_e). A block of rows then costs one product of
 * the scalars with the rows' distinct x~ x~' products for all pairs of blocks at once (the
 * weighted Grams' kernel), where the row-by-row outer products of P-vectors cost K + 1
 * rank updates of P x P: at d = 5, K = 3 a 36th of the old per-row work.
 */
#include "information/information_pass.h"

#include "common/alloc.h"
#include "common/columns.h"
#include "common/error.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "model/family.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

moe_information_layout moe_information_layout_of(const struct moe_model *model)
{
    const struct moe_family_ops *ops = model->family_ops;
    moe_information_layout l;
    l.K = model->n_experts;
    l.p = model->n_inputs;
    l.R = ops->uses_classes ? model->n_classes - 1 : 1;
    l.experts = (l.K - 1) * l.p;
    l.variances = l.experts + l.K * l.R * l.p;
    l.degrees = l.variances + (ops->has_variance ? l.K : 0);
    l.P = l.degrees + (ops->has_degrees ? l.K : 0);
    return l;
}

/* What a chunk sums: the Grams of every pair of coefficient blocks (p x p each, upper
   triangle), the products with x~ of every block and own parameter (p each), the sums of
   every pair of own parameters. */
typedef struct sums_layout {
    size_t blocks;     /* K - 1 + K R */
    size_t parameters; /* K E */
    size_t pairs, crosses, scalars;
    size_t grams_at, crosses_at, scalars_at, extras_at, size;
} sums_layout;

typedef struct pass_context {
    const struct moe_model *model;
    const moe_data *data;
    moe_information_layout layout;
    moe_information_shape shape;
    sums_layout sums;
    const double *stacked; /* the gate's K rows, then every expert row: one product */
    size_t workspace_rows;
    int information, extras; /* what the pass sums */
} pass_context;

static sums_layout sums_layout_of(const moe_information_layout *l,
                                  const moe_information_shape *shape, int information,
                                  int extras)
{
    sums_layout s;
    s.blocks = l->K - 1 + l->K * l->R;
    s.parameters = l->K * shape->E;
    s.pairs = s.blocks * (s.blocks + 1) / 2;
    s.crosses = s.blocks * s.parameters;
    s.scalars = s.parameters * (s.parameters + 1) / 2;
    s.grams_at = 0;
    s.crosses_at = s.pairs * l->p * l->p;
    s.scalars_at = s.crosses_at + s.crosses * l->p;
    s.extras_at = information ? s.scalars_at + s.scalars : 0;
    s.size = s.extras_at + (extras ? MOE_INFORMATION_EXTRAS(l->K) : 0);
    return s;
}

typedef struct workspace {
    double *columns, *weights, *combined, *gate_proba, *joint, *resp, *lse, *density_scratch;
    double *softmax_scratch, *terms, *scaled_a, *scaled_b, *weighted_r;
    double *pair_weights, *cross_weights, *scalar_weights, *gram_scratch;
} workspace;

static size_t carve(const pass_context *c, size_t rows, double *base, workspace *w)
{
    const moe_information_layout *l = &c->layout;
    const struct moe_model *model = c->model;
    size_t K = l->K, width = K + K * model->expert_rows, E = c->shape.E;
    size_t sizes[] = {rows * l->p,
                      rows,
                      rows * width,
                      rows * K,
                      rows * K,
                      rows * K,
                      rows,
                      rows * K * model->expert_rows,
                      3 * rows,
                      rows * K * c->shape.count,
                      rows * K * l->R,
                      rows * K * E,
                      rows * K,
                      rows * c->sums.pairs,
                      rows * c->sums.crosses,
                      rows * c->sums.scalars,
                      moe_weighted_grams_scratch(rows, l->p, c->sums.pairs)};
    double **slots[] = {&w->columns,     &w->weights,        &w->combined,      &w->gate_proba,
                        &w->joint, &w->resp,        &w->lse,            &w->density_scratch,
                        &w->softmax_scratch, &w->terms,      &w->scaled_a,      &w->scaled_b,
                        &w->weighted_r,  &w->pair_weights,   &w->cross_weights,
                        &w->scalar_weights, &w->gram_scratch};
    size_t total = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        if (base != NULL)
            *slots[s] = base + total;
        total += sizes[s];
    }
    return total;
}

/*
 * The block's gate probabilities and responsibilities (K x rows each, by columns) from the
 * gate's logits and the experts' log-densities; lse receives each row's log-likelihood.
 * Returns 1 + the first row whose likelihood is zero or undefined under every expert, or 0.
 */
static size_t posterior(const pass_context *c, size_t rows, const double *y, workspace *w)
{
    const struct moe_model *model = c->model;
    size_t K = c->layout.K;
    double *logits = w->combined, *linear = w->combined + K * rows;
    model->family_ops->log_density(model, rows, w->columns, linear, y, w->joint,
                                   w->density_scratch);
    /* log pi into the logits' place, then the joint log pi_k + log f_k */
    moe_softmax_columns(rows, K, logits, logits, w->gate_proba, NULL, w->softmax_scratch);
    for (size_t i = 0; i < K * rows; ++i)
        w->joint[i] += logits[i];
    moe_softmax_columns(rows, K, w->joint, w->joint, w->resp, w->lse, w->softmax_scratch);
    for (size_t i = 0; i < rows; ++i)
        if (!isfinite(w->lse[i]))
            return i + 1;
    return 0;
}

/* Row-major position of (row, column), row <= column, in an upper triangle of order n. */
static size_t upper_index(size_t row, size_t column, size_t n)
{
    return row * n - row * (row - 1) / 2 + (column - row);
}

/* A term of expert k for the block (rows values). */
static const double *term(const pass_context *c, const workspace *w, size_t rows, size_t k,
                          size_t index)
{
    return w->terms + (k * c->shape.count + index) * rows;
}

/* v r_k, and r_k times each score term (a_kq, b_ke), which the pairs of experts read. */
static void scale_terms(const pass_context *c, size_t rows, workspace *w)
{
    size_t K = c->layout.K, R = c->layout.R, E = c->shape.E;
    for (size_t k = 0; k < K; ++k) {
        const double *r = w->resp + k * rows;
        double *vr = w->weighted_r + k * rows;
        for (size_t i = 0; i < rows; ++i)
            vr[i] = w->weights[i] * r[i];
        for (size_t q = 0; q < R; ++q) {
            const double *a = term(c, w, rows, k, c->shape.a + q);
            double *out = w->scaled_a + (k * R + q) * rows;
            for (size_t i = 0; i < rows; ++i)
                out[i] = r[i] * a[i];
        }
        for (size_t e = 0; e < E; ++e) {
            const double *b = term(c, w, rows, k, c->shape.b + e);
            double *out = w->scaled_b + (k * E + e) * rows;
            for (size_t i = 0; i < rows; ++i)
                out[i] = r[i] * b[i];
        }
    }
}

/*
 * out = the weight of one pair of an expert's score terms t and u (k's, scaled r_k t; l's,
 * scaled r_l u): (k = l) v r_k (minus-Hessian(t, u) - t u) + v r_k t r_l u. hessian is
 * that entry's term when k = l.
 */
static void expert_pair(size_t rows, const double *v, const double *vr, const double *t,
                        const double *u, const double *hessian, const double *scaled_t,
                        const double *scaled_u, double *out)
{
    if (hessian == NULL) {
        for (size_t i = 0; i < rows; ++i)
            out[i] = v[i] * scaled_t[i] * scaled_u[i];
        return;
    }
    for (size_t i = 0; i < rows; ++i)
        out[i] = vr[i] * (hessian[i] - t[i] * u[i]) + v[i] * scaled_t[i] * scaled_u[i];
}

/* out = the weight of gate row a with expert l's scaled term r_l t: v (r_a - (l = a)) r_l t. */
static void gate_expert_pair(size_t rows, const double *v, const double *r_a, double delta,
                             const double *scaled, double *out)
{
    for (size_t i = 0; i < rows; ++i)
        out[i] = v[i] * (r_a[i] - delta) * scaled[i];
}

/* The Grams' weights: rows values for each pair of coefficient blocks u <= t. */
static void pair_weights(const pass_context *c, size_t rows, workspace *w)
{
    size_t K = c->layout.K, J = K - 1, R = c->layout.R, m = c->sums.blocks;
    const double *v = w->weights, *pi = w->gate_proba, *r = w->resp;
    double *out = w->pair_weights;
    for (size_t u = 0; u < m; ++u)
        for (size_t t = u; t < m; ++t, out += rows) {
            if (t < J) { /* gate rows u and t */
                const double *pu = pi + u * rows, *pt = pi + t * rows;
                const double *ru = r + u * rows, *rt = r + t * rows;
                double diagonal = u == t ? 1.0 : 0.0;
                for (size_t i = 0; i < rows; ++i)
                    out[i] = v[i] * (diagonal * (pu[i] - ru[i]) - pu[i] * pt[i] + ru[i] * rt[i]);
            } else if (u < J) { /* gate row u, a row of expert l */
                size_t l = (t - J) / R;
                gate_expert_pair(rows, v, r + u * rows, l == u ? 1.0 : 0.0,
                                 w->scaled_a + (t - J) * rows, out);
            } else { /* rows q of expert k and q2 of expert l */
                size_t k = (u - J) / R, q = (u - J) % R, l = (t - J) / R, q2 = (t - J) % R;
                const double *hessian =
                    k == l ? term(c, w, rows, k, c->shape.h + upper_index(q, q2, R)) : NULL;
                expert_pair(rows, v, w->weighted_r + k * rows,
                            term(c, w, rows, k, c->shape.a + q),
                            term(c, w, rows, l, c->shape.a + q2), hessian,
                            w->scaled_a + (u - J) * rows, w->scaled_a + (t - J) * rows, out);
            }
        }
}

/* The weights of the products with x~: rows values for each coefficient block u and own
   parameter s (block-major). */
static void cross_weights(const pass_context *c, size_t rows, workspace *w)
{
    size_t K = c->layout.K, J = K - 1, R = c->layout.R, E = c->shape.E;
    size_t m = c->sums.blocks, parameters = c->sums.parameters;
    const double *v = w->weights, *r = w->resp;
    double *out = w->cross_weights;
    for (size_t u = 0; u < m; ++u)
        for (size_t s = 0; s < parameters; ++s, out += rows) {
            size_t l = s / E, e = s % E;
            const double *scaled_b = w->scaled_b + s * rows;
            if (u < J) {
                gate_expert_pair(rows, v, r + u * rows, l == u ? 1.0 : 0.0, scaled_b, out);
                continue;
            }
            size_t k = (u - J) / R, q = (u - J) % R;
            const double *hessian = k == l ? term(c, w, rows, k, c->shape.c + q * E + e) : NULL;
            expert_pair(rows, v, w->weighted_r + k * rows, term(c, w, rows, k, c->shape.a + q),
                        term(c, w, rows, l, c->shape.b + e), hessian,
                        w->scaled_a + (u - J) * rows, scaled_b, out);
        }
}

/* The weights of the pairs of own parameters s <= s2: rows values each. */
static void scalar_weights(const pass_context *c, size_t rows, workspace *w)
{
    size_t E = c->shape.E, parameters = c->sums.parameters;
    double *out = w->scalar_weights;
    for (size_t s = 0; s < parameters; ++s)
        for (size_t s2 = s; s2 < parameters; ++s2, out += rows) {
            size_t k = s / E, e = s % E, l = s2 / E, f = s2 % E;
            const double *hessian =
                k == l ? term(c, w, rows, k, c->shape.d + upper_index(e, f, E)) : NULL;
            expert_pair(rows, w->weights, w->weighted_r + k * rows,
                        term(c, w, rows, k, c->shape.b + e), term(c, w, rows, l, c->shape.b + f),
                        hessian, w->scaled_b + s * rows, w->scaled_b + s2 * rows, out);
        }
}

/* The summary's sums of the block (MOE_INFORMATION_EXTRAS): sum_i w_i pi_k(x_i) for each k,
   the log-likelihood, the entropy (0 log 0 = 0) and the weight. */
static void add_extras(const pass_context *c, size_t rows, const workspace *w, double *extras)
{
    size_t K = c->layout.K;
    double *entropy = w->softmax_scratch; /* free once the posterior is in place */
    for (size_t i = 0; i < rows; ++i)
        entropy[i] = 0.0;
    for (size_t k = 0; k < K; ++k) {
        const double *r = w->resp + k * rows, *log_r = w->joint + k * rows;
        for (size_t i = 0; i < rows; ++i)
            entropy[i] -= r[i] > 0.0 ? r[i] * log_r[i] : 0.0;
        extras[k] += moe_columns_dot(rows, w->weights, w->gate_proba + k * rows);
    }
    extras[K] += moe_columns_dot(rows, w->weights, w->lse);
    extras[K + 1] += moe_columns_dot(rows, w->weights, entropy);
    extras[K + 2] += moe_columns_sum(rows, w->weights);
}

static size_t information_chunk(void *opaque, size_t start, size_t rows, double *sums,
                                double *memory)
{
    const pass_context *c = opaque;
    const struct moe_model *model = c->model;
    const moe_data *data = c->data;
    size_t K = c->layout.K, p = c->layout.p, width = K + K * model->expert_rows;
    workspace w;
    carve(c, c->workspace_rows, memory, &w);
    for (size_t offset = 0; offset < rows; offset += c->workspace_rows) {
        size_t first = start + offset;
        size_t count = rows - offset < c->workspace_rows ? rows - offset : c->workspace_rows;
        const double *y = data->y + first;
        moe_data_load_columns(data, first, count, w.columns);
        for (size_t i = 0; i < count; ++i)
            w.weights[i] = data->weights != NULL ? data->weights[first + i] : 1.0;
        moe_product_ab(width, count, p, c->stacked, w.columns, w.combined);
        size_t failed = posterior(c, count, y, &w);
        if (failed != 0)
            return first + failed;
        if (c->extras)
            add_extras(c, count, &w, sums + c->sums.extras_at);
        if (!c->information)
            continue;
        for (size_t k = 0; k < K; ++k)
            model->family_ops->information_terms(model, k, count, w.columns,
                                                 w.combined + K * count, y,
                                                 w.terms + k * c->shape.count * count);
        scale_terms(c, count, &w);
        pair_weights(c, count, &w);
        cross_weights(c, count, &w);
        scalar_weights(c, count, &w);
        moe_weighted_grams_add_columns(count, p, c->sums.pairs, w.columns, w.pair_weights,
                                       w.gram_scratch, sums + c->sums.grams_at);
        if (c->sums.crosses > 0)
            moe_product_abt_add(c->sums.crosses, p, count, w.cross_weights, w.columns,
                                sums + c->sums.crosses_at);
        if (c->sums.scalars > 0)
            moe_columns_sums(count, c->sums.scalars, w.scalar_weights,
                             sums + c->sums.scalars_at);
    }
    return 0;
}

/* Where coefficient block u's first input is among the layout's parameters. */
static size_t block_base(const moe_information_layout *l, size_t u)
{
    return u < l->K - 1 ? u * l->p : l->experts + (u - (l->K - 1)) * l->p;
}

/* Where own parameter s (expert s / E's e-th: the variance first) is. */
static size_t parameter_index(const struct moe_model *model, const moe_information_layout *l,
                              size_t E, size_t s)
{
    size_t k = s / E, e = s % E;
    return model->family_ops->has_variance && e == 0 ? l->variances + k : l->degrees + k;
}

/* The P x P information, both triangles, from the summed Grams, products and sums. */
static void expand(const pass_context *c, const double *sums, double *information)
{
    const moe_information_layout *l = &c->layout;
    size_t P = l->P, p = l->p, m = c->sums.blocks, parameters = c->sums.parameters;
    const double *gram = sums + c->sums.grams_at;
    for (size_t u = 0; u < m; ++u)
        for (size_t t = u; t < m; ++t, gram += p * p) {
            size_t from = block_base(l, u), to = block_base(l, t);
            for (size_t i = 0; i < p; ++i)
                for (size_t j = 0; j < p; ++j) {
                    double value = i <= j ? gram[i * p + j] : gram[j * p + i];
                    information[(from + i) * P + to + j] = value;
                    information[(to + j) * P + from + i] = value;
                }
        }
    const double *cross = sums + c->sums.crosses_at;
    for (size_t u = 0; u < m; ++u)
        for (size_t s = 0; s < parameters; ++s, cross += p) {
            size_t from = block_base(l, u), to = parameter_index(c->model, l, c->shape.E, s);
            for (size_t i = 0; i < p; ++i)
                information[(from + i) * P + to] = information[to * P + from + i] = cross[i];
        }
    const double *scalar = sums + c->sums.scalars_at;
    for (size_t s = 0; s < parameters; ++s)
        for (size_t s2 = s; s2 < parameters; ++s2, ++scalar) {
            size_t a = parameter_index(c->model, l, c->shape.E, s);
            size_t b = parameter_index(c->model, l, c->shape.E, s2);
            information[a * P + b] = information[b * P + a] = *scalar;
        }
}

moe_status moe_information_sum(const struct moe_model *model, const moe_data *data,
                               size_t threads, double *information, double *extras,
                               size_t *failed_row, char *message)
{
    pass_context c;
    c.model = model;
    c.data = data;
    c.information = information != NULL;
    c.extras = extras != NULL;
    c.layout = moe_information_layout_of(model);
    c.shape = moe_information_shape_of(model);
    c.sums = sums_layout_of(&c.layout, &c.shape, c.information, c.extras);
    c.workspace_rows = moe_block_rows_for(data->n);
    size_t K = c.layout.K, p = c.layout.p;
    size_t stacked_rows = K + K * model->expert_rows;
    double *stacked = moe_alloc_array(stacked_rows, p > 0 ? p : 1, sizeof(double));
    double *sums = moe_alloc_array(c.sums.size, 1, sizeof(double));
    moe_status status = MOE_OK;
    if (stacked == NULL || sums == NULL) {
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the information");
    } else {
        /* the reference expert's gate row is zero, so that its logits are exactly 0 */
        memcpy(stacked, model->gate, (K - 1) * p * sizeof(double));
        memset(stacked + (K - 1) * p, 0, p * sizeof(double));
        memcpy(stacked + K * p, model->experts, moe_experts_size(model) * sizeof(double));
        c.stacked = stacked;
        moe_chunk_job job = {data->n, c.sums.size, carve(&c, c.workspace_rows, NULL, &(workspace){0}),
                             information_chunk, &c};
        status = moe_run_chunks(&job, threads, sums, failed_row, message);
    }
    if (status == MOE_OK && information != NULL)
        expand(&c, sums, information);
    if (status == MOE_OK && extras != NULL)
        memcpy(extras, sums + c.sums.extras_at,
               MOE_INFORMATION_EXTRAS(K) * sizeof(double));
    free(stacked);
    free(sums);
    return status;
}
