/*
 * The public E-step (moe_estep_*): one pass of pass/posterior.c over rows, with what an EM
 * iteration's M-step needs summed in the same pass, and the finishing of those sums into the
 * gate objective's value, gradient and Hessian.
 */
#include "kernels/kernels.h"
#include "common/alloc.h"
#include "common/check.h"
#include "common/versioned.h"
#include "pass/posterior.h"
#include "pass/softmax.h"

#include <stdlib.h>
#include <string.h>

#define KNOWN_FLAGS                                                                          \
    (MOE_ESTEP_GATE_DERIVATIVES | MOE_ESTEP_EXPERT_STATISTICS | MOE_ESTEP_PREVIOUS_TARGETS)

struct moe_estep {
    moe_fit_context *context;
    unsigned int capacity;
    /* the sums and the request they are laid out for */
    moe_pass_sums sums;
    int allocated;
    moe_pass_request layout;
    /* the last run */
    int ran;
    unsigned int flags;
    moe_data data;
    double total_weight;
    double *gate; /* the gate the last run saw: the gradient's penalty is taken there */
    moe_estep_result result;
};

moe_status moe_estep_create(moe_fit_context *context, unsigned int flags, moe_estep_t **out)
{
    if (out != NULL)
        *out = NULL;
    if (context == NULL || out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", context ? "out" : "context");
    if (flags & ~KNOWN_FLAGS)
        return moe_fail(context->message, MOE_ERR_INVALID_ARGUMENT,
                        "unknown E-step flags 0x%x", flags & ~KNOWN_FLAGS);
    struct moe_estep *estep = calloc(1, sizeof *estep);
    if (estep != NULL)
        estep->gate = moe_alloc_array(moe_gate_size(context->model), 1, sizeof(double));
    if (estep == NULL || estep->gate == NULL) {
        free(estep);
        return moe_fail(context->message, MOE_ERR_OUT_OF_MEMORY,
                        "cannot allocate an E-step");
    }
    estep->context = context;
    estep->capacity = flags;
    *out = estep;
    return MOE_OK;
}

void moe_estep_free(moe_estep_t *estep)
{
    if (estep == NULL)
        return;
    moe_pass_sums_free(&estep->sums);
    free(estep->gate);
    free(estep);
}

/* The gate problem whose objective the sums belong to, over the last run's rows. */
static moe_softmax_problem gate_problem(const struct moe_estep *estep)
{
    const moe_fit_settings *settings = estep->context->settings;
    moe_softmax_problem problem =
        moe_gate_problem(estep->context->model, &estep->data, NULL, settings->gate.l2);
    problem.total_weight = estep->total_weight;
    return problem;
}

static double gate_objective(const struct moe_estep *estep, const moe_model_t *model,
                             double data_term)
{
    return data_term / estep->total_weight +
           moe_gate_penalty(model, estep->context->settings->gate.l2);
}

moe_status moe_estep_run(moe_estep_t *estep, const moe_model_t *model, const moe_rows *rows,
                         unsigned int flags, double *resp)
{
    if (estep == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "estep is NULL");
    moe_fit_context *context = estep->context;
    char *message = context->message;
    const moe_fit_settings *settings = moe_context_settings(context);
    if (settings == NULL)
        return moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the fit's settings");
    if (flags & ~estep->capacity)
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "E-step flags 0x%x were not among those it was created for (0x%x)",
                        flags, estep->capacity);
    if ((flags & MOE_ESTEP_PREVIOUS_TARGETS) && resp == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER,
                        "the previous targets are read from resp, which is NULL");
    moe_status status = moe_context_check_model(context, model);
    moe_data data;
    if (status == MOE_OK)
        status = moe_context_resolve_rows(context, rows, &data);
    if (status != MOE_OK)
        return status;
    if (data.y == NULL || data.n == 0)
        return moe_fail(message, MOE_ERR_EMPTY_INPUT, "an E-step needs rows with responses");
    estep->ran = 0;
    int gate = (flags & (MOE_ESTEP_GATE_DERIVATIVES | MOE_ESTEP_PREVIOUS_TARGETS)) &&
               model->n_experts > 1;
    int experts = (flags & MOE_ESTEP_EXPERT_STATISTICS) && moe_family_has_statistics(model);
    /* The previous targets' sums come last in the layout, so sums laid out with them also
       serve the same request without them. */
    moe_pass_request request = {settings->threads, gate, (flags & MOE_ESTEP_PREVIOUS_TARGETS) != 0,
                                experts};
    if (!estep->allocated || estep->layout.gate != gate || estep->layout.experts != experts ||
        (request.previous && !estep->layout.previous)) {
        moe_pass_sums_free(&estep->sums);
        estep->allocated = 0;
        moe_pass_request layout = request;
        layout.previous = gate && (estep->capacity & MOE_ESTEP_PREVIOUS_TARGETS);
        if ((status = moe_pass_sums_allocate(model, &layout, &estep->sums, message)) != MOE_OK)
            return status;
        estep->layout = layout;
        estep->allocated = 1;
    }
    request.previous = request.previous && gate;
    status = moe_pass_run(model, &data, resp, &request, &estep->sums, message);
    if (status != MOE_OK)
        return status;
    estep->ran = 1;
    estep->flags = flags;
    estep->data = data;
    estep->total_weight = moe_data_total_weight(&data);
    memcpy(estep->gate, model->gate, moe_gate_size(model) * sizeof(double));
    moe_estep_result *result = &estep->result;
    memset(result, 0, sizeof *result);
    result->version = MOE_ESTEP_RESULT_VERSION;
    result->loglik = estep->sums.posterior.loglik;
    result->entropy = estep->sums.posterior.entropy;
    result->total_weight = estep->total_weight;
    if (flags & MOE_ESTEP_GATE_DERIVATIVES)
        result->gate_objective = gate_objective(estep, model, estep->sums.gate_data);
    if (flags & MOE_ESTEP_PREVIOUS_TARGETS) {
        result->previous_gate_objective =
            gate_objective(estep, model, estep->sums.previous_gate_data);
        result->previous_gate_separated =
            settings->gate.l2 == 0.0 && estep->sums.weight > 0.0 &&
            moe_softmax_separated(estep->sums.previous_gate_data, estep->sums.weight);
    }
    return MOE_OK;
}

