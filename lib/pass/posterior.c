#include "pass/posterior.h"
#include "common/alloc.h"
#include "common/linalg.h"
#include "common/parallel.h"
#include "model/family.h"
#include "pass/gate.h"
#include "pass/posterior_block.h"
#include "pass/softmax.h"

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

/* Rows of a block of the pass, at most. Larger than MOE_BLOCK_ROWS: at small p a product's
   cost per call (OpenBLAS's, or a small product's set-up of its tiles) is a large part of
   it, and the block's columns still fit in L2. */
#define PASS_ROWS 512

/* The rows of each block of a chunk: the chunk cut into equal blocks of at most PASS_ROWS
   rows, an odd multiple of 8 where possible. A block's columns are `count` doubles apart,
   and at a power of two (512 rows: 4 KiB) the twenty-odd columns the per-row loop reads
   and writes all fall into the same L1 cache set. */
static size_t block_rows(size_t rows)
{
    for (size_t blocks = (rows + PASS_ROWS - 1) / PASS_ROWS;; ++blocks) {
        size_t count = ((rows + blocks - 1) / blocks + 7) / 8 * 8;
        if (count % 16 != 0 || count <= 8)
            return count;
    }
}

typedef struct pass_context {
    const struct moe_model *model;
    const moe_data *data;
    double *resp;
    pass_layout layout;
    /* The gate's rows (the reference's zero, so that its logit needs no special case),
       then the experts' rows: (K + K R) x p. */
    double *stacked;
    /* The longest block of any chunk: what each thread's scratch is carved for. */
    size_t workspace_rows;
} pass_context;

/* Per-thread scratch, carved from one array of carve(model, R, NULL, ...) doubles for blocks
   of at most R rows. Every block array is by columns (common/columns.h). */
typedef struct pass_workspace {
    double *columns, *weights, *combined, *gate_proba, *density, *resp, *resp_rows;
    double *row_loglik;
    double *residuals, *gram_weights, *gram_scratch, *gradients, *family_work;
    double *family_scratch, *scratch;
} pass_workspace;

/* The Gram matrices a pass sums: the gate Hessian's pairs, then the K experts'. */
static size_t gram_count(const struct moe_model *model)
{
    size_t K = model->n_experts, J = K > 1 ? K - 1 : 1;
    return J * (J + 1) / 2 + K;
}

static size_t carve(const struct moe_model *model, size_t R, double *base, pass_workspace *w)
{
    size_t K = model->n_experts, p = model->n_inputs;
    size_t J = K > 1 ? K - 1 : 1, width = K + K * model->expert_rows;
    size_t grams = gram_count(model);
    size_t sizes[] = {R * p, R, R * width, R * K, R * K, R * K, R * K, R, 2 * R * J, R * grams,
                      moe_weighted_grams_scratch(R, p, grams), 2 * J * p,
                      moe_family_statistics_work(model, R), R * K * model->expert_rows,
                      (6 + K) * R};
    double **slots[] = {&w->columns, &w->weights, &w->combined, &w->gate_proba, &w->density,
                        &w->resp, &w->resp_rows, &w->row_loglik, &w->residuals, &w->gram_weights,
                        &w->gram_scratch, &w->gradients, &w->family_work, &w->family_scratch,
                        &w->scratch};
    size_t total = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        if (base != NULL)
            *slots[s] = base + total;
        total += sizes[s];
    }
    return total;
}

/*
 * Rows from memory cost an EM iteration at small p as much as a fifth of its time when
 * each block waits for its own. The next block's rows (those after the chunk too: a
 * thread's next chunk usually follows) are asked for in PREFETCH_SLICES parts spread over
 * the current block's work, so that the misses overlap computation without filling the
 * core's queue of outstanding misses at once. The responsibilities are asked for as
 * reads even where they will be written: a prefetch for writing made the iteration at
 * d = 5 1 to 7% slower on this project's machine (bench/RESULTS.md), and a line read by
 * one core alone is already its to write.
 */
