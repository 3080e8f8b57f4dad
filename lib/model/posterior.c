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
    double *stacked; /* the gate rows, then the experts' rows: (K + K R) x p */
} pass_context;

/* Per-thread scratch, carved from one array of workspace_size(...) doubles. */
typedef struct pass_workspace {
    double *block, *gate_log, *gate_proba, *density, *linear, *weights, *expert_weights;
    double *residuals, *previous_residuals, *softmax_scratch, *family_work, *row, *row_loglik;
    double *combined, *family_scratch;
} pass_workspace;

static size_t carve(const struct moe_model *model, double *base, pass_workspace *w)
{
    size_t R = MOE_BLOCK_ROWS, K = model->n_experts, p = model->n_inputs;
    size_t J = K > 1 ? K - 1 : 1;
    size_t sizes[] = {R * p, R * K, R * K, R * K, R * K * model->expert_rows, R, R * K, R * J,
                      R * J, moe_softmax_scratch_size(R, J + 1, p),
                      moe_family_statistics_work(model, R), R * K, R,
                      R * (K + K * model->expert_rows), R * K * model->expert_rows};
    double **slots[] = {&w->block, &w->gate_log, &w->gate_proba, &w->density,
                        &w->linear, &w->weights, &w->expert_weights, &w->residuals,
                        &w->previous_residuals, &w->softmax_scratch, &w->family_work, &w->row,
                        &w->row_loglik, &w->combined, &w->family_scratch};
    size_t total = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        if (base != NULL)
            *slots[s] = base + total;
        total += sizes[s];
    }
    return total;
}

/* -sum_k r_k log pi_k, with 0 log 0 = 0. */
static double cross_entropy(const double *r, const double *log_pi, size_t K)
{
    double sum = 0.0;
    for (size_t k = 0; k < K; ++k)
        if (r[k] > 0.0)
            sum -= r[k] * log_pi[k];
    return sum;
}

static size_t pass_chunk(void *opaque, size_t start, size_t rows, double *sums, double *memory)
{
    const pass_context *context = opaque;
    const struct moe_model *model = context->model;
    const moe_data *data = context->data;
    const pass_layout *layout = &context->layout;
    size_t K = model->n_experts, p = model->n_inputs, J = K - 1;
    pass_workspace w;
    carve(model, memory, &w);
    for (size_t offset = 0; offset < rows; offset += MOE_BLOCK_ROWS) {
        size_t first = start + offset;
        size_t count = rows - offset < MOE_BLOCK_ROWS ? rows - offset : MOE_BLOCK_ROWS;
        const double *y = data->y + first;
        moe_data_load_block(data, first, count, w.block);
        /* The gate's logits and the experts' linear predictors from one product. */
        size_t width = K + K * model->expert_rows;
        moe_product_abt(count, width, p, w.block, context->stacked, w.combined);
        for (size_t i = 0; i < count; ++i) {
            memcpy(w.gate_log + i * K, w.combined + i * width, K * sizeof(double));
            memcpy(w.linear + i * (width - K), w.combined + i * width + K,
                   (width - K) * sizeof(double));
        }
        model->family_ops->log_density(model, count, w.linear, y, w.density, w.family_scratch);
        moe_softmax_rows(count, K, w.gate_log, w.gate_proba, NULL); /* log pi and pi */
        double *r_block = context->resp != NULL ? context->resp + first * K : w.row;
        for (size_t i = 0; i < count; ++i) {
            double weight = moe_data_weight(data, first + i);
            const double *log_pi = w.gate_log + i * K, *pi = w.gate_proba + i * K;
            const double *r = r_block + i * K; /* still the previous responsibilities */
            if (layout->previous_gradient != 0) {
                sums[3] += weight * cross_entropy(r, log_pi, K);
                for (size_t c = 0; c < J; ++c)
                    w.previous_residuals[i * J + c] = weight * (pi[c] - r[c]);
            }
            double *u = w.density + i * K;
            for (size_t k = 0; k < K; ++k)
                u[k] += log_pi[k];
            w.weights[i] = weight;
        }
        /* u becomes log r, r_block the new responsibilities, row_loglik the log-likelihoods */
        moe_softmax_rows(count, K, w.density, r_block, w.row_loglik);
        for (size_t i = 0; i < count; ++i) {
            double weight = w.weights[i], row_loglik = w.row_loglik[i];
            const double *log_pi = w.gate_log + i * K, *pi = w.gate_proba + i * K;
            const double *r = r_block + i * K, *log_r = w.density + i * K;
            /* Every expert gives the row zero (or undefined) density: there is no posterior,
               and NaN responsibilities would poison an M-step. */
            if (!isfinite(row_loglik))
                return 1 + first + i;
            sums[0] += weight * row_loglik;
            double row_entropy = 0.0;
            for (size_t k = 0; k < K; ++k)
                if (r[k] > 0.0)
                    row_entropy -= r[k] * log_r[k];
            sums[1] += weight * row_entropy;
            sums[4] += weight;
            if (layout->gradient != 0) {
                sums[2] += weight * cross_entropy(r, log_pi, K);
                for (size_t c = 0; c < J; ++c)
                    w.residuals[i * J + c] = weight * (pi[c] - r[c]);
            }
            if (layout->experts != 0)
                for (size_t k = 0; k < K; ++k)
                    w.expert_weights[i * K + k] = weight * r[k];
        }
        if (layout->gradient != 0)
            moe_softmax_block_derivatives(count, p, K, w.block, w.weights, w.gate_proba,
                                          w.residuals, sums + layout->gradient,
                                          sums + layout->parts, w.softmax_scratch);
        if (layout->previous_gradient != 0)
            moe_softmax_block_derivatives(count, p, K, w.block, w.weights, w.gate_proba,
                                          w.previous_residuals, sums + layout->previous_gradient,
                                          NULL, NULL);
        if (layout->experts != 0)
            model->family_ops->accumulate_statistics(model, count, w.block, y, w.expert_weights,
                                                     w.linear, w.family_work,
                                                     sums + layout->experts);
    }
    return 0;
}

moe_status moe_pass_run(const struct moe_model *model, const moe_data *data, double *resp,
                        const moe_pass_request *request, moe_pass_sums *sums, char *message)
{
    size_t stacked_rows = model->n_experts + model->n_experts * model->expert_rows;
    double *stacked = moe_alloc_array(stacked_rows, model->n_inputs, sizeof(double));
    if (stacked == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the E-step");
    memcpy(stacked, model->gate, moe_gate_size(model) * sizeof(double));
    memcpy(stacked + moe_gate_size(model), model->experts,
           moe_experts_size(model) * sizeof(double));
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
