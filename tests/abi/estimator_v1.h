/*
 * FROZEN: include/moe/estimator.h as released with estimator ABI version 1 (libmoe 0.1),
 * with only its includes pointed at the installed headers. tests/test_estimator_abi.c
 * compiles an estimator against it to prove that version-1 tables keep working. Never edit.
 */
/*
 * libmoe: the estimator interface, for writing estimators outside libmoe.
 *
 * Every estimator, built-in or not, is a moe_estimator_ops table. A custom
 * table is used through moe_fitter_create_custom; libmoe keeps no global
 * registry. The table must outlive every fitter created from it.
 *
 * During fit, the estimator sees the problem through a moe_fit_context:
 * the data (already validated: finite, weights >= 0, sizes consistent), the
 * fitter's options, and a working model to write its result into. libmoe
 * copies the working model into the caller's model when fit returns MOE_OK,
 * or MOE_ERR_CANCELLED after moe_context_set_result, and puts it in
 * canonical order.
 */
#ifndef MOE_ESTIMATOR_H
#define MOE_ESTIMATOR_H

#include <stddef.h>
#include <moe/common.h>
#include <moe/model.h>
#include <moe/fitter.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MOE_ESTIMATOR_ABI_VERSION 1

typedef struct moe_fit_context moe_fit_context;

typedef struct moe_estimator_ops {
    unsigned int abi_version; /* MOE_ESTIMATOR_ABI_VERSION */
    const char *name;         /* non-empty */
    /* Allocate per-fitter state (may set *state to NULL). Required. */
    moe_status (*create)(void **state);
    /* Release the state. Required. */
    void (*destroy)(void *state);
    /* Options the library does not pin, by name; NULL if none. Return
       MOE_ERR_NOT_FOUND for unknown names. */
    moe_status (*set_option)(void *state, const char *name, const char *value);
    /* Batch fit. Required. */
    moe_status (*fit)(void *state, moe_fit_context *context);
    /* Streaming update; NULL if unsupported. */
    moe_status (*partial_fit)(void *state, moe_fit_context *context);
} moe_estimator_ops;

/* A fitter running a caller's estimator. ops is validated and not copied. */
MOE_API moe_status moe_fitter_create_custom(moe_fitter_t **out, const moe_estimator_ops *ops);

/* The working model the estimator fits. */
MOE_API moe_model_t *moe_context_model(moe_fit_context *context);
/* The data of this call (any out-pointer may be NULL). */
MOE_API moe_status moe_context_data(const moe_fit_context *context, size_t *n, const double **X,
                                    size_t *ldx, const double **y, const double **weights);
/* The fitter's option values. */
MOE_API moe_status moe_context_get_int(const moe_fit_context *context, moe_option option,
                                       long long *value);
MOE_API moe_status moe_context_get_double(const moe_fit_context *context, moe_option option,
                                          double *value);
/*
 * Record one finished iteration (trace, report, progress callback).
 * Iteration 0 records the starting point and does not call the callback.
 * restart must be below the n_init option (MOE_ERR_INVALID_ARGUMENT if not).
 * Returns MOE_ERR_CANCELLED if the callback asked to stop; the estimator
 * should then return that status promptly.
 */
MOE_API moe_status moe_context_iteration(moe_fit_context *context, size_t restart,
                                         size_t iteration, double loglik);
/*
 * Record the outcome: which restart's parameters the working model holds
 * and whether it met the tolerance. The report's iterations and loglik are
 * taken from that restart's recorded iterations.
 */
MOE_API moe_status moe_context_set_result(moe_fit_context *context, size_t best_restart,
                                          int converged);
/* Attach a message to the fitter for the status the estimator returns. */
MOE_API moe_status moe_context_fail(moe_fit_context *context, moe_status status,
                                    const char *message);

#ifdef __cplusplus
}
#endif

#endif /* MOE_ESTIMATOR_H */
