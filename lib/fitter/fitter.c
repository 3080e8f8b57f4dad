/* The fitter handle: the estimator's table (of any supported version), its state, progress. */
#include "fitter/fitter_impl.h"
#include "common/check.h"
#include "common/versioned.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

moe_status moe_estimator_ops_init(moe_estimator_ops *ops, unsigned int version)
{
    if (ops == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "ops is NULL");
    static const moe_struct_layout layout = {"estimator ops", MOE_ESTIMATOR_ABI_VERSION,
                                             {sizeof(moe_estimator_ops)}};
    _Static_assert(MOE_ESTIMATOR_ABI_VERSION == 1, "a new version appends its size to layout");
    moe_estimator_ops zero;
    memset(&zero, 0, sizeof zero);
    return moe_struct_fill(ops, version, &zero, &layout, NULL);
}

/* Every default of the estimator's own options through its set_option: the table is the
   one place a default is written. */
static moe_status set_defaults(struct moe_fitter *fitter)
{
    for (size_t i = 0; i < fitter->ops.option_count; ++i) {
        const moe_option_info *entry = &fitter->ops.option_table[i];
        moe_status status = fitter->ops.set_option(fitter->state, i, entry->default_value);
        if (status != MOE_OK)
            return moe_fail(NULL, status, "estimator '%s' refused the default of its option '%s'",
                            fitter->ops.name, entry->name);
    }
    return MOE_OK;
}

static moe_status fitter_new(moe_fitter_t **out, const moe_estimator_ops *ops)
{
    moe_status status = moe_option_table_check(ops);
    if (status != MOE_OK)
        return status;
    struct moe_fitter *fitter = calloc(1, sizeof *fitter);
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate a fitter");
    fitter->ops = *ops;
    fitter->option_mask = fitter->ops.options;
    moe_option_values_default(&fitter->options);
    /* report.version stays 0 until a call runs: that is how get_report knows there is none. */
    status = fitter->ops.create(&fitter->state);
    if (status != MOE_OK) {
        free(fitter);
        return moe_fail(NULL, status, "estimator '%s' could not create its state", ops->name);
    }
    status = set_defaults(fitter);
    if (status != MOE_OK) {
        fitter->ops.destroy(fitter->state);
        free(fitter);
        return status;
    }
    *out = fitter;
    return MOE_OK;
}

moe_status moe_fitter_create(moe_fitter_t **out, const char *estimator)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (estimator == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "estimator name is NULL");
    const moe_estimator_ops *ops = moe_builtin_find(estimator);
    if (ops == NULL)
        return moe_fail(NULL, MOE_ERR_NOT_FOUND, "no built-in estimator named '%s'", estimator);
    return fitter_new(out, ops);
}

moe_status moe_fitter_create_custom(moe_fitter_t **out, const moe_estimator_ops *ops)
{
    if (out == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (ops == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "ops is NULL");
    /* Only the version field may be read before the version is known to be supported. */
    moe_status status = moe_check_struct_version(NULL, "estimator ops", ops->abi_version,
                                                 MOE_ESTIMATOR_ABI_VERSION);
    if (status != MOE_OK)
        return status;
    if (ops->name == NULL || ops->name[0] == '\0')
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "estimator name is missing");
    if (ops->create == NULL || ops->destroy == NULL || ops->fit == NULL)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s' lacks create, destroy or fit", ops->name);
    if ((ops->save_state == NULL) != (ops->load_state == NULL))
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT,
                        "estimator '%s' has one of save_state and load_state without the other",
                        ops->name);
    const unsigned int known =
        MOE_ESTIMATOR_SMALL_BATCHES | MOE_ESTIMATOR_KEEPS_ORDER | MOE_ESTIMATOR_OWN_OBJECTIVE |
        MOE_ESTIMATOR_COMBINES;
    if (ops->flags & ~known)
        return moe_fail(NULL, MOE_ERR_INVALID_ARGUMENT, "estimator '%s' has unknown flags 0x%x",
                        ops->name, ops->flags & ~known);
    return fitter_new(out, ops);
}

void moe_fitter_free(moe_fitter_t *fitter)
{
    if (fitter == NULL)
        return;
    fitter->ops.destroy(fitter->state);
    free(fitter->trace);
    free(fitter);
}

const char *moe_fitter_estimator_name(const moe_fitter_t *fitter)
{
    return fitter == NULL ? NULL : fitter->ops.name;
}

const char *moe_fitter_last_error(const moe_fitter_t *fitter)
{
    return fitter == NULL ? "" : fitter->message;
}

moe_status moe_fitter_set_progress(moe_fitter_t *fitter, moe_progress_fn callback,
                                   void *user_data)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    fitter->progress = callback;
    fitter->progress_data = user_data;
    return MOE_OK;
}


moe_status moe_fitter_set_combine(moe_fitter_t *fitter, moe_combine_fn combine,
                                  void *user_data)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    fitter->combine = combine;
    fitter->combine_data = combine == NULL ? NULL : user_data;
    return MOE_OK;
}

moe_status moe_fitter_set_start(moe_fitter_t *fitter, moe_start_fn start, void *user_data)
{
    if (fitter == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "fitter is NULL");
    if (!(fitter->option_mask & MOE_OPTION_BIT(MOE_OPT_INIT)))
        return moe_fail(fitter->message, MOE_ERR_UNSUPPORTED,
                        "estimator '%s' does not use option 'init'", fitter->ops.name);
    fitter->start = start;
    fitter->start_data = user_data;
    long long *init = &fitter->options.integer[MOE_OPT_INIT];
    if (start != NULL)
        *init = MOE_INIT_CUSTOM;
    else if (*init == MOE_INIT_CUSTOM)
        *init = MOE_INIT_MIXED; /* the default */
    return MOE_OK;
}
