/*
 * The reduction of M fitted mixtures of Gaussian or Poisson experts into one with K experts
 * (docs/ARCHITECTURE.md, "Distributed learning").
 *
 * The weighted average of the local models is an L-component mixture, L = sum K_m, with
 * gates pih_l(x) = lambda_m pi_k^(m)(x). The reduced experts minimise the relaxed expected
 * transport cost R(g) = E_x sum_l pih_l(x) min_k KL(phih_l(.|x) || phi_k(.|x)) over the
 * support rows, by majorisation-minimisation: with the assignment z_l(x) = argmin_k of the
 * current experts fixed, the majoriser separates by expert and its minimiser is closed form,
 *   beta_k = (sum_s D_k(s) x_s x_s')^-1 sum_s x_s T_k(s),
 *   sigma_k^2 = sum_s sum_l w_kl(s) (sigmah_l^2 + (x_s'beta_k - x_s'betah_l)^2) / sum_s D_k(s),
 * with w_kl(s) = pih_l(x_s) 1{z_l(x_s) = k}, D_k = sum_l w_kl, T_k = sum_l w_kl x_s'betah_l.
 * (The scalar variance update: the paper's matrix form of it is not the minimiser.) R never
 * increases. The reduced gate is the soft-label softmax regression of the final plan's
 * marginals a_sk = sum_l w_kl(s) on x_s, by the library's gate Newton kernel.
 *
 * Poisson experts (log link): KL(Pois(a) || Pois(b)) = a log(a / b) - a + b with a, b the
 * experts' means at x_s. With the assignment fixed, expert k's majoriser is, up to constants,
 *   sum_s D_k(s) exp(x_s'beta_k) - A_k(s) x_s'beta_k,   A_k = sum_l w_kl ah_l(x_s),
 * a weighted Poisson regression with the response A_k / D_k: no closed form, so the family's
 * own M-step (Newton with step halving, which never increases it) minimises it, with the
 * fitter's expert ridge added to the objective. R never increases either.
 *
 * Memory: the assignments (L x S bytes of expert indices), the masses and local means (L x S
 * doubles each); never the L x K x S plan.
 */
#include "estimators/ot/ot_pool.h"
#include "common/data.h"
#include "common/inputs.h"
#include "common/linalg.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Support rows per block of the passes over the plan: their per-row sums (K doubles each,
   four arrays) stay in the cache while every component's row of the plan goes by. */
#define PLAN_BLOCK_ROWS 512


static void pool_free(pool *pl)
{
    free(pl->beta_hat);
    free(pl->variance_hat);
    free(pl->mass);
    free(pl->local_mean);
    free(pl->design);
    free(pl->metric);
    free(pl->carried);
    free(pl->inputs);
    free(pl->local_rate);
}

static moe_status fail(moe_fit_context *context, moe_status status, const char *message)
{
    return moe_context_fail(context, status, message);
}

/* Poisson: the local experts' means at the support rows. The reduction hands transported
   means to the family's M-step as counts (update_poisson), which stop at 2^53. And the
   expert ridge that M-step adds, on the scale of its rows' total weight, the pool's mass. */
static moe_status local_rates(moe_fit_context *context, pool *pl)
{
    size_t count = pl->L * pl->S;
    double ridge = 0.0, mass = 0.0;
    moe_status status = moe_context_get_double(context, MOE_OPT_EXPERT_RIDGE, &ridge);
    if (status != MOE_OK)
        return status;
    for (size_t l = 0; l < pl->L; ++l)
        mass += pl->carried[l];
    pl->penalty = 0.5 * ridge * mass;
    pl->local_rate = malloc((count > 0 ? count : 1) * sizeof(double));
    if (pl->local_rate == NULL)
        return fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the reduction's pool");
    for (size_t i = 0; i < count; ++i) {
        pl->local_rate[i] = exp(pl->local_mean[i]);
        if (!(pl->local_rate[i] <= 9007199254740992.0))
            return fail(context, MOE_ERR_NUMERICAL,
                        "a local Poisson expert's mean count on a support row exceeds 2^53 (a "
                        "diverged local fit): the reduction cannot transport it");
    }
    return MOE_OK;
}