#define PREFETCH_SLICES 4

static void prefetch_slice(const pass_context *context, size_t next, size_t block, size_t slice)
{
    size_t n = context->data->n, K = context->model->n_experts;
    if (next >= n)
        return;
    size_t rows = n - next < block ? n - next : block;
    size_t from = next + slice * rows / PREFETCH_SLICES;
    size_t count = next + (slice + 1) * rows / PREFETCH_SLICES - from;
    moe_data_prefetch(context->data, from, count);
    if (context->resp != NULL)
        for (size_t value = 0; value < count * K; value += 8)
            __builtin_prefetch(context->resp + from * K + value, 0, 2);
}

/* Weights that are all 1 take the sums for unit weights (a logarithm per lane's product of
   rows instead of one per row), so that weights of ones give the same bits as none. */
static int all_ones(const double *weights, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (weights[i] != 1.0)
            return 0;
    return 1;
}

static size_t pass_chunk(void *opaque, size_t start, size_t rows, double *sums, double *memory)
{
    const pass_context *context = opaque;
    const struct moe_model *model = context->model;
    const moe_data *data = context->data;
    const pass_layout *layout = &context->layout;
    size_t K = model->n_experts, p = model->n_inputs, J = K - 1;
    size_t width = K + K * model->expert_rows;
    int gate = layout->gradient != 0, previous = layout->previous_gradient != 0;
    int experts = layout->experts != 0;
    /* The Hessian's Grams and the experts' share one product (small p) and are adjacent in
       the sums: the Hessian parts, then the experts' statistics, which begin with theirs. */
    size_t pairs = gate ? J * (J + 1) / 2 : 0, grams = pairs + (experts ? K : 0);
    double *gram_sums = sums + (gate ? layout->parts : layout->experts);
    pass_workspace w;
    carve(model, context->workspace_rows, memory, &w);
    size_t block = block_rows(rows);
    /* Gaussian experts with the identity link: their densities and residuals inside the
       posterior's per-row loop (pass/posterior_block.h). */
    double constants[MOE_POSTERIOR_FUSED_EXPERTS], inverses[MOE_POSTERIOR_FUSED_EXPERTS];
    int normal = moe_posterior_block_fused(K) && model->family_ops->normal_parts != NULL &&
                 model->family_ops->normal_parts(model, constants, inverses);
    /* With an intercept the columns are already the first p of the Grams' pair products. */
    double *columns = w.columns;
    if (grams > 0) {
        double *slot =
            moe_weighted_grams_columns_slot(block, p, data->intercept, w.gram_scratch);
        columns = slot != NULL ? slot : w.columns;
    }
    for (size_t offset = 0; offset < rows; offset += block) {
        size_t first = start + offset;
        size_t count = rows - offset < block ? rows - offset : block;
        const double *y = data->y + first;
        moe_data_load_columns(data, first, count, columns);
        prefetch_slice(context, first + count, block, 0);
        const double *weights = data->weights != NULL ? data->weights + first : w.weights;
        if (data->weights == NULL)
            for (size_t i = 0; i < count; ++i)
                w.weights[i] = 1.0;
        /* The gate's logits and the experts' linear predictors from one product. */
        moe_product_ab(width, count, p, context->stacked, columns, w.combined);
        double *linear = w.combined + K * count;
        if (!normal)
            model->family_ops->log_density(model, count, columns, linear, y, w.density,
                                           w.family_scratch);
        prefetch_slice(context, first + count, block, 1);
        /* The responsibilities by rows, where the caller keeps them, or in scratch. */
        double *resp = context->resp != NULL ? context->resp + first * K : w.resp_rows;
        moe_posterior_block posterior = {
            count,        K,         weights, w.combined,   w.gate_proba, w.density,
            resp,         w.resp,    w.row_loglik, w.residuals, w.gram_weights, w.scratch,
            gate,         previous,  experts, data->weights == NULL || all_ones(weights, count),
            NULL,         NULL,      NULL,    NULL,         NULL,         NULL};
        double normal_sums[2 * MOE_POSTERIOR_FUSED_EXPERTS] = {0.0};
        if (normal) {
            posterior.y = y;
            posterior.means = linear;
            posterior.constants = constants;
            posterior.inverses = inverses;
            posterior.scaled = w.family_work;
            posterior.normal_sums = normal_sums;
        }
        size_t failed = moe_posterior_block_run(&posterior, sums);
        /* Every expert gives the row zero (or undefined) density: there is no posterior, and
           NaN responsibilities would poison an M-step. */
        if (failed != 0)
            return first + failed;
        prefetch_slice(context, first + count, block, 2);
        if (gate && previous) {
            /* Both gradients from one product. */
            memset(w.gradients, 0, 2 * J * p * sizeof(double));
            moe_product_abt_add(2 * J, p, count, w.residuals, columns, w.gradients);
            for (size_t a = 0; a < J * p; ++a) {
                sums[layout->gradient + a] += w.gradients[a];
                sums[layout->previous_gradient + a] += w.gradients[J * p + a];
            }
        } else if (gate) {
            moe_product_abt_add(J, p, count, w.residuals, columns, sums + layout->gradient);
        }
        prefetch_slice(context, first + count, block, 3);
        if (grams > 0)
            moe_weighted_grams_add_columns(count, p, grams, columns, w.gram_weights,
                                           w.gram_scratch, gram_sums);
        if (experts && normal)
            model->family_ops->accumulate_normal_statistics(model, count, columns, w.family_work,
                                                            normal_sums, sums + layout->experts);
        else if (experts)
            model->family_ops->accumulate_statistics(model, count, columns, y,
                                                     w.gram_weights + pairs * count, linear,
                                                     w.family_work, sums + layout->experts);
    }
    return 0;
}

