#include "kernels/init.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LLOYD_ITERATIONS 20

typedef struct standardiser {
    size_t columns; /* the d features, then y when it takes part */
    double *mean;
    double *scale;
} standardiser;

static double column_value(const moe_data *data, size_t row, size_t column)
{
    return column < data->n_features ? data->X[row * data->ldx + column] : data->y[row];
}

static void standardised_row(const moe_data *data, const standardiser *s, size_t row,
                             double *out)
{
    for (size_t c = 0; c < s->columns; ++c)
        out[c] = (column_value(data, row, c) - s->mean[c]) * s->scale[c];
}

static void fit_standardiser(const moe_data *data, standardiser *s)
{
    double total = 0.0;
    memset(s->mean, 0, s->columns * sizeof(double));
    for (size_t i = 0; i < data->n; ++i) {
        double w = moe_data_weight(data, i);
        total += w;
        for (size_t c = 0; c < s->columns; ++c)
            s->mean[c] += w * column_value(data, i, c);
    }
    for (size_t c = 0; c < s->columns; ++c)
        s->mean[c] /= total;
    for (size_t c = 0; c < s->columns; ++c) {
        double sum = 0.0;
        for (size_t i = 0; i < data->n; ++i) {
            double deviation = column_value(data, i, c) - s->mean[c];
            sum += moe_data_weight(data, i) * deviation * deviation;
        }
        double sd = sqrt(sum / total);
        s->scale[c] = sd > 0.0 ? 1.0 / sd : 0.0; /* a constant column carries no information */
    }
}

static double squared_distance(const double *a, const double *b, size_t count)
{
    double sum = 0.0;
    for (size_t c = 0; c < count; ++c)
        sum += (a[c] - b[c]) * (a[c] - b[c]);
    return sum;
}

static size_t nearest(const double *point, const double *centres, size_t K, size_t columns,
                      double *distance)
{
    size_t best = 0;
    double best_distance = INFINITY;
    for (size_t k = 0; k < K; ++k) {
        double d = squared_distance(point, centres + k * columns, columns);
        if (d < best_distance) {
            best_distance = d;
            best = k;
        }
    }
    if (distance != NULL)
        *distance = best_distance;
    return best;
}

/* Draw an index with probability proportional to mass[i]; uniform if all mass is zero. */
static size_t draw_proportional(moe_rng *rng, const double *mass, size_t count)
{
    double total = 0.0;
    for (size_t i = 0; i < count; ++i)
        total += mass[i];
    if (!(total > 0.0))
        return moe_rng_below(rng, count);
    double target = moe_rng_uniform(rng) * total;
    double cumulative = 0.0;
    for (size_t i = 0; i < count; ++i) {
        cumulative += mass[i];
        if (target < cumulative)
            return i;
    }
    return count - 1;
}

/* Uniform subsample of the positive-weight rows without replacement, by selection sampling
   (each row taken with probability needed / remaining), which needs no index array over all
   n rows; the weights then enter as the points' masses, so the weighted k-means of the sample
   estimates that of the whole data. */
static void select_rows(const moe_data *data, moe_rng *rng, size_t positive, size_t sample,
                        size_t *rows)
{
    size_t next = 0, remaining = positive;
    for (size_t i = 0; i < data->n && next < sample; ++i) {
        if (!(moe_data_weight(data, i) > 0.0))
            continue;
        if (sample == positive || moe_rng_below(rng, remaining) < sample - next)
            rows[next++] = i;
        remaining--;
    }
}

/* k-means++ seeding: each new centre drawn with probability ~ weight * D^2. */
static void seed_centres(moe_rng *rng, const double *points, const double *mass, size_t sample,
                         size_t columns, size_t K, double *distance, double *draw_mass,
                         double *centres)
{
    size_t first = draw_proportional(rng, mass, sample);
    memcpy(centres, points + first * columns, columns * sizeof(double));
    for (size_t i = 0; i < sample; ++i)
        distance[i] = squared_distance(points + i * columns, centres, columns);
    for (size_t k = 1; k < K; ++k) {
        for (size_t i = 0; i < sample; ++i)
            draw_mass[i] = mass[i] * distance[i];
        size_t chosen = draw_proportional(rng, draw_mass, sample);
        memcpy(centres + k * columns, points + chosen * columns, columns * sizeof(double));
        for (size_t i = 0; i < sample; ++i) {
            double d = squared_distance(points + i * columns, centres + k * columns, columns);
            if (d < distance[i])
                distance[i] = d;
        }
    }
}