static moe_status build_pool(moe_fit_context *context, const moe_model_t *target, size_t count,
                             const moe_model_t *const *models, const double *weights,
                             const moe_rows *support, pool *pl)
{
    memset(pl, 0, sizeof *pl);
    size_t d = moe_model_n_features(target), p = moe_model_n_inputs(target);
    int intercept = moe_model_has_intercept(target);
    size_t L = 0;
    for (size_t m = 0; m < count; ++m)
        L += moe_model_n_experts(models[m]);
    pl->L = L;
    pl->K = moe_model_n_experts(target);
    pl->p = p;
    pl->poisson = moe_model_family(target) == MOE_FAMILY_POISSON;
    pl->intercept = intercept;
    pl->S = support->n;
    size_t S = support->n;
    pl->beta_hat = malloc(L * p * sizeof(double));
    pl->variance_hat = malloc(L * sizeof(double));
    pl->mass = malloc(L * S * sizeof(double));
    pl->local_mean = malloc(L * S * sizeof(double));
    pl->design = malloc(S * p * sizeof(double));
    pl->metric = malloc(p * p * sizeof(double));
    pl->carried = malloc(L * sizeof(double));
    pl->inputs = malloc(p + 1);
    if (pl->inputs != NULL &&
        moe_model_get_inputs(target, MOE_PART_EXPERTS, pl->inputs, p) == MOE_OK)
        pl->expert_inputs = moe_inputs_or_every(p, pl->inputs);
    double *proba = NULL;
    size_t largest = 0;
    for (size_t m = 0; m < count; ++m)
        if (moe_model_n_experts(models[m]) > largest)
            largest = moe_model_n_experts(models[m]);
    proba = malloc(S * largest * sizeof(double));
    if (!pl->beta_hat || !pl->variance_hat || !pl->mass || !pl->local_mean || !pl->design ||
        !pl->metric || !pl->carried || !pl->inputs || !proba) {
        free(proba);
        return fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the reduction's pool");
    }
    for (size_t s = 0; s < S; ++s) {
        double *row = pl->design + s * p;
        size_t column = 0;
        if (intercept)
            row[column++] = 1.0;
        for (size_t j = 0; j < d; ++j)
            row[column + j] = support->X[s * support->ldx + j];
    }
    size_t l = 0;
    moe_status status = MOE_OK;
    for (size_t m = 0; m < count && status == MOE_OK; ++m) {
        size_t Km = moe_model_n_experts(models[m]);
        status = moe_model_get_experts(models[m], pl->beta_hat + l * p, Km * p);
        for (size_t k = 0; pl->poisson && k < Km; ++k)
            pl->variance_hat[l + k] = 1.0; /* no variance: the shared code carries ones */
        if (status == MOE_OK && !pl->poisson)
            status = moe_model_get_variances(models[m], pl->variance_hat + l, Km);
        if (status == MOE_OK && S > 0)
            status = moe_model_gate_proba(models[m], S, support->X, support->ldx, proba, S * Km);
        for (size_t k = 0; status == MOE_OK && k < Km; ++k)
            for (size_t s = 0; s < S; ++s)
                pl->mass[(l + k) * S + s] = weights[m] * proba[s * Km + k];
        l += Km;
    }
    free(proba);
    if (status != MOE_OK)
        return fail(context, status, "cannot read a local model");
    /* local means: (L x p) x (p x S) */
    if (S > 0)
        moe_product_abt(L, S, p, pl->beta_hat, pl->design, pl->local_mean);
    memset(pl->metric, 0, p * p * sizeof(double));
    if (S > 0)
        moe_rank_update(S, p, 1.0 / (double)S, pl->design, pl->metric);
    moe_symmetrize_upper(p, pl->metric);
    for (size_t i = 0; i < L; ++i) {
        double sum = 0.0;
        for (size_t s = 0; s < S; ++s)
            sum += pl->mass[i * S + s];
        pl->carried[i] = sum;
    }
    return pl->poisson ? local_rates(context, pl) : MOE_OK;
}

/* The mean squared difference of the means of experts a and b over the support. */
static double support_distance(const pool *pl, const double *a, const double *b,
                               double *difference)
{
    size_t p = pl->p;
    for (size_t j = 0; j < p; ++j)
        difference[j] = a[j] - b[j];
    double sum = 0.0;
    for (size_t i = 0; i < p; ++i) {
        double row = 0.0;
        for (size_t j = 0; j < p; ++j)
            row += pl->metric[i * p + j] * difference[j];
        sum += difference[i] * row;
    }
    return sum > 0.0 ? sum : 0.0;
}

/* A component drawn with probability proportional to score (the first when all are 0). */
static size_t draw(const double *score, size_t count, moe_rng *rng)
{
    double total = 0.0;
    for (size_t l = 0; l < count; ++l)
        total += score[l];
    if (!(total > 0.0))
        return moe_rng_below(rng, count);
    double u = moe_rng_uniform(rng) * total;
    size_t chosen = 0;
    while (chosen + 1 < count && (u -= score[chosen]) > 0.0)
        ++chosen;
    return chosen;
}

/*
 * The MM's starting experts: k-means++ then Lloyd on the pooled components, each weighted by
 * the mass it carries over the support, with the distance of their means over the support
 * (the KL cost's mean term). Unweighted and in raw coefficients, a local expert that carries
 * almost nothing (a poor local optimum's spare expert) was as likely a seed as any, and
 * coefficients of different scales counted alike: at 64 shards one start in a few ended far
 * from the global fit (bench/RESULTS.md).
 */
