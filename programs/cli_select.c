#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct select_row {
    size_t experts;
    int ok;
    moe_criteria criteria;
    moe_fit_report report;
} select_row;

static double criterion_of(const select_row *row, const char *criterion)
{
    if (strcmp(criterion, "aic") == 0)
        return row->criteria.aic;
    if (strcmp(criterion, "icl") == 0)
        return row->criteria.icl;
    return row->criteria.bic;
}

/* The work a K took: every EM run (the start search's short ones and the restarts) and
   every iteration of them. The returned fit's own iterations alone mislead: after a start
   search that already converged it takes 1, for every K. */
static size_t runs_of(const moe_fit_report *report)
{
    return report->search_runs + report->n_restarts;
}

static size_t iterations_of(const moe_fit_report *report)
{
    return report->search_iterations + report->total_iterations;
}

static void print_table(const select_row *rows, size_t count, size_t best, const char *criterion)
{
    printf("%4s %18s %14s %14s %14s %8s %10s %10s\n", "K", "log-likelihood", "AIC", "BIC", "ICL",
           "EM runs", "iterations", "converged");
    for (size_t r = 0; r < count; ++r) {
        const select_row *row = rows + r;
        if (!row->ok) {
            printf("%4zu %18s\n", row->experts, "failed");
            continue;
        }
        printf("%4zu %18.6f %14.4f %14.4f %14.4f %8zu %10zu %10s%s\n", row->experts,
               row->criteria.loglik, row->criteria.aic, row->criteria.bic, row->criteria.icl,
               runs_of(&row->report), iterations_of(&row->report),
               row->report.converged ? "yes" : "no", r == best ? "  *" : "");
    }
    printf("best by %s: K = %zu\n", criterion, rows[best].experts);
    printf("EM runs, iterations: all of each K's (the start search's short runs and the "
           "restarts')\nconverged: whether the returned fit met the tolerance\n");
}

static void print_json(const select_row *rows, size_t count, size_t best, const char *criterion)
{
    printf("{\"criterion\": \"%s\", \"best\": %zu, \"fits\": [", criterion, rows[best].experts);
    for (size_t r = 0; r < count; ++r) {
        const select_row *row = rows + r;
        printf("%s{\"k\": %zu, \"ok\": %s", r > 0 ? ", " : "", row->experts,
               row->ok ? "true" : "false");
        if (row->ok)
            printf(", \"loglik\": %.17g, \"aic\": %.17g, \"bic\": %.17g, \"icl\": %.17g, "
                   "\"iterations\": %zu, \"total_iterations\": %zu, \"restarts\": %zu, "
                   "\"search_runs\": %zu, \"search_iterations\": %zu, \"converged\": %s",
                   row->criteria.loglik, row->criteria.aic, row->criteria.bic,
                   row->criteria.icl, row->report.iterations, row->report.total_iterations,
                   row->report.n_restarts, row->report.search_runs,
                   row->report.search_iterations, row->report.converged ? "true" : "false");
        putchar('}');
    }
    printf("]}\n");
}

int command_select(int argc, char **argv)
{
    fit_arguments a;
    int code = parse_fit_arguments(argc, argv, &a, 1);
    if (code != 0) {
        free(a.options);
        return code < 0 ? 0 : code;
    }
    training_data t;
    if ((code = prepare_data(&a, &t)) != 0) {
        free(a.options);
        return code;
    }
    size_t count = a.k_max - a.k_min + 1, best = count;
    select_row *rows = calloc(count, sizeof *rows);
    moe_model_t *best_model = NULL;
    code = rows == NULL ? usage_error("out of memory") : 0;
    for (size_t r = 0; code == 0 && r < count; ++r) {
        select_row *row = rows + r;
        row->experts = a.k_min + r;
        moe_model_t *model = NULL;
        moe_fitter_t *fitter = NULL;
        int fitted = fit_model(&a, &t, row->experts, &model, &fitter);
        if (fitted == EXIT_USAGE && r == 0) {
            code = fitted; /* bad options or data: every K would fail alike */
        } else if (fitted == 0) {
            row->report = (moe_fit_report)MOE_FIT_REPORT_INIT;
            moe_fitter_get_report(fitter, &row->report);
            row->criteria = (moe_criteria)MOE_CRITERIA_INIT;
            row->ok = moe_model_criteria(model, t.data.n, t.data.X, t.data.d, t.data.y, NULL,
                                         &row->criteria) == MOE_OK &&
                      isfinite(criterion_of(row, a.criterion));
            if (row->ok && (best == count || criterion_of(row, a.criterion) <
                                                 criterion_of(rows + best, a.criterion))) {
                best = r;
                moe_model_free(best_model);
                best_model = model;
                model = NULL;
            }
        }
        moe_model_free(model);
        moe_fitter_free(fitter);
        if (fit_interrupted())
            code = EXIT_FIT_PROBLEM;
    }
    if (code == 0 && best == count) {
        fprintf(stderr, "moe: no fit succeeded\n");
        code = EXIT_FIT_PROBLEM;
    }
    if (code == 0) {
        if (a.json)
            print_json(rows, count, best, a.criterion);
        else
            print_table(rows, count, best, a.criterion);
        if (a.output != NULL && moe_model_save(best_model, a.output) != MOE_OK) {
            fprintf(stderr, "moe: cannot save the model: %s\n", moe_last_error());
            code = EXIT_FIT_PROBLEM;
        }
    }
    moe_model_free(best_model);
    free(rows);
    free_training_data(&t);
    free(a.options);
    return code;
}
