#include "model/posterior.h"
#include "common/alloc.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "model/family.h"
#include "model/gate.h"
#include "model/softmax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scalars first in the summed array: loglik, entropy, gate data, previous gate data, weight. */
enum { SCALARS = 5 };

typedef struct pass_layout {
    size_t gradient, previous_gradient, parts, experts, size; /* 0: absent */
} pass_layout;

static pass_layout layout_of(const struct moe_model *model, const moe_pass_request *request)
{
    size_t K = model->n_experts, p = model->n_inputs, J = K - 1, m = J * p;
    pass_layout layout = {0, 0, 0, 0, SCALARS};
    int gate = request->gate && K > 1;
    if (gate) {
        layout.gradient = layout.size;
        layout.size += m;
        layout.parts = layout.size;
        layout.size += moe_softmax_hessian_parts(K, p);
    }
    if (request->experts && moe_family_has_statistics(model)) {
        layout.experts = layout.size;
        layout.size += model->family_ops->statistics_size(model);
    }
    /* Last, so that sums allocated with it serve the same request without it. */
    if (gate && request->previous) {
        layout.previous_gradient = layout.size;
        layout.size += m;
    }
    return layout;
}

static double *slot(double *memory, size_t offset)
{
    return offset == 0 ? NULL : memory + offset;
}

moe_status moe_pass_sums_allocate(const struct moe_model *model, const moe_pass_request *request,
                                  moe_pass_sums *sums, char *message)
{
    memset(sums, 0, sizeof *sums);
    pass_layout layout = layout_of(model, request);
    sums->memory = moe_calloc_array(layout.size, 1, sizeof(double));
    if (sums->memory == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate the sums of an E-step pass (%zu values)", layout.size);
    sums->size = layout.size;
    sums->gate_gradient = slot(sums->memory, layout.gradient);
    sums->previous_gate_gradient = slot(sums->memory, layout.previous_gradient);
    sums->gate_hessian_parts = slot(sums->memory, layout.parts);
    sums->experts = slot(sums->memory, layout.experts);
    return MOE_OK;
}

void moe_pass_sums_free(moe_pass_sums *sums)
{
    free(sums->memory);
    memset(sums, 0, sizeof *sums);
}

typedef struct pass_context {
    const struct moe_model *model;
    const moe_data *data;
    double *resp;
    pass_layout layout;
    /* The gate's free rows, then the experts' rows: (K - 1 + K R) x p. The reference
       expert's gate row is zero, so its logit is too: no product for it. */
    double *stacked;
} pass_context;

/* Per-thread scratch, carved from one array of workspace_size(...) doubles. */
typedef struct pass_workspace {
    double *block, *gate_log, *gate_proba, *density, *linear, *weights, *expert_weights;
    double *residuals, *previous_residuals, *gram_weights, *gram_scratch, *family_work, *row;
    double *row_loglik, *combined, *family_scratch;
} pass_workspace;

/* The Gram matrices a pass sums: the gate Hessian's pairs, then the K experts'. */
static size_t gram_count(const struct moe_model *model)
{
    size_t K = model->n_experts, J = K > 1 ? K - 1 : 1;
    return J * (J + 1) / 2 + K;
}

static size_t carve(const struct moe_model *model, double *base, pass_workspace *w)
{
    size_t R = MOE_BLOCK_ROWS, K = model->n_experts, p = model->n_inputs;
    size_t J = K > 1 ? K - 1 : 1, grams = gram_count(model);
    size_t sizes[] = {R * p, R * K, R * K, R * K, R * K * model->expert_rows, R, R * K, R * J,
                      R * J, R * grams, moe_weighted_grams_scratch(R, p, grams),
                      moe_family_statistics_work(model, R), R * K, R,
                      R * (K + K * model->expert_rows), R * K * model->expert_rows};
    double **slots[] = {&w->block, &w->gate_log, &w->gate_proba, &w->density,
                        &w->linear, &w->weights, &w->expert_weights, &w->residuals,
                        &w->previous_residuals, &w->gram_weights, &w->gram_scratch,
                        &w->family_work, &w->row, &w->row_loglik, &w->combined,
                        &w->family_scratch};
    size_t total = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        if (base != NULL)
            *slots[s] = base + total;
        total += sizes[s];
    }
    return total;
}

/* -sum_k r_k log pi_k, with 0 log 0 = 0. */
static inline double cross_entropy(const double *r, const double *log_pi, size_t K)
{
    double sum = 0.0;
    for (size_t k = 0; k < K; ++k)
        sum -= r[k] > 0.0 ? r[k] * log_pi[k] : 0.0;
    return sum;
}

/*
 * The per-row arithmetic of a block between its exponentials, in two halves around the
 * posterior's softmax. Always inlined and called with K a constant for the common small K
 * (pass_block), so that the loops over experts unroll: at d = 5 these loops, not the
 * products, were most of a pass.
 */