static moe_status initial_experts(const pool *pl, moe_rng *rng, double *beta, double *variance)
{
    size_t L = pl->L, K = pl->K, p = pl->p;
    size_t *label = calloc(L, sizeof(size_t));
    double *score = malloc(L * sizeof(double)), *difference = malloc(p * sizeof(double));
    double *weight = malloc(K * sizeof(double));
    if (!label || !score || !difference || !weight) {
        free(label);
        free(score);
        free(difference);
        free(weight);
        return MOE_ERR_OUT_OF_MEMORY;
    }
    size_t first = draw(pl->carried, L, rng);
    memcpy(beta, pl->beta_hat + first * p, p * sizeof(double));
    for (size_t c = 1; c < K; ++c) {
        for (size_t l = 0; l < L; ++l) {
            double best = INFINITY;
            for (size_t j = 0; j < c; ++j) {
                double distance = support_distance(pl, pl->beta_hat + l * p, beta + j * p,
                                                   difference);
                best = distance < best ? distance : best;
            }
            score[l] = pl->carried[l] * best;
        }
        size_t chosen = draw(score, L, rng);
        memcpy(beta + c * p, pl->beta_hat + chosen * p, p * sizeof(double));
    }
    for (size_t k = 0; k < K; ++k)
        variance[k] = pl->variance_hat[first];
    for (int iteration = 0; iteration < 100; ++iteration) {
        int moved = 0;
        for (size_t l = 0; l < L; ++l) {
            double best = INFINITY;
            size_t arg = 0;
            for (size_t c = 0; c < K; ++c) {
                double distance = support_distance(pl, pl->beta_hat + l * p, beta + c * p,
                                                   difference);
                if (distance < best) {
                    best = distance;
                    arg = c;
                }
            }
            moved |= iteration == 0 || label[l] != arg;
            label[l] = arg;
        }
        if (!moved)
            break;
        memset(beta, 0, K * p * sizeof(double));
        memset(variance, 0, K * sizeof(double));
        memset(weight, 0, K * sizeof(double));
        for (size_t l = 0; l < L; ++l) {
            size_t c = label[l];
            for (size_t a = 0; a < p; ++a)
                beta[c * p + a] += pl->carried[l] * pl->beta_hat[l * p + a];
            variance[c] += pl->carried[l] * pl->variance_hat[l];
            weight[c] += pl->carried[l];
        }
        for (size_t c = 0; c < K; ++c) {
            if (!(weight[c] > 0.0)) {
                /* An empty cluster takes a component drawn by its mass. */
                size_t l = draw(pl->carried, L, rng);
                memcpy(beta + c * p, pl->beta_hat + l * p, p * sizeof(double));
                variance[c] = pl->variance_hat[l];
                continue;
            }
            for (size_t a = 0; a < p; ++a)
                beta[c * p + a] /= weight[c];
            variance[c] /= weight[c];
        }
    }
    free(label);
    free(score);
    free(difference);
    free(weight);
    return MOE_OK;
}

/* Assignments and the objective at the current experts. KL(N(a, u) || N(b, v)) is
   c(u, v) + (b - a)^2 / 2v with c(u, v) = (log(v / u) + u / v - 1) / 2 the same for every
   support row: the logarithms are taken once per (local, reduced) pair (offsets: L x K, then
   K more for 1 / 2v). */
static double assign(const pool *pl, const double *beta, const double *variance,
                     unsigned short *label, double *means, double *offsets)
{
    size_t L = pl->L, K = pl->K, p = pl->p, S = pl->S;
    moe_product_abt(S, K, p, pl->design, beta, means);
    double *scale = offsets + L * K; /* K: 1 / 2v_k */
    for (size_t k = 0; k < K; ++k)
        scale[k] = 0.5 / variance[k];
    for (size_t l = 0; l < L; ++l)
        for (size_t k = 0; k < K; ++k)
            offsets[l * K + k] = 0.5 * (log(variance[k] / pl->variance_hat[l]) +
                                        pl->variance_hat[l] / variance[k] - 1.0);
    double objective = 0.0;
    /* By blocks of support rows, so that their means stay in the cache across components. */
    for (size_t first = 0; first < S; first += PLAN_BLOCK_ROWS)
    for (size_t l = 0; l < L; ++l) {
        const double *offset = offsets + l * K;
        size_t last = S - first < PLAN_BLOCK_ROWS ? S : first + PLAN_BLOCK_ROWS;
        for (size_t s = first; s < last; ++s) {
            double best = INFINITY, local = pl->local_mean[l * S + s];
            const double *mean = means + s * K;
            unsigned short arg = 0;
            for (size_t k = 0; k < K; ++k) {
                double difference = mean[k] - local;
                double cost = offset[k] + scale[k] * difference * difference;
                if (cost < best) { /* ties go to the lowest k */
                    best = cost;
                    arg = (unsigned short)k;
                }
            }
            label[l * S + s] = arg;
            objective += pl->mass[l * S + s] * best;
        }
    }
    return objective;
}

/* assign for Poisson experts: the cost of (l, s) to k is a (eta_l - eta_k) - a + b_k, a the
   local mean, b_k = exp(eta_k) into rates (S x K) once per call. The objective includes the
   expert ridge the M-step minimises with, so that the MM never increases it. */
