/*
 * init = tensor (moe_context_start): restart r starts from the tensor estimator's fit, "cqt"
 * with its default options, run by name through the context's runner as the fitter runs
 * any built-in estimator. cqt fits in a context of its own on the call's rows, with the
 * call's pinned options but one restart (n_init = 1) whose gate starts from PRNG stream r
 * (cqt's first_restart), and its gate stage cut at TENSOR_GATE_ITERATIONS: a start need not
 * converge. Its kernels add their counters to the call's report and its failure message is
 * the call's; its recorded iterations, stages and stage times are its own (the start adds
 * the tensor and gate stages to the report when it succeeds).
 */
#include "kernels/kernels.h"

#include <stdio.h>
#include <string.h>

#define TENSOR_GATE_ITERATIONS 50

/* The tensor fit's context: the call's rows, options, report and message. */
static void tensor_setup(const moe_fit_context *context, const struct moe_model *model,
                         moe_context_setup *setup)
{
    memset(setup, 0, sizeof *setup);
    setup->call = MOE_CALL_FIT;
    setup->data = context->data;
    setup->model = model;
    setup->options = context->options;
    setup->options.integer[MOE_OPT_N_INIT] = 1;
    if (setup->options.integer[MOE_OPT_MAX_ITER] > TENSOR_GATE_ITERATIONS)
        setup->options.integer[MOE_OPT_MAX_ITER] = TENSOR_GATE_ITERATIONS;
    setup->option_mask = context->option_mask;
    setup->run_estimator = context->run_estimator;
    setup->report = context->report;
    setup->message = context->message;
}

moe_status moe_tensor_start(moe_fit_context *context, struct moe_model *model, size_t restart)
{
    if (context->run_estimator == NULL)
        return moe_fail(context->message, MOE_ERR_UNSUPPORTED,
                        "init = tensor needs the built-in estimator cqt, which this fit's "
                        "context cannot run");
    moe_context_setup setup;
    tensor_setup(context, model, &setup);
    char stream[32];
    snprintf(stream, sizeof stream, "%zu", restart);
    const char *const options[] = {"first_restart", stream, NULL};
    /* The report's stages and their times are the call's to say, not the start's. */
    moe_fit_report *report = context->report;
    unsigned int stages = report->stages;
    double seconds[3];
    memcpy(seconds, report->stage_seconds, sizeof seconds);
    moe_fit_context *tensor = NULL;
    moe_status status = moe_context_create(&tensor, &setup);
    if (status == MOE_OK)
        status = context->run_estimator("cqt", options, tensor);
    report->stages = stages;
    memcpy(report->stage_seconds, seconds, sizeof seconds);
    if (status == MOE_OK) {
        moe_model_copy_parameters(model, tensor->model);
        report->stages |= MOE_STAGE_TENSOR | MOE_STAGE_GATE;
    }
    moe_context_release(tensor);
    return status;
}