static inline __attribute__((always_inline)) double
previous_rows(size_t count, size_t K, const double *weights, const double *gate_log,
              const double *gate_proba, const double *r_block, double *density,
              double *previous_residuals, int previous)
{
    size_t J = K - 1;
    double previous_data = 0.0;
    for (size_t i = 0; i < count; ++i) {
        const double *log_pi = gate_log + i * K, *pi = gate_proba + i * K;
        const double *r = r_block + i * K; /* still the previous responsibilities */
        if (previous) {
            previous_data += weights[i] * cross_entropy(r, log_pi, K);
            for (size_t c = 0; c < J; ++c)
                previous_residuals[i * J + c] = weights[i] * (pi[c] - r[c]);
        }
        double *u = density + i * K;
        for (size_t k = 0; k < K; ++k)
            u[k] += log_pi[k];
    }
    return previous_data;
}

static inline __attribute__((always_inline)) void
posterior_rows(size_t count, size_t K, const double *weights, const double *gate_log,
               const double *gate_proba, const double *r_block, const double *log_r_block,
               const double *row_loglik, double *residuals, double *gram_weights, size_t grams,
               size_t pairs, double *expert_weights, int gate, int experts, double *sums)
{
    size_t J = K - 1;
    double loglik = 0.0, entropy = 0.0, gate_data = 0.0, total_weight = 0.0;
    for (size_t i = 0; i < count; ++i) {
        double weight = weights[i];
        const double *log_pi = gate_log + i * K, *pi = gate_proba + i * K;
        const double *r = r_block + i * K, *log_r = log_r_block + i * K;
        loglik += weight * row_loglik[i];
        entropy += weight * cross_entropy(r, log_r, K);
        total_weight += weight;
        if (gate) {
            gate_data += weight * cross_entropy(r, log_pi, K);
            for (size_t c = 0; c < J; ++c)
                residuals[i * J + c] = weight * (pi[c] - r[c]);
        }
        if (experts)
            for (size_t k = 0; k < K; ++k)
                gram_weights[i * grams + pairs + k] = expert_weights[i * K + k] = weight * r[k];
    }
    sums[0] += loglik;
    sums[1] += entropy;
    sums[2] += gate_data;
    sums[4] += total_weight;
}

static size_t pass_chunk(void *opaque, size_t start, size_t rows, double *sums, double *memory)
{
    const pass_context *context = opaque;
    const struct moe_model *model = context->model;
    const moe_data *data = context->data;
    const pass_layout *layout = &context->layout;
    size_t K = model->n_experts, p = model->n_inputs, J = K - 1;
    size_t free_rows = J, expert_columns = K * model->expert_rows;
    size_t width = free_rows + expert_columns;
    int gate = layout->gradient != 0, previous = layout->previous_gradient != 0;
    int experts = layout->experts != 0;
    /* The Hessian's Grams and the experts' share one product (small p) and are adjacent in
       the sums: the Hessian parts, then the experts' statistics, which begin with theirs. */
    size_t pairs = gate ? J * (J + 1) / 2 : 0, grams = pairs + (experts ? K : 0);
    double *gram_sums = sums + (gate ? layout->parts : layout->experts);
    pass_workspace w;
    carve(model, memory, &w);
    for (size_t offset = 0; offset < rows; offset += MOE_BLOCK_ROWS) {
        size_t first = start + offset;
        size_t count = rows - offset < MOE_BLOCK_ROWS ? rows - offset : MOE_BLOCK_ROWS;
        const double *y = data->y + first;
        moe_data_load_block(data, first, count, w.block);
        for (size_t i = 0; i < count; ++i)
            w.weights[i] = moe_data_weight(data, first + i);
        /* The gate's logits and the experts' linear predictors from one product. */
        moe_product_abt(count, width, p, w.block, context->stacked, w.combined);
        for (size_t i = 0; i < count; ++i) {
            const double *source = w.combined + i * width;
            double *logits = w.gate_log + i * K, *linear = w.linear + i * expert_columns;
            for (size_t c = 0; c < free_rows; ++c)
                logits[c] = source[c];
            logits[J] = 0.0;
            for (size_t c = 0; c < expert_columns; ++c)
                linear[c] = source[free_rows + c];
        }
        model->family_ops->log_density(model, count, w.linear, y, w.density, w.family_scratch);
        moe_softmax_rows(count, K, w.gate_log, w.gate_proba, NULL); /* log pi and pi */
        double *r_block = context->resp != NULL ? context->resp + first * K : w.row;
        double previous_data;
        switch (K) {
        case 2:
            previous_data = previous_rows(count, 2, w.weights, w.gate_log, w.gate_proba, r_block,
                                          w.density, w.previous_residuals, previous);
            break;
        case 3:
            previous_data = previous_rows(count, 3, w.weights, w.gate_log, w.gate_proba, r_block,
                                          w.density, w.previous_residuals, previous);
            break;
        case 4:
            previous_data = previous_rows(count, 4, w.weights, w.gate_log, w.gate_proba, r_block,
                                          w.density, w.previous_residuals, previous);
            break;
        default:
            previous_data = previous_rows(count, K, w.weights, w.gate_log, w.gate_proba, r_block,
                                          w.density, w.previous_residuals, previous);
            break;
        }
        sums[3] += previous_data;
        /* u becomes log r, r_block the new responsibilities, row_loglik the log-likelihoods */
        moe_softmax_rows(count, K, w.density, r_block, w.row_loglik);
        /* Every expert gives the row zero (or undefined) density: there is no posterior, and
           NaN responsibilities would poison an M-step. */
        for (size_t i = 0; i < count; ++i)
            if (!isfinite(w.row_loglik[i]))
                return 1 + first + i;
        switch (K) {
        case 2:
            posterior_rows(count, 2, w.weights, w.gate_log, w.gate_proba, r_block, w.density,
                           w.row_loglik, w.residuals, w.gram_weights, grams, pairs,
                           w.expert_weights, gate, experts, sums);
            break;
        case 3:
            posterior_rows(count, 3, w.weights, w.gate_log, w.gate_proba, r_block, w.density,
                           w.row_loglik, w.residuals, w.gram_weights, grams, pairs,
                           w.expert_weights, gate, experts, sums);
            break;
        case 4:
            posterior_rows(count, 4, w.weights, w.gate_log, w.gate_proba, r_block, w.density,
                           w.row_loglik, w.residuals, w.gram_weights, grams, pairs,
                           w.expert_weights, gate, experts, sums);
            break;
        default:
            posterior_rows(count, K, w.weights, w.gate_log, w.gate_proba, r_block, w.density,
                           w.row_loglik, w.residuals, w.gram_weights, grams, pairs,
                           w.expert_weights, gate, experts, sums);
            break;
        }
        if (gate) {
            moe_softmax_pair_weights(count, K, w.weights, w.gate_proba, w.gram_weights, grams);
            moe_product_atb_add(count, J, p, w.residuals, w.block, sums + layout->gradient);
        }
        if (previous)
            moe_product_atb_add(count, J, p, w.previous_residuals, w.block,
                                sums + layout->previous_gradient);
        if (grams > 0)
            moe_weighted_grams_add(count, p, grams, w.block, w.gram_weights, w.gram_scratch,
                                   gram_sums);
        if (experts)
            model->family_ops->accumulate_statistics(model, count, w.block, y, w.expert_weights,
                                                     w.linear, w.family_work,
                                                     sums + layout->experts);
    }
    return 0;
}