static double assign_poisson(const pool *pl, const double *beta, unsigned short *label,
                             double *means, double *rates)
{
    size_t L = pl->L, K = pl->K, p = pl->p, S = pl->S;
    moe_product_abt(S, K, p, pl->design, beta, means);
    for (size_t i = 0; i < S * K; ++i)
        rates[i] = exp(means[i]);
    double objective = 0.0, slopes = 0.0;
    for (size_t first = 0; first < S; first += PLAN_BLOCK_ROWS)
    for (size_t l = 0; l < L; ++l) {
        size_t last = S - first < PLAN_BLOCK_ROWS ? S : first + PLAN_BLOCK_ROWS;
        for (size_t s = first; s < last; ++s) {
            double best = INFINITY, local = pl->local_mean[l * S + s];
            double rate = pl->local_rate[l * S + s];
            const double *mean = means + s * K, *to = rates + s * K;
            unsigned short arg = 0;
            for (size_t k = 0; k < K; ++k) {
                double cost = rate * (local - mean[k]) - rate + to[k];
                if (cost < best) { /* ties go to the lowest k */
                    best = cost;
                    arg = (unsigned short)k;
                }
            }
            label[l * S + s] = arg;
            objective += pl->mass[l * S + s] * best;
        }
    }
    for (size_t k = 0; k < K; ++k)
        for (size_t j = (size_t)pl->intercept; j < p; ++j)
            slopes += beta[k * p + j] * beta[k * p + j];
    return objective + pl->penalty * slopes;
}

/* The reduction's workspace for the majoriser's minimiser (update). */
typedef struct update_space {
    double *D, *T;       /* S x K: D_k(s) and the departures' sum (update) */
    double *squares, *spread; /* S x K: the departures' squares, the local variances */
    double *grams;       /* K x p x p */
    double *rhs;         /* p x K */
    double *scratch;     /* moe_weighted_grams_scratch(MOE_BLOCK_ROWS, p, K) */
    double *means;       /* S x K: x_s' beta_k at the new experts */
    double *sums, *totals; /* K each */
    unsigned char *solved; /* K: the expert's system was solved */
    double *offsets;       /* L x K: assign's constant part of the costs, then K scales */
} update_space;

static void update_space_free(update_space *space)
{
    free(space->D);
    free(space->T);
    free(space->squares);
    free(space->spread);
    free(space->grams);
    free(space->rhs);
    free(space->scratch);
    free(space->means);
    free(space->sums);
    free(space->totals);
    free(space->solved);
    free(space->offsets);
}

static int update_space_alloc(update_space *space, size_t L, size_t S, size_t K, size_t p)
{
    space->offsets = malloc((L + 1) * K * sizeof(double));
    space->D = malloc(S * K * sizeof(double));
    space->T = malloc(S * K * sizeof(double));
    space->squares = malloc(S * K * sizeof(double));
    space->spread = malloc(S * K * sizeof(double));
    space->grams = malloc(K * p * p * sizeof(double));
    space->rhs = malloc(p * K * sizeof(double));
    space->scratch = malloc(moe_weighted_grams_scratch(MOE_BLOCK_ROWS, p, K) * sizeof(double));
    space->means = malloc(S * K * sizeof(double));
    space->sums = malloc(K * sizeof(double));
    space->totals = malloc(K * sizeof(double));
    space->solved = malloc(K);
    return space->D && space->T && space->squares && space->spread && space->grams && space->rhs && space->scratch &&
           space->means && space->sums && space->totals && space->solved &&
           space->offsets;
}

/*
 * The majoriser's minimiser; experts that receive no mass are reported (1 + their count).
 * One pass over the plan gathers, per support row and reduced expert, the mass D, the
 * masses' sum of the local means' departures from the current expert's mean c (so T = D c +
 * that), their sum of squares and their local variances: the K weighted Grams and right-hand
 * sides are then products over the support rows (the library's Gram kernel), and the new
 * variances come from these sums without a second pass over the plan (sum w (m - mu)^2 =
 * D (m - c)^2 - 2 (m - c) sum w (mu - c) + sum w (mu - c)^2, well conditioned as m - c is
 * the step). means: S x K, the current experts' means (assign's).
 */
