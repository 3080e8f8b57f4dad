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

/*
 * A fitter whose start search (init = mixed) takes a share (0 < share < 1) of the full
 * search's budget, as ot's local fits do: that share of the starts and of the restarts' end
 * points (fewer starts and survivors; the sample that ranks them keeps its size). 0 or 1:
 * the full search. (Defined by the fitter, which keeps the share for its contexts.)
 */
void moe_fitter_set_search_share(moe_fitter_t *fitter, double share);

/* The share a local fit of `rows` rows takes (ot's default): its search costs about as much
   as ten EM iterations on its rows, at most half of the full search (from about 55,000 rows
   on). */
double moe_search_share_for_rows(size_t rows);

/* Free the candidates (the context's release does it). */
void moe_start_search_release(moe_fit_context *context);

#endif
