/* No hidden shared state: fits on distinct handles in parallel threads give the sequential results. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"
#include "support/runner.h"
#include "support/synthetic.h"

#define THREADS 4
#define PARAMETERS (3 * 3 * 2 + 3)

typedef struct job {
    const synthetic_data *data;
    long long seed;
    double parameters[PARAMETERS];
    moe_status status;
    char message[64];
} job;

static void run_job(job *work)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_experts = 3;
    spec.n_features = 2;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    work->status = moe_model_create(&model, &spec);
    if (work->status == MOE_OK)
        work->status = moe_fitter_create(&fitter, "em");
    if (work->status == MOE_OK)
        work->status = moe_fitter_set_int(fitter, MOE_OPT_SEED, work->seed);
    if (work->status == MOE_OK)
        work->status = moe_fitter_fit(fitter, model, work->data->n, work->data->X, 2,
                                      work->data->y, NULL);
    if (work->status == MOE_OK) {
        moe_model_get_gate(model, work->parameters, 9);
        moe_model_get_experts(model, work->parameters + 9, 9);
        moe_model_get_variances(model, work->parameters + 18, 3);
    }
    /* Each thread provokes its own error and must read back its own message. */
    double loglik;
    moe_model_loglik(model, 0, work->data->X, 2, work->data->y, NULL, &loglik);
    strncpy(work->message, moe_last_error(), sizeof work->message - 1);
    moe_fitter_free(fitter);
    moe_model_free(model);
}

static void *thread_main(void *argument)
{
    run_job(argument);
    return NULL;
}

START_TEST(parallel_fits_match_sequential_fits)
{
    synthetic_truth truth;
    synthetic_data data;
    synthetic_truth_make(&truth, 3, 2, 3.0, 1.0, 71);
    synthetic_data_make(&data, &truth, 3000, 72);
    job sequential[THREADS], parallel[THREADS];
    memset(sequential, 0, sizeof sequential);
    memset(parallel, 0, sizeof parallel);
    for (int t = 0; t < THREADS; ++t) {
        sequential[t].data = parallel[t].data = &data;
        sequential[t].seed = parallel[t].seed = 10 + t;
        run_job(&sequential[t]);
        ck_assert_int_eq(sequential[t].status, MOE_OK);
    }
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; ++t)
        ck_assert_int_eq(pthread_create(&threads[t], NULL, thread_main, &parallel[t]), 0);
    for (int t = 0; t < THREADS; ++t)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; ++t) {
        ck_assert_int_eq(parallel[t].status, MOE_OK);
        ck_assert_int_eq(memcmp(parallel[t].parameters, sequential[t].parameters,
                                sizeof parallel[t].parameters), 0);
        ck_assert_str_eq(parallel[t].message, sequential[t].message);
        ck_assert_ptr_nonnull(strstr(parallel[t].message, "zero"));
    }
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *suite = suite_create("threads");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, parallel_fits_match_sequential_fits);
    suite_add_tcase(suite, core);
    return suite;
}

int main(void)
{
    return run_suite(threads_suite());
}