static size_t update(const pool *pl, const unsigned short *label, const double *means,
                     double *beta, double *variance, double floor, size_t *dead,
                     update_space *space)
{
    size_t L = pl->L, K = pl->K, p = pl->p, S = pl->S;
    double *D = space->D, *T = space->T, *squares = space->squares, *spread = space->spread;
    memset(D, 0, S * K * sizeof(double));
    memset(T, 0, S * K * sizeof(double));
    memset(squares, 0, S * K * sizeof(double));
    memset(spread, 0, S * K * sizeof(double));
    for (size_t first = 0; first < S; first += PLAN_BLOCK_ROWS)
    for (size_t l = 0; l < L; ++l) {
        const unsigned short *row_label = label + l * S;
        const double *row_mass = pl->mass + l * S, *row_mean = pl->local_mean + l * S;
        double local_variance = pl->variance_hat[l];
        size_t last = S - first < PLAN_BLOCK_ROWS ? S : first + PLAN_BLOCK_ROWS;
        for (size_t s = first; s < last; ++s) {
            size_t at = s * K + row_label[s];
            double w = row_mass[s], departure = row_mean[s] - means[at];
            D[at] += w;
            T[at] += w * departure;
            squares[at] += w * departure * departure;
            spread[at] += w * local_variance;
        }
    }
    memset(space->grams, 0, K * p * p * sizeof(double));
    memset(space->rhs, 0, p * K * sizeof(double));
    for (size_t start = 0; start < S; start += MOE_BLOCK_ROWS) {
        size_t rows = S - start < MOE_BLOCK_ROWS ? S - start : MOE_BLOCK_ROWS;
        moe_weighted_grams_add(rows, p, K, pl->design + start * p, D + start * K,
                               space->scratch, space->grams);
    }
    /* the right-hand sides from T = D c + the departures' sum */
    for (size_t i = 0; i < S * K; ++i)
        space->means[i] = D[i] * means[i] + T[i];
    moe_product_atb_add(S, p, K, pl->design, space->means, space->rhs);
    size_t ridge = 0;
    unsigned char *solved = space->solved;
    *dead = 0;
    for (size_t k = 0; k < K; ++k) {
        double total = 0.0;
        for (size_t s = 0; s < S; ++s)
            total += D[s * K + k];
        space->totals[k] = total;
        solved[k] = 0;
        if (!(total > 1e-300)) {
            ++*dead;
            continue;
        }
        double *gram = space->grams + k * p * p;
        moe_symmetrize_upper(p, gram);
        double *right = space->scratch; /* p doubles, free after the Grams */
        for (size_t a = 0; a < p; ++a)
            right[a] = space->rhs[a * K + k];
        /* The minimiser over the coefficients the experts estimate, the others held. */
        moe_inputs_restrict_values(p, pl->expert_inputs, gram, right);
        int ridge_used = 0;
        if (moe_solve_symmetric(p, gram, right, &ridge_used) != MOE_OK)
            continue;
        ridge += ridge_used != 0;
        memcpy(beta + k * p, right, p * sizeof(double));
        solved[k] = 1;
    }
    moe_product_abt(S, K, p, pl->design, beta, space->means);
    memset(space->sums, 0, K * sizeof(double));
    for (size_t s = 0; s < S; ++s)
        for (size_t k = 0; k < K; ++k) {
            size_t at = s * K + k;
            double step = space->means[at] - means[at];
            space->sums[k] += spread[at] + D[at] * step * step - 2.0 * step * T[at] + squares[at];
        }
    for (size_t k = 0; k < K; ++k)
        if (solved[k]) {
            double v = space->sums[k] / space->totals[k];
            variance[k] = v > floor ? v : floor;
        }
    return ridge;
}

/* An expert that received no mass restarts at the pooled component carrying the largest
   transported cost, so it can take it over. */
static void reseed(const pool *pl, const unsigned short *label, const double *beta,
                   const double *variance, double *beta_out, double *variance_out, size_t k,
                   const double *means)
{
    size_t L = pl->L, K = pl->K, S = pl->S, p = pl->p;
    double worst = -1.0;
    size_t chosen = 0;
    for (size_t l = 0; l < L; ++l) {
        double sum = 0.0;
        for (size_t s = 0; s < S; ++s) {
            size_t j = label[l * S + s];
            sum += pl->mass[l * S + s] * ot_divergence(pl, pl->local_mean[l * S + s],
                                                    pl->variance_hat[l], means[s * K + j],
                                                    variance[j]);
        }
        if (sum > worst) {
            worst = sum;
            chosen = l;
        }
    }
    (void)beta;
    memcpy(beta_out + k * p, pl->beta_hat + chosen * p, p * sizeof(double));
    variance_out[k] = pl->variance_hat[chosen];
}

/* The rows update_poisson hands the family's M-step. */
typedef struct transported_rows {
    double *X, *y, *weights, *resp;
    size_t n, capacity;
} transported_rows;

/* The transport reduction's arrays. */
typedef struct transport_work {
    unsigned short *label;            /* L x S: the assignment z_l(x_s) */
    double *beta, *variance;          /* K x p, K: a restart's experts */
    double *best_beta, *best_variance; /* the best restart's */
    double *means, *targets;          /* S x K: x_s' beta_k; the gate's targets */
    update_space space;
    /* Poisson experts: */
    double *rates;                    /* S x K: exp(x_s' beta_k) */
    moe_model_t *model;               /* the target's structure, for the family's M-step */
    transported_rows rows;            /* that M-step's rows (update_poisson) */
} transport_work;

static int transport_work_alloc(transport_work *work, size_t L, size_t S, size_t K, size_t p)
{
    memset(work, 0, sizeof *work);
    work->label = malloc(L * S * sizeof(unsigned short));
    work->beta = malloc(K * p * sizeof(double));
    work->variance = malloc(K * sizeof(double));
    work->best_beta = malloc(K * p * sizeof(double));
    work->best_variance = malloc(K * sizeof(double));
    work->means = malloc(S * K * sizeof(double));
    work->targets = malloc(S * K * sizeof(double));
    int space_ready = update_space_alloc(&work->space, L, S, K, p);
    return work->label && work->beta && work->variance && work->best_beta &&
           work->best_variance && work->means && work->targets && space_ready;
}