/* moe_estep_result's versions (common/versioned.h). */
static const moe_struct_layout result_layout = {"E-step result", MOE_ESTEP_RESULT_VERSION,
                                                {sizeof(moe_estep_result)}};
_Static_assert(MOE_ESTEP_RESULT_VERSION == 1, "a new version appends its size to result_layout");

moe_status moe_estep_result_init(moe_estep_result *result, unsigned int version)
{
    if (result == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "result is NULL");
    moe_estep_result zero = MOE_ESTEP_RESULT_INIT;
    return moe_struct_fill(result, version, &zero, &result_layout, NULL);
}

moe_status moe_estep_get_result(const moe_estep_t *estep, moe_estep_result *result)
{
    if (estep == NULL || result == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", estep ? "result" : "estep");
    moe_status status = moe_check_struct_version(estep->context->message,
                                                 "E-step result", result->version,
                                                 MOE_ESTEP_RESULT_VERSION);
    if (status != MOE_OK)
        return status;
    if (!estep->ran)
        return moe_fail(estep->context->message, MOE_ERR_INVALID_ARGUMENT,
                        "the E-step has not run");
    return moe_struct_copy_out(result, &estep->result, &result_layout,
                               estep->context->message);
}

/* The gate's sums a finishing call may read: the run asked for them and K > 1. */
static moe_status gate_sums_ready(const struct moe_estep *estep, unsigned int flag,
                                  size_t length, size_t needed, const double *out,
                                  const char *what)
{
    char *message = estep->context->message;
    if (out == NULL)
        return moe_fail(message, MOE_ERR_NULL_POINTER, "%s is NULL", what);
    if (!estep->ran || !(estep->flags & flag))
        return moe_fail(message, MOE_ERR_INVALID_ARGUMENT,
                        "the last E-step run did not sum the gate's %s", what);
    if (length < needed)
        return moe_fail(message, MOE_ERR_DIMENSION, "%s holds %zu values, %zu needed", what,
                        length, needed);
    return MOE_OK;
}

moe_status moe_estep_gate_gradient(const moe_estep_t *estep, int previous, double *gradient,
                                   size_t length)
{
    if (estep == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "estep is NULL");
    const struct moe_model *model = estep->context->model;
    size_t m = (model->n_experts - 1) * model->n_inputs;
    moe_status status = gate_sums_ready(estep, previous ? MOE_ESTEP_PREVIOUS_TARGETS
                                                        : MOE_ESTEP_GATE_DERIVATIVES,
                                        length, m, gradient, "gradient");
    if (status != MOE_OK || m == 0)
        return status;
    const double *sums =
        previous ? estep->sums.previous_gate_gradient : estep->sums.gate_gradient;
    memcpy(gradient, sums, m * sizeof(double));
    moe_softmax_problem problem = gate_problem(estep);
    moe_softmax_finish_gradient(&problem, estep->gate, gradient);
    return MOE_OK;
}

moe_status moe_estep_gate_hessian(const moe_estep_t *estep, double *hessian, size_t length)
{
    if (estep == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "estep is NULL");
    const struct moe_model *model = estep->context->model;
    size_t m = (model->n_experts - 1) * model->n_inputs;
    moe_status status =
        gate_sums_ready(estep, MOE_ESTEP_GATE_DERIVATIVES | MOE_ESTEP_PREVIOUS_TARGETS, length,
                        m * m, hessian, "Hessian");
    if (status != MOE_OK || m == 0)
        return status;
    moe_softmax_problem problem = gate_problem(estep);
    moe_softmax_finish_hessian(&problem, estep->sums.gate_hessian_parts, hessian);
    return MOE_OK;
}

/* For moe_context_update_experts: the expert statistics of the last run, or NULL. */
double *moe_estep_expert_statistics(const moe_estep_t *estep, const moe_data **data)
{
    if (estep == NULL || !estep->ran || !(estep->flags & MOE_ESTEP_EXPERT_STATISTICS))
        return NULL;
    *data = &estep->data;
    return estep->sums.experts;
}
