/* No hidden shared state: fits on distinct handles in parallel threads give the sequential
   results, and a fitter call's scratch serves its own runs only. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/parallel.h"
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
    moe_status error_status; /* of the call that must fail */
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
    if (work->status == MOE_OK)
        work->status = moe_model_get_gate(model, work->parameters, 9);
    if (work->status == MOE_OK)
        work->status = moe_model_get_experts(model, work->parameters + 9, 9);
    if (work->status == MOE_OK)
        work->status = moe_model_get_variances(model, work->parameters + 18, 3);
    /* Each thread provokes its own error and must read back its own message. */
    double loglik;
    work->error_status =
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
        ck_assert_int_eq(sequential[t].error_status, MOE_ERR_EMPTY_INPUT);
    }
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; ++t)
        ck_assert_int_eq(pthread_create(&threads[t], NULL, thread_main, &parallel[t]), 0);
    for (int t = 0; t < THREADS; ++t)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; ++t) {
        ck_assert_int_eq(parallel[t].status, MOE_OK);
        ck_assert_int_eq(parallel[t].error_status, MOE_ERR_EMPTY_INPUT);
        ck_assert_int_eq(memcmp(parallel[t].parameters, sequential[t].parameters,
                                sizeof parallel[t].parameters), 0);
        ck_assert_str_eq(parallel[t].message, sequential[t].message);
        ck_assert_ptr_nonnull(strstr(parallel[t].message, "zero"));
    }
    synthetic_data_free(&data);
    synthetic_truth_free(&truth);
}
END_TEST

/* A job for moe_run_chunks: each chunk writes its rows' indices into its workspace and sums
   them from there; the outer job's chunks also run an inner job of their own. */
typedef struct scratch_job {
    int nested;
    double *outer_workspace, *inner_workspace;
    int clobbered;
} scratch_job;

static size_t index_chunk(void *context, size_t start, size_t rows, double *sums,
                          double *workspace)
{
    scratch_job *job = context;
    for (size_t i = 0; i < rows; ++i)
        workspace[i] = (double)(start + i);
    if (job->nested) {
        job->outer_workspace = workspace;
        scratch_job inner = {0, NULL, NULL, 0};
        moe_chunk_job inner_job = {rows, 1, rows, index_chunk, &inner};
        double inner_sum = 0.0;
        size_t failed = 0;
        char message[MOE_MESSAGE_SIZE];
        if (moe_run_chunks(&inner_job, 1, &inner_sum, &failed, message) != MOE_OK)
            return 1;
        job->inner_workspace = inner.outer_workspace;
        /* the outer chunk's workspace must have survived the inner run */
        for (size_t i = 0; i < rows; ++i)
            if (workspace[i] != (double)(start + i))
                job->clobbered = 1;
    } else {
        job->outer_workspace = workspace;
    }
    for (size_t i = 0; i < rows; ++i)
        sums[0] += workspace[i];
    return 0;
}

static int inside(const double *pointer, const moe_scratch *scratch)
{
    for (size_t i = 0; i < scratch->capacity; ++i)
        if (pointer == scratch->memory + i)
            return 1;
    return 0;
}

START_TEST(fitter_scratch_is_reused_and_never_shared_with_nested_runs)
{
    size_t n = 3 * MOE_CHUNK_ROWS + 17;
    double expected = (double)n * (double)(n - 1) / 2.0;
    char message[MOE_MESSAGE_SIZE];
    size_t failed = 0;
    moe_scratch scratch = MOE_SCRATCH_INIT;
    moe_scratch *outer = moe_scratch_enter(&scratch);
    for (int nested = 0; nested <= 1; ++nested)
        for (int round = 0; round < 2; ++round) {
            scratch_job job = {nested, NULL, NULL, 0};
            moe_chunk_job chunk_job = {n, 1, MOE_CHUNK_ROWS, index_chunk, &job};
            double total = 0.0;
            ck_assert_int_eq(moe_run_chunks(&chunk_job, 1, &total, &failed, message), MOE_OK);
            ck_assert_double_eq(total, expected);
            /* the run worked in the scratch, and gave it back */
            ck_assert_uint_ge(scratch.capacity, MOE_CHUNK_ROWS);
            ck_assert(inside(job.outer_workspace, &scratch));
            ck_assert_int_eq(scratch.busy, 0);
            if (nested) {
                ck_assert_ptr_nonnull(job.inner_workspace);
                ck_assert(!inside(job.inner_workspace, &scratch));
                ck_assert_int_eq(job.clobbered, 0);
            }
        }
    moe_scratch_leave(outer);
    /* without a scratch in place: fresh memory, the same sum */
    scratch_job job = {0, NULL, NULL, 0};
    moe_chunk_job chunk_job = {n, 1, MOE_CHUNK_ROWS, index_chunk, &job};
    double total = 0.0;
    ck_assert_int_eq(moe_run_chunks(&chunk_job, 1, &total, &failed, message), MOE_OK);
    ck_assert_double_eq(total, expected);
    ck_assert(!inside(job.outer_workspace, &scratch));
    moe_scratch_free(&scratch);
    ck_assert_ptr_null(scratch.memory);
    ck_assert_uint_eq(scratch.capacity, 0);
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *suite = suite_create("threads");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, parallel_fits_match_sequential_fits);
    tcase_add_test(core, fitter_scratch_is_reused_and_never_shared_with_nested_runs);
    suite_add_tcase(suite, core);
    return suite;
}

int main(void)
{
    return run_suite(threads_suite());
}