static void transport_work_free(transport_work *work)
{
    free(work->label);
    free(work->beta);
    free(work->variance);
    free(work->best_beta);
    free(work->best_variance);
    free(work->means);
    free(work->targets);
    update_space_free(&work->space);
    free(work->rates);
    moe_model_free(work->model);
    free(work->rows.X);
    free(work->rows.y);
    free(work->rows.weights);
    free(work->rows.resp);
}

/* The assignment and objective at the experts beta (and variances), by the pool's family. */
static double assign_experts(const pool *pl, const double *beta, const double *variance,
                             transport_work *work)
{
    if (pl->poisson)
        return assign_poisson(pl, beta, work->label, work->means, work->rates);
    return assign(pl, beta, variance, work->label, work->means, work->space.offsets);
}

/* Room for `count` rows of d features and K responsibilities. */
static int rows_reserve(transported_rows *rows, size_t count, size_t d, size_t K)
{
    if (count <= rows->capacity)
        return 1;
    double *X = realloc(rows->X, count * (d > 0 ? d : 1) * sizeof(double));
    if (X != NULL)
        rows->X = X;
    double *y = realloc(rows->y, count * sizeof(double));
    if (y != NULL)
        rows->y = y;
    double *weights = realloc(rows->weights, count * sizeof(double));
    if (weights != NULL)
        rows->weights = weights;
    double *resp = realloc(rows->resp, count * K * sizeof(double));
    if (resp != NULL)
        rows->resp = resp;
    if (X == NULL || y == NULL || weights == NULL || resp == NULL)
        return 0;
    rows->capacity = count;
    return 1;
}

/*
 * Expert k's majoriser D e^eta - A eta at support row s as rows the family's M-step takes
 * (its responses must be counts): the count c = max(1, ceil(A / D)) with weight A / c and
 * the count 0 with weight D - A / c >= 0, whose terms (A / c)(e^eta - c eta) + (D - A / c)
 * e^eta add up to it; responsibility 1 on expert k. Pairs without mass are left out.
 */
static moe_status transported_counts(const pool *pl, const double *D, const double *A,
                                     transported_rows *rows)
{
    size_t K = pl->K, S = pl->S, p = pl->p, d = p - (size_t)pl->intercept, needed = 0;
    for (size_t i = 0; i < S * K; ++i)
        needed += D[i] > 0.0 ? 2 : 0;
    if (!rows_reserve(rows, needed, d, K))
        return MOE_ERR_OUT_OF_MEMORY;
    rows->n = 0;
    for (size_t s = 0; s < S; ++s)
        for (size_t k = 0; k < K; ++k) {
            double mass = D[s * K + k], sum = A[s * K + k];
            if (!(mass > 0.0))
                continue;
            double count = ceil(sum / mass);
            count = count > 1.0 ? count : 1.0;
            double high = sum / count, low = mass - high;
            double weights[2] = {high, low > 0.0 ? low : 0.0}, counts[2] = {count, 0.0};
            for (int part = 0; part < 2; ++part) {
                if (!(weights[part] > 0.0))
                    continue;
                size_t row = rows->n++;
                if (d > 0)
                    memcpy(rows->X + row * d, pl->design + s * p + pl->intercept,
                           d * sizeof(double));
                rows->y[row] = counts[part];
                rows->weights[row] = weights[part];
                memset(rows->resp + row * K, 0, K * sizeof(double));
                rows->resp[row * K + k] = 1.0;
            }
        }
    return MOE_OK;
}

/*
 * update for Poisson experts: the masses D and transported means A per support row and
 * reduced expert, then the family's M-step (moe_context_update_experts: Newton from the
 * current experts, never increasing the majoriser plus the ridge) on their rows. Experts
 * without mass are left as they are and counted in *dead (that M-step also counts them as
 * degenerate).
 */
static moe_status update_poisson(moe_fit_context *context, const pool *pl,
                                 transport_work *work, size_t *dead)
{
    size_t L = pl->L, K = pl->K, p = pl->p, S = pl->S;
    double *D = work->space.D, *A = work->space.T;
    memset(D, 0, S * K * sizeof(double));
    memset(A, 0, S * K * sizeof(double));
    for (size_t l = 0; l < L; ++l)
        for (size_t s = 0; s < S; ++s) {
            size_t at = s * K + work->label[l * S + s];
            double w = pl->mass[l * S + s];
            D[at] += w;
            A[at] += w * pl->local_rate[l * S + s];
        }
    *dead = 0;
    for (size_t k = 0; k < K; ++k) {
        double total = 0.0;
        for (size_t s = 0; s < S; ++s)
            total += D[s * K + k];
        *dead += !(total > 1e-300);
    }
    if (*dead == K)
        return MOE_OK;
    if (transported_counts(pl, D, A, &work->rows) != MOE_OK)
        return fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the reduction");
    size_t d = p - (size_t)pl->intercept;
    moe_rows rows = {work->rows.n, d > 0 ? work->rows.X : NULL, d, work->rows.y,
                     work->rows.weights};
    moe_status status = moe_model_set_experts(work->model, work->beta, K * p);
    if (status == MOE_OK)
        status = moe_context_update_experts(context, work->model, &rows, work->rows.resp,
                                            NULL, 0, 0.0);
    if (status == MOE_OK)
        status = moe_model_get_experts(work->model, work->beta, K * p);
    return status;
}

