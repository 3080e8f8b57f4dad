/* The default starting points (init = mixed): a search over many short EM runs. */
#ifndef MOE_LIB_START_SEARCH_H
#define MOE_LIB_START_SEARCH_H

#include "kernels/context.h"
#include "kernels/init.h"
#include "kernels/kernels.h"
#include "common/data.h"

/*
 * Restart `restart`'s start: the restart-th best distinct end point of the search, which
 * runs on the first call for these rows (resp and labels: n x K and n workspaces of the
 * caller's). Restarts beyond the candidates found take them again in turn.
 */
moe_status moe_start_search_take(moe_fit_context *context, struct moe_model *model,
                                 size_t restart, const moe_data *data, double *resp,
                                 moe_label *labels);

/* How many distinct candidates the search kept (0 before it ran). */
size_t moe_start_search_count(const moe_fit_context *context);

/* The share of a full search's budget a fit of `rows` rows takes with search_shards = -1
   (ot's local fits): its search costs about as much as ten EM iterations on its rows, at
   most half of the full search (from about 55,000 rows on). A share takes that share of
   the starts and of the restarts' end points (fewer starts and survivors; the sample that
   ranks them keeps its size). */
double moe_search_share_for_rows(size_t rows);

/*
 * The search's EM (start_search.c): from the model's parameters on `data`, at most
 * `iterations` iterations with one Newton step of the gate a cycle, stopping when the
 * objective changes by at most tolerance * (N + |objective|). The penalised log-likelihood
 * reached goes to *objective, the iterations run to *used (when not NULL).
 */
moe_status moe_search_em(moe_fit_context *context, const moe_fit_settings *settings,
                         struct moe_model *model, const moe_data *data, double *resp,
                         size_t iterations, double tolerance, double *objective, size_t *used);

/* Nonzero when an expert of the model holds fewer rows than its parameters at resp, or
   sits at the variance floor: a spurious maximiser the search ranks last. */
int moe_search_collapsed(const struct moe_model *model, const moe_fit_settings *settings,
                         const moe_data *data, const double *resp);

/*
 * The family's start variants (family op start_variant) from the search's best end point
 * *best at *objective: EM to convergence from each; a better optimum without a collapsed
 * expert replaces *best (the variants then start again from it), at most `budget` rows
 * times EM iterations in all. Only running out of memory fails.
 */
moe_status moe_start_variant_search(moe_fit_context *context, const moe_fit_settings *settings,
                                    struct moe_model **best, double *objective,
                                    const moe_data *sample, double *resp, double budget);

/* Free the candidates (the context's release does it). */
void moe_start_search_release(moe_fit_context *context);

#endif