moe_status moe_pass_run(const struct moe_model *model, const moe_data *data, double *resp,
                        const moe_pass_request *request, moe_pass_sums *sums, char *message)
{
    size_t K = model->n_experts, p = model->n_inputs;
    size_t stacked_rows = K + K * model->expert_rows;
    double *stacked = moe_alloc_array(stacked_rows, p, sizeof(double));
    if (stacked == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the E-step");
    /* set_gate keeps the reference expert's gate row zero; written as zero here all the
       same, so that its logits are exactly 0 */
    memcpy(stacked, model->gate, (K - 1) * p * sizeof(double));
    memset(stacked + (K - 1) * p, 0, p * sizeof(double));
    memcpy(stacked + K * p, model->experts, moe_experts_size(model) * sizeof(double));
    /* Scratch for the longest block only: a pass over a few rows (a mini-batch of gd, a row
       of a stream) then allocates a few kilobytes, not the hundreds a full block takes. */
    size_t workspace_rows = data->n >= PASS_ROWS ? PASS_ROWS : block_rows(data->n + (data->n == 0));
    pass_context context = {model, data, resp, layout_of(model, request), stacked, workspace_rows};
    moe_status status = MOE_OK;
    if (request->previous && resp == NULL)
        status = moe_fail(message, MOE_ERR_INTERNAL, "an E-step with previous targets needs them");
    else if (context.layout.size > sums->size)
        status = moe_fail(message, MOE_ERR_INTERNAL, "E-step sums allocated for another request");
    if (status != MOE_OK) {
        free(stacked);
        return status;
    }
    moe_chunk_job job = {data->n, context.layout.size,
                         carve(model, workspace_rows, NULL, &(pass_workspace){0}), pass_chunk,
                         &context};
    size_t failed_row = 0;
    status = moe_run_chunks(&job, request->threads, sums->memory, &failed_row, message);
    free(stacked);
    if (status == MOE_ERR_NUMERICAL)
        return moe_fail(message, MOE_ERR_NUMERICAL,
                        "row %zu: zero, infinite or undefined likelihood under every expert",
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