/* Every expert the assignment gives no mass is re-seeded (reseed). */
static void reseed_empty(const pool *pl, transport_work *work)
{
    size_t L = pl->L, K = pl->K, S = pl->S;
    for (size_t k = 0; k < K; ++k) {
        int empty = 1;
        for (size_t i = 0; i < L * S && empty; ++i)
            empty = work->label[i] != k || pl->mass[i] == 0.0;
        if (empty)
            reseed(pl, work->label, work->beta, work->variance, work->beta, work->variance, k,
                   work->means);
    }
}

/* One restart: experts drawn from its stream, then MM until the transport cost settles or
   max_iter; *result is the cost where it stopped. */
static moe_status descend(moe_fit_context *context, const pool *pl, const ot_options *options,
                          size_t restart, double floor, transport_work *work, double *result)
{
    size_t S = pl->S;
    moe_rng rng;
    moe_rng_seed(&rng, options->seed, 0x6f74ULL + restart);
    if (initial_experts(pl, &rng, work->beta, work->variance) != MOE_OK)
        return fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the reduction");
    double previous = INFINITY, objective = INFINITY;
    moe_status status = MOE_OK;
    for (size_t t = 0; status == MOE_OK; ++t) {
        objective = assign_experts(pl, work->beta, work->variance, work);
        double scale = (double)S + fabs(objective);
        if (objective > previous + 1e-12 * scale)
            moe_context_note_decrease(context, (objective - previous) / scale);
        status = moe_context_iteration(context, restart, t, -objective);
        if (status != MOE_OK || t >= options->max_iter ||
            fabs(previous - objective) <= options->tolerance * scale)
            break;
        previous = objective;
        size_t dead = 0, ridge = 0;
        if (pl->poisson)
            status = update_poisson(context, pl, work, &dead);
        else
            ridge = update(pl, work->label, work->means, work->beta, work->variance, floor,
                           &dead, &work->space);
        moe_context_count(context, MOE_COUNTER_RIDGE_FALLBACKS, ridge);
        if (status == MOE_OK && dead > 0) {
            reseed_empty(pl, work);
            if (!pl->poisson) /* the family's M-step counted them */
                moe_context_count(context, MOE_COUNTER_DEGENERATE_EVENTS, dead);
            previous = INFINITY; /* a re-seeded expert restarts the descent */
        }
    }
    *result = objective;
    return status;
}

/* gate_targets = posterior: the plan's marginals times each reduced expert's density of the
   support row's response, normalised per row (Poisson: without log y!, the same for every
   expert). */
static moe_status posterior_targets(moe_fit_context *context, const pool *pl,
                                    const moe_rows *support, transport_work *work)
{
    size_t K = pl->K, S = pl->S;
    double *targets = work->targets;
    if (K > 256)
        return fail(context, MOE_ERR_UNSUPPORTED,
                    "posterior gate targets take at most 256 experts");
    if (support->y == NULL)
        return fail(context, MOE_ERR_INVALID_ARGUMENT,
                    "posterior gate targets need the support rows' responses");
    for (size_t s = 0; s < S; ++s) {
        double largest = -INFINITY, logs[256], total = 0.0;
        for (size_t k = 0; k < K; ++k) {
            double y = support->y[s], mean = work->means[s * K + k];
            double e = y - mean;
            if (!(targets[s * K + k] > 0.0))
                logs[k] = -INFINITY;
            else if (pl->poisson)
                logs[k] = log(targets[s * K + k]) + (y == 0.0 ? 0.0 : y * mean) - exp(mean);
            else
                logs[k] = log(targets[s * K + k]) - 0.5 * log(work->best_variance[k]) -
                          0.5 * e * e / work->best_variance[k];
            largest = logs[k] > largest ? logs[k] : largest;
        }
        for (size_t k = 0; k < K; ++k)
            total += targets[s * K + k] = isfinite(largest) ? exp(logs[k] - largest) : 1.0;
        for (size_t k = 0; k < K; ++k)
            targets[s * K + k] /= total;
    }
    return MOE_OK;
}

/* The gate's targets: the plan at the best experts and its marginals (or the posterior's),
   one row of K per support row. */
static moe_status gate_targets(moe_fit_context *context, const pool *pl,
                               const moe_rows *support, const ot_options *options,
                               transport_work *work)
{
    size_t L = pl->L, K = pl->K, S = pl->S;
    double *targets = work->targets;
    moe_status status = MOE_OK;
    assign_experts(pl, work->best_beta, work->best_variance, work);
    memset(targets, 0, S * K * sizeof(double));
    for (size_t l = 0; l < L; ++l)
        for (size_t s = 0; s < S; ++s)
            targets[s * K + work->label[l * S + s]] += pl->mass[l * S + s];
    if (options->gate_targets == OT_GATE_POSTERIOR)
        status = posterior_targets(context, pl, support, work);
    /* The targets sum to the weights' total, 1, per row; rounding aside, normalise. */
    for (size_t s = 0; status == MOE_OK && s < S; ++s) {
        double total = 0.0;
        for (size_t k = 0; k < K; ++k)
            total += targets[s * K + k];
        for (size_t k = 0; k < K; ++k)
            targets[s * K + k] /= total;
    }
    return status;
}

