/* Starting partitions shared by the estimators: random labels, k-means++ on x (and y), random
   regression lines. */
#ifndef MOE_LIB_INIT_H
#define MOE_LIB_INIT_H

#include "moe/fitter.h"
#include "common/data.h"
#include "common/rng.h"

#include <stdint.h>

/* An expert index of a starting partition: two bytes a row, since K <= 4096. */
typedef uint16_t moe_label;

/*
 * Hard labels (n values in 0..K-1). MOE_INIT_RANDOM draws them uniformly;
 * MOE_INIT_KMEANS runs weighted k-means++ and Lloyd iterations on the
 * standardised columns of x, plus y when use_response is set (or when there
 * are no features), on a random subsample of at most MOE_INIT_SAMPLE rows,
 * then assigns every row to its nearest centre.
 */
#define MOE_INIT_SAMPLE 5000
moe_status moe_init_partition(moe_init_strategy strategy, const moe_data *data, size_t K,
                              int use_response, moe_rng *rng, moe_label *labels, char *message);

/*
 * The cells of k-means++ seeds without Lloyd iterations: a random partition of the
 * standardised x (and y when use_response is set) into K neighbourhoods, which k-means
 * would even out; the gate of a mixture of experts carves x into such cells.
 */
moe_status moe_init_seeds_partition(const moe_data *data, size_t K, int use_response,
                                    moe_rng *rng, moe_label *labels, char *message);

/*
 * Random regression lines: each expert's line is the least-squares fit to a few random
 * rows (p + 2), and every row takes the label of the line it lies closest to in y. Unlike
 * k-means on [x, y], this groups rows by the line they follow, so regimes whose lines cross
 * are found; data->y must be set.
 */
moe_status moe_init_lines_partition(const moe_data *data, size_t K, moe_rng *rng,
                                    moe_label *labels, char *message);

#endif