/* Weighted Lloyd iterations until no point changes cluster (at most `iterations`). */
static void lloyd(const double *points, const double *mass, size_t sample, size_t columns,
                  size_t K, int iterations, double *centres, double *sums, double *totals,
                  size_t *assignment)
{
    for (size_t i = 0; i < sample; ++i)
        assignment[i] = nearest(points + i * columns, centres, K, columns, NULL);
    for (int iteration = 0; iteration < iterations; ++iteration) {
        memset(sums, 0, K * columns * sizeof(double));
        memset(totals, 0, K * sizeof(double));
        for (size_t i = 0; i < sample; ++i) {
            size_t k = assignment[i];
            totals[k] += mass[i];
            for (size_t c = 0; c < columns; ++c)
                sums[k * columns + c] += mass[i] * points[i * columns + c];
        }
        for (size_t k = 0; k < K; ++k)
            if (totals[k] > 0.0) /* an emptied cluster keeps its centre */
                for (size_t c = 0; c < columns; ++c)
                    centres[k * columns + c] = sums[k * columns + c] / totals[k];
        size_t changed = 0;
        for (size_t i = 0; i < sample; ++i) {
            size_t k = nearest(points + i * columns, centres, K, columns, NULL);
            changed += k != assignment[i];
            assignment[i] = k;
        }
        if (changed == 0)
            break;
    }
}

static moe_status kmeans_partition(const moe_data *data, size_t K, int use_response,
                                   int iterations, moe_rng *rng, moe_label *labels,
                                   char *message)
{
    size_t columns = data->n_features + (use_response || data->n_features == 0 ? 1 : 0);
    /* Rows of zero weight take no part: a sample drawn among them would be wasted. */
    size_t positive = 0;
    for (size_t i = 0; i < data->n; ++i)
        positive += moe_data_weight(data, i) > 0.0;
    size_t sample = positive < MOE_INIT_SAMPLE ? positive : MOE_INIT_SAMPLE;
    /* Sizes checked for overflow (common/alloc.h), like every other workspace. */
    standardiser s = {columns, moe_alloc_array(columns, 1, sizeof(double)),
                      moe_alloc_array(columns, 1, sizeof(double))};
    size_t *rows = moe_alloc_array(sample, 1, sizeof(size_t));
    double *points = moe_alloc_array(sample, columns, sizeof(double));
    double *mass = moe_calloc_array(sample, 1, sizeof(double));
    double *distance = moe_alloc_array(sample, 1, sizeof(double));
    double *draw_mass = moe_alloc_array(sample, 1, sizeof(double));
    double *centres = moe_alloc_array(K, columns, sizeof(double));
    double *sums = moe_alloc_array(K, columns, sizeof(double));
    double *totals = moe_alloc_array(K, 1, sizeof(double));
    size_t *assignment = moe_alloc_array(sample, 1, sizeof(size_t));
    double *point = moe_alloc_array(columns, 1, sizeof(double));
    moe_status status = MOE_OK;
    if (!s.mean || !s.scale || !rows || !points || !mass || !distance || !draw_mass ||
        !centres || !sums || !totals || !assignment || !point) {
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate k-means buffers");
        goto done;
    }
    fit_standardiser(data, &s);
    select_rows(data, rng, positive, sample, rows);
    for (size_t i = 0; i < sample; ++i) {
        standardised_row(data, &s, rows[i], points + i * columns);
        mass[i] = moe_data_weight(data, rows[i]);
    }
    seed_centres(rng, points, mass, sample, columns, K, distance, draw_mass, centres);
    lloyd(points, mass, sample, columns, K, iterations, centres, sums, totals, assignment);
    for (size_t i = 0; i < data->n; ++i) {
        standardised_row(data, &s, i, point);
        labels[i] = (moe_label)nearest(point, centres, K, columns, NULL);
    }
done:
    free(s.mean);
    free(s.scale);
    free(rows);
    free(points);
    free(mass);
    free(distance);
    free(draw_mass);
    free(centres);
    free(sums);
    free(totals);
    free(assignment);
    free(point);
    return status;
}