/* The best experts into the target, and its gate fitted to the targets from zero. */
static moe_status reduced_model(moe_fit_context *context, moe_model_t *target, const pool *pl,
                                const moe_rows *support, const transport_work *work,
                                size_t best_restart)
{
    size_t K = pl->K, p = pl->p;
    moe_status status = MOE_OK;
    double *gate = calloc(K * p, sizeof(double));
    if (gate == NULL)
        status = fail(context, MOE_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == MOE_OK)
        status = moe_model_set_experts(target, work->best_beta, K * p);
    if (status == MOE_OK && !pl->poisson)
        status = moe_model_set_variances(target, work->best_variance, K);
    if (status == MOE_OK)
        status = moe_model_set_gate(target, gate, K * p);
    moe_rows rows = *support;
    if (status == MOE_OK && K > 1)
        status = moe_context_gate_newton(context, target, &rows, work->targets, 0);
    free(gate);
    if (status == MOE_OK)
        status = moe_context_set_result(context, best_restart, 1);
    return status;
}

/* The transport reduction: experts by MM from each restart, the best objective kept, then
   the gate. */
static moe_status transport(moe_fit_context *context, moe_model_t *target, const pool *pl,
                            const moe_rows *support, const ot_options *options)
{
    size_t L = pl->L, K = pl->K, p = pl->p, S = pl->S;
    if (S == 0)
        return fail(context, MOE_ERR_EMPTY_INPUT,
                    "the transport reduction needs support rows (x of the data)");
    if (L < K)
        return fail(context, MOE_ERR_UNSUPPORTED,
                    "the local models have fewer experts in all than the reduced model");
    transport_work work;
    moe_status status = MOE_OK;
    int ready = transport_work_alloc(&work, L, S, K, p);
    if (ready && pl->poisson) {
        work.rates = malloc(S * K * sizeof(double));
        ready = work.rates != NULL && moe_model_clone(&work.model, target) == MOE_OK;
    }
    if (!ready)
        status = fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the reduction");
    double smallest = INFINITY;
    for (size_t i = 0; i < L; ++i)
        smallest = pl->variance_hat[i] < smallest ? pl->variance_hat[i] : smallest;
    double floor = 1e-6 * smallest;
    double best_objective = INFINITY;
    size_t best_restart = 0;
    for (size_t restart = 0; status == MOE_OK && restart < options->restarts; ++restart) {
        double objective = INFINITY;
        status = descend(context, pl, options, restart, floor, &work, &objective);
        if (status == MOE_OK && objective < best_objective) {
            best_objective = objective;
            best_restart = restart;
            memcpy(work.best_beta, work.beta, K * p * sizeof(double));
            memcpy(work.best_variance, work.variance, K * sizeof(double));
        }
    }
    if (status == MOE_OK)
        status = gate_targets(context, pl, support, options, &work);
    if (status == MOE_OK)
        status = reduced_model(context, target, pl, support, &work, best_restart);
    transport_work_free(&work);
    return status;
}

moe_status ot_reduce(moe_fit_context *context, moe_model_t *target, size_t count,
                     const moe_model_t *const *models, const double *weights,
                     const moe_rows *support, const ot_options *options)
{
    moe_status checked = ot_check_family(context, target);
    if (checked != MOE_OK)
        return checked;
    if (moe_model_n_experts(target) > 65535)
        return fail(context, MOE_ERR_UNSUPPORTED, "too many experts for the reduction");
    if (options->method == OT_AVERAGE)
        return ot_average(context, target, count, models, weights);
    const moe_model_t **kept = malloc((count > 0 ? count : 1) * sizeof *kept);
    double *kept_weights = malloc((count > 0 ? count : 1) * sizeof(double));
    if (kept == NULL || kept_weights == NULL) {
        free(kept);
        free(kept_weights);
        return fail(context, MOE_ERR_OUT_OF_MEMORY, "cannot allocate the reduction");
    }
    size_t n_kept = 0;
    moe_status status = ot_screen(context, count, models, weights, support, options->screen,
                               kept, kept_weights, &n_kept);
    pool pl;
    memset(&pl, 0, sizeof pl);
    moe_rows empty = {0, NULL, moe_model_n_features(target), NULL, NULL};
    if (status == MOE_OK)
        status = build_pool(context, target, n_kept, kept, kept_weights,
                            support != NULL ? support : &empty, &pl);
    if (status == MOE_OK)
        status = options->method == OT_MIDDLE
                     ? ot_middle(context, target, n_kept, kept, kept_weights, &pl)
                     : transport(context, target, &pl, support, options);
    pool_free(&pl);
    free(kept);
    free(kept_weights);
    return status;
}