moe_status moe_pass_run(const struct moe_model *model, const moe_data *data, double *resp,
                        const moe_pass_request *request, moe_pass_sums *sums, char *message)
{
    size_t free_rows = model->n_experts - 1, p = model->n_inputs;
    size_t stacked_rows = free_rows + model->n_experts * model->expert_rows;
    double *stacked = moe_alloc_array(stacked_rows, p, sizeof(double));
    if (stacked == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the E-step");
    memcpy(stacked, model->gate, free_rows * p * sizeof(double));
    memcpy(stacked + free_rows * p, model->experts, moe_experts_size(model) * sizeof(double));
    pass_context context = {model, data, resp, layout_of(model, request), stacked};
    moe_status status = MOE_OK;
    if (request->previous && resp == NULL)
        status = moe_fail(message, MOE_ERR_INTERNAL, "an E-step with previous targets needs them");
    else if (context.layout.size > sums->size)
        status = moe_fail(message, MOE_ERR_INTERNAL, "E-step sums allocated for another request");
    if (status != MOE_OK) {
        free(stacked);
        return status;
    }
    moe_chunk_job job = {data->n, context.layout.size, carve(model, NULL, &(pass_workspace){0}),
                         pass_chunk, &context};
    size_t failed_row = 0;
    status = moe_run_chunks(&job, request->threads, sums->memory, &failed_row, message);
    free(stacked);
    if (status == MOE_ERR_NUMERICAL)
        return moe_fail(message, MOE_ERR_NUMERICAL,
                        "row %zu has zero, infinite or undefined likelihood under every expert",
                        failed_row);
    if (status != MOE_OK)
        return status;
    /* Every row's log-likelihood is finite, but their weighted sum can still overflow (a
       variance near the smallest double, huge weights). */
    if (!isfinite(sums->memory[0]))
        return moe_fail(message, MOE_ERR_NUMERICAL,
                        "the log-likelihood overflows: its sum over the rows is %g",
                        sums->memory[0]);
    sums->posterior.loglik = sums->memory[0];
    sums->posterior.entropy = sums->memory[1];
    sums->gate_data = sums->memory[2];
    sums->previous_gate_data = sums->memory[3];
    sums->weight = sums->memory[4];
    return MOE_OK;
}

moe_status moe_posterior_pass(const struct moe_model *model, const moe_data *data, double *resp,
                              size_t threads, moe_posterior_result *result, char *message)
{
    moe_pass_request request = {threads, 0, 0, 0};
    moe_pass_sums sums;
    moe_status status = moe_pass_sums_allocate(model, &request, &sums, message);
    if (status == MOE_OK)
        status = moe_pass_run(model, data, resp, &request, &sums, message);
    if (status == MOE_OK)
        *result = sums.posterior;
    moe_pass_sums_free(&sums);
    return status;
}
