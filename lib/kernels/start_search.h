/* The default starting points (init = mixed): a search over many short EM runs. */
#ifndef MOE_LIB_START_SEARCH_H
#define MOE_LIB_START_SEARCH_H

#include "kernels/context.h"
#include "kernels/init.h"
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

/* Free the candidates (the context's release does it). */
void moe_start_search_release(moe_fit_context *context);

#endif
