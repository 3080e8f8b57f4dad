/*
 * The transport reduction's pool of local components on the support rows, shared by the
 * reduction (ot_reduce.c) and the middle baseline (ot_baselines.c), and the divergence
 * between two components at a support row.
 */
#ifndef MOE_LIB_OT_POOL_H
#define MOE_LIB_OT_POOL_H

#include "estimators/ot/ot.h"

#include <math.h>
#include <stddef.h>

typedef struct pool {
    size_t L, K, p, S;
    double *beta_hat;  /* L x p */
    double *variance_hat; /* L */
    double *mass;      /* L x S: pih_l(x_s) */
    double *local_mean;/* L x S: x_s' betah_l */
    double *design;    /* S x p */
    double *metric;    /* p x p: the support's mean x x', so that (a - b)' metric (a - b) is
                          the mean squared difference of two experts' means over the support */
    double *carried;   /* L: the mass a component carries over the support, sum_s pih_l(x_s) */
    unsigned char *inputs; /* p bytes; expert_inputs points here when the experts see only
                              some inputs (common/inputs.h), else it is NULL */
    const unsigned char *expert_inputs;
    int poisson;       /* Poisson experts: local_mean holds log means, variance_hat ones */
    int intercept;
    double *local_rate;/* Poisson: L x S, exp(local_mean) */
    double penalty;    /* Poisson: the expert ridge's factor on the sum scale, mass x ridge / 2 */
} pool;

/* KL(N(a, u) || N(b, v)) */
static inline double ot_kl(double mean_from, double variance_from, double mean_to,
                           double variance_to)
{
    double difference = mean_to - mean_from;
    return 0.5 * (log(variance_to / variance_from) + variance_from / variance_to +
                  difference * difference / variance_to - 1.0);
}

/* KL(Pois(e^a) || Pois(e^b)) from the log means a, b: e^a (a - b) - e^a + e^b. */
static inline double ot_poisson_kl(double log_from, double log_to)
{
    double from = exp(log_from);
    return from * (log_from - log_to) - from + exp(log_to);
}

/* The pool's divergence between two experts at a support row: their means (Poisson: log
   means) and variances (Poisson: unused). */
static inline double ot_divergence(const pool *pl, double mean_from, double variance_from,
                                   double mean_to, double variance_to)
{
    return pl->poisson ? ot_poisson_kl(mean_from, mean_to)
                       : ot_kl(mean_from, variance_from, mean_to, variance_to);
}

/* Mid: the local model closest to all the others on the support (ot_baselines.c). */
moe_status ot_middle(moe_fit_context *context, moe_model_t *target, size_t count,
                     const moe_model_t *const *models, const double *weights, const pool *pl);

#endif