moe_status moe_init_partition(moe_init_strategy strategy, const moe_data *data, size_t K,
                              int use_response, moe_rng *rng, moe_label *labels, char *message)
{
    if (K == 1) {
        memset(labels, 0, data->n * sizeof(moe_label));
        return MOE_OK;
    }
    if (strategy == MOE_INIT_RANDOM) {
        for (size_t i = 0; i < data->n; ++i)
            labels[i] = (moe_label)moe_rng_below(rng, K);
        return MOE_OK;
    }
    return kmeans_partition(data, K, use_response, LLOYD_ITERATIONS, rng, labels, message);
}

moe_status moe_init_seeds_partition(const moe_data *data, size_t K, int use_response,
                                    moe_rng *rng, moe_label *labels, char *message)
{
    if (K == 1)
        return moe_init_partition(MOE_INIT_RANDOM, data, K, use_response, rng, labels, message);
    return kmeans_partition(data, K, use_response, 0, rng, labels, message);
}

/* Rows drawn per random line beyond its p coefficients: a line through exactly p points
   follows them without error and is as often steep nonsense as not; two more average a
   little (the draws stay small so that a line lands inside one regime). */
#define LINE_EXTRA_ROWS 2

moe_status moe_init_lines_partition(const moe_data *data, size_t K, moe_rng *rng,
                                    moe_label *labels, char *message)
{
    size_t p = moe_data_inputs(data), n = data->n;
    size_t positive = 0;
    for (size_t i = 0; i < n; ++i)
        positive += moe_data_weight(data, i) > 0.0;
    size_t draws = p + LINE_EXTRA_ROWS;
    if (positive < draws) /* too few rows for lines: random labels do the job */
        return moe_init_partition(MOE_INIT_RANDOM, data, K, 1, rng, labels, message);
    double *lines = moe_alloc_array(K, p, sizeof(double));
    double *gram = moe_alloc_array(p, p, sizeof(double));
    double *work = moe_alloc_array(p + 1, p, sizeof(double)); /* moe_solve_spd's p x p + p */
    double *row = moe_alloc_array(p, 1, sizeof(double));
    size_t *chosen = moe_alloc_array(draws, 1, sizeof(size_t));
    moe_status status = MOE_OK;
    if (!lines || !gram || !work || !row || !chosen) {
        status = moe_fail(message, MOE_ERR_OUT_OF_MEMORY, "cannot allocate random lines");
        goto done;
    }
    for (size_t k = 0; k < K; ++k) {
        double *beta = lines + k * p;
        /* Distinct rows of positive weight, by rejection: draws << n in every use. */
        for (size_t a = 0; a < draws; ++a) {
            size_t candidate;
            int repeated;
            do {
                candidate = moe_rng_below(rng, n);
                repeated = !(moe_data_weight(data, candidate) > 0.0);
                for (size_t b = 0; b < a && !repeated; ++b)
                    repeated = chosen[b] == candidate;
            } while (repeated);
            chosen[a] = candidate;
        }
        memset(gram, 0, p * p * sizeof(double));
        memset(beta, 0, p * sizeof(double));
        for (size_t a = 0; a < draws; ++a) {
            moe_data_load_block(data, chosen[a], 1, row);
            double response = data->y[chosen[a]];
            for (size_t r = 0; r < p; ++r) {
                beta[r] += row[r] * response;
                for (size_t c = 0; c < p; ++c)
                    gram[r * p + c] += row[r] * row[c];
            }
        }
        int ridge_used = 0;
        if (moe_solve_spd(p, gram, beta, work, &ridge_used) != 0) {
            /* Collinear draws (a repeated x): a flat line at their mean response. */
            memset(beta, 0, p * sizeof(double));
            double mean = 0.0;
            for (size_t a = 0; a < draws; ++a)
                mean += data->y[chosen[a]] / (double)draws;
            if (data->intercept)
                beta[0] = mean;
        }
    }
    /* Each row goes to the line it lies closest to. */
    for (size_t i = 0; i < n; ++i) {
        moe_data_load_block(data, i, 1, row);
        size_t best = 0;
        double best_distance = INFINITY;
        for (size_t k = 0; k < K; ++k) {
            double distance = fabs(data->y[i] - moe_dot(p, row, lines + k * p));
            if (distance < best_distance) {
                best_distance = distance;
                best = k;
            }
        }
        labels[i] = (moe_label)best;
    }
done:
    free(lines);
    free(gram);
    free(work);
    free(row);
    free(chosen);
    return status;
}
