/* The driver's data sets (data.h): a splitmix64 stream per set, normal draws by Box-Muller. */
#include "data.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct stream {
    uint64_t state;
} stream;

static uint64_t next(stream *s)
{
    uint64_t z = (s->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* In (0, 1): never 0, so that its logarithm is finite. */
static double uniform(stream *s)
{
    return ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(stream *s)
{
    double u = uniform(s), v = uniform(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Knuth's product of uniforms: fine for the small means drawn here. */
static double poisson(stream *s, double mean)
{
    double limit = exp(-mean), product = uniform(s);
    double count = 0.0;
    while (product > limit) {
        product *= uniform(s);
        count += 1.0;
    }
    return count;
}

/* Which of K regions x falls in: the largest of K fixed linear scores. */
static size_t region(const double *x, size_t d, size_t K)
{
    static const double directions[3][3] = {{1.5, -1.0, 0.5}, {-1.0, 1.2, -0.4}, {0.0, 0.0, 0.0}};
    size_t best = 0;
    double best_score = -INFINITY;
    for (size_t k = 0; k < K; ++k) {
        double score = 0.0;
        for (size_t j = 0; j < d && j < 3; ++j)
            score += directions[k][j] * x[j];
        if (score > best_score) {
            best_score = score;
            best = k;
        }
    }
    return best;
}

/* Expert k's linear predictor: its own slope on each column, plus an intercept. */
static double predictor(const double *x, size_t d, size_t k, double intercept)
{
    static const double slopes[3][3] = {{2.0, -1.0, 0.5}, {-1.5, 0.8, 1.0}, {0.3, 1.7, -1.2}};
    double eta = intercept;
    for (size_t j = 0; j < d && j < 3; ++j)
        eta += slopes[k][j] * x[j];
    return eta;
}

static double response(bitwise_set set, stream *s, const double *x, size_t d)
{
    switch (set) {
    case SET_REGRESSION:
        return predictor(x, d, region(x, d, 2), region(x, d, 2) == 0 ? 1.0 : -1.0) +
               0.3 * normal(s);
    case SET_CENTRED:
        return predictor(x, d, region(x, d, 3), 0.0) + 0.4 * normal(s);
    case SET_SIGMOID:
        return 1.0 / (1.0 + exp(-predictor(x, d, region(x, d, 2), 0.2))) + 0.05 * normal(s);
    case SET_RELU: {
        double eta = predictor(x, d, region(x, d, 2), 0.3);
        return (eta > 0.0 ? eta : 0.0) + 0.2 * normal(s);
    }
    case SET_LOGISTIC:
        return uniform(s) < 1.0 / (1.0 + exp(-predictor(x, d, region(x, d, 2), 0.0))) ? 1.0
                                                                                       : 0.0;
    case SET_MULTINOMIAL: {
        size_t k = region(x, d, 2);
        double eta = predictor(x, d, k, 0.0) + 0.8 * normal(s);
        return eta < -0.7 ? 0.0 : eta < 0.7 ? 1.0 : 2.0;
    }
    case SET_POISSON: /* x[d - 1] is the log exposure, coefficient one */
        return poisson(s, exp(x[d - 1] + 0.4 * predictor(x, d - 1, region(x, d - 1, 2), 0.5)));
    case SET_HEAVY: {
        double chi = 0.0;
        for (int i = 0; i < 3; ++i) {
            double z = normal(s);
            chi += z * z;
        }
        return predictor(x, d, region(x, d, 2), 0.5) + 0.3 * normal(s) / sqrt(chi / 3.0);
    }
    case SET_COUNT:
        break;
    }
    return 0.0;
}

static int make_set(bitwise_set set, const char *name, size_t n, size_t d, bitwise_data *data)
{
    stream s = {0x5eed0000ULL + (uint64_t)set};
    data->name = name;
    data->n = n;
    data->d = d;
    data->X = malloc(n * d * sizeof(double));
    data->y = malloc(n * sizeof(double));
    data->weights = malloc(n * sizeof(double));
    if (data->X == NULL || data->y == NULL || data->weights == NULL)
        return -1;
    for (size_t i = 0; i < n; ++i) {
        double *x = data->X + i * d;
        for (size_t j = 0; j < d; ++j)
            x[j] = normal(&s);
        if (set == SET_POISSON)
            x[d - 1] = uniform(&s) - 0.5;
        data->y[i] = response(set, &s, x, d);
        data->weights[i] = 0.5 + uniform(&s);
    }
    return 0;
}

int bitwise_data_make(bitwise_data sets[SET_COUNT])
{
    static const struct {
        const char *name;
        size_t n, d;
    } shapes[SET_COUNT] = {
        {"regression", 1200, 2}, {"centred", 2000, 3}, {"sigmoid", 1000, 2},
        {"relu", 1000, 2},       {"logistic", 1200, 2}, {"multinomial", 1500, 2},
        {"poisson", 1200, 3},    {"heavy", 1200, 2},
    };
    for (int set = 0; set < SET_COUNT; ++set)
        sets[set].X = sets[set].y = sets[set].weights = NULL;
    for (int set = 0; set < SET_COUNT; ++set) {
        if (make_set((bitwise_set)set, shapes[set].name, shapes[set].n, shapes[set].d,
                     &sets[set]) != 0)
            return -1;
    }
    return 0;
}

void bitwise_data_free(bitwise_data sets[SET_COUNT])
{
    for (int set = 0; set < SET_COUNT; ++set) {
        free(sets[set].X);
        free(sets[set].y);
        free(sets[set].weights);
    }
}
