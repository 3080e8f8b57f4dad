/*
 * A built-in estimator run on a context the kernels made (kernels/context.h,
 * moe_estimator_runner): init = tensor's "cqt". The estimator is found by name in the table
 * of built-in estimators, as moe_fitter_create finds it, and gets its own options' defaults
 * and the caller's settings of them the same way; then its fit runs on the context as it is,
 * without the checks, canonical order and report of moe_fitter_fit around it, since its
 * result is a starting point inside another fit.
 */
#include "fitter/fitter_impl.h"

moe_status moe_fitter_run_builtin(const char *estimator, const char *const *options,
                                  moe_fit_context *context)
{
    moe_fitter_t *fitter = NULL;
    moe_status status = moe_fitter_create(&fitter, estimator);
    if (status != MOE_OK)
        return moe_context_fail(context, status, moe_last_error());
    for (size_t i = 0; options != NULL && options[i] != NULL && status == MOE_OK; i += 2)
        if ((status = moe_fitter_set_option(fitter, options[i], options[i + 1])) != MOE_OK)
            moe_context_fail(context, status, moe_fitter_last_error(fitter));
    if (status == MOE_OK)
        status = fitter->ops.fit(fitter->state, context);
    moe_fitter_free(fitter);
    return status;
}
