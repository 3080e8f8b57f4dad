/*
 * The observed information of fitted models of every family and shape, printed with 17
 * digits, so that two builds of the library can be compared (compare.sh): K = 1 to 3,
 * with and without the intercept, weights, parts that see some inputs only, an offset,
 * trials, and the penalised variant. Each model is a short em fit on generated data (the
 * information is Louis' identity at any point, so a converged fit is not needed).
 *
 *   compare [SUBSTRING]   prints "case NAME P" then P x P values for each case
 */
#include "moe/moe.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 400
#define FEATURES 3

static uint64_t state = 88172645463325252ull;

static double uniform(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return ((double)(state >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
    return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

typedef struct test_case {
    const char *name;
    moe_family family;
    size_t K, classes;
    int intercept, weighted, restrict_gate, restrict_experts, offset, trials, penalised;
} test_case;

/* y for the family from the row's first two features (the last holds trials or offsets). */
static double response(const test_case *c, const double *x)
{
    /* two regimes, the first more likely as x[0] grows but never certain: no separated gate */
    double eta = 0.4 + 0.8 * x[0] - 0.5 * x[1] +
                 (uniform() < 1.0 / (1.0 + exp(-1.5 * x[0])) ? 1.5 : -1.0);
    switch (c->family) {
    case MOE_FAMILY_GAUSSIAN:
        return eta + 0.5 * normal();
    case MOE_FAMILY_STUDENT_T:
        return eta + 0.5 * normal() / (uniform() < 0.1 ? 0.1 : 1.0);
    case MOE_FAMILY_POISSON:
    case MOE_FAMILY_BINOMIAL: {
        double limit = c->family == MOE_FAMILY_BINOMIAL ? (c->trials ? x[2] : 1.0) : 1e9;
        double mean = c->family == MOE_FAMILY_POISSON ? exp(0.3 * eta) : 0.0, count = 0.0;
        if (c->family == MOE_FAMILY_POISSON) {
            for (double sum = -log(uniform()); sum < mean; sum -= log(uniform()))
                count += 1.0;
            return count;
        }
        for (double t = 0.0; t < limit; t += 1.0)
            count += uniform() < 1.0 / (1.0 + exp(-eta)) ? 1.0 : 0.0;
        return count;
    }
    case MOE_FAMILY_GAMMA:
        return exp(0.3 * eta) * -log(uniform() * uniform()) / 2.0;
    case MOE_FAMILY_LOGISTIC:
        return uniform() < 1.0 / (1.0 + exp(-eta)) ? 1.0 : 0.0;
    default:
        return (double)((size_t)(uniform() * (double)c->classes + (eta > 1.0 ? 1 : 0)) %
                        c->classes);
    }
}

static int run_case(const test_case *c)
{
    double X[ROWS * FEATURES], y[ROWS], weights[ROWS];
    for (size_t i = 0; i < ROWS; ++i) {
        double *x = X + i * FEATURES;
        x[0] = normal();
        x[1] = normal();
        x[2] = c->trials ? (double)(1 + (size_t)(uniform() * 8.0)) : 0.3 * normal();
        y[i] = response(c, x);
        weights[i] = 0.5 + uniform();
    }
    unsigned char gate[FEATURES] = {1, 0, 1}, experts[FEATURES] = {1, 1, 0};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = c->family;
    spec.n_experts = c->K;
    spec.n_features = FEATURES;
    spec.intercept = c->intercept;
    spec.n_classes = c->classes;
    spec.gate_features = c->restrict_gate ? gate : NULL;
    spec.expert_features = c->restrict_experts ? experts : NULL;
    spec.offset_feature = c->offset ? 2 : -1;
    spec.trials_feature = c->trials ? 2 : -1;
    moe_model_t *model = NULL;
    moe_fitter_t *fitter = NULL;
    const double *w = c->weighted ? weights : NULL;
    double l2 = c->penalised ? 0.3 : 0.0, ridge = c->penalised ? 0.05 : 0.0;
    if (moe_model_create(&model, &spec) != MOE_OK || moe_fitter_create(&fitter, "em") != MOE_OK ||
        moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 5) != MOE_OK ||
        moe_fitter_fit(fitter, model, ROWS, X, FEATURES, y, w) != MOE_OK) {
        fprintf(stderr, "%s: %s\n", c->name, fitter ? moe_fitter_last_error(fitter) : moe_last_error());
        return 1;
    }
    size_t P = moe_model_n_free_params(model);
    double *information = malloc(P * P * sizeof(double));
    moe_status status =
        c->penalised ? moe_model_information_penalized(model, ROWS, X, FEATURES, y, w, l2, ridge,
                                                       information, P * P)
                     : moe_model_information(model, ROWS, X, FEATURES, y, w, information, P * P);
    if (status != MOE_OK) {
        fprintf(stderr, "%s: %s\n", c->name, moe_last_error());
        return 1;
    }
    double loglik = 0.0;
    moe_model_loglik(model, ROWS, X, FEATURES, y, w, &loglik);
    printf("case %s %zu %.17g\n", c->name, P, loglik);
    if (getenv("COMPARE_DUMP") != NULL) { /* the data and model, for an outside reference */
        FILE *dump = fopen(getenv("COMPARE_DUMP"), "w");
        size_t p = FEATURES + (size_t)c->intercept, K = c->K;
        double gate[3 * (FEATURES + 1)], experts[3 * (FEATURES + 1)], variances[3];
        moe_model_get_gate(model, gate, K * p);
        moe_model_get_experts(model, experts, K * p);
        moe_model_get_variances(model, variances, K);
        for (size_t i = 0; i < ROWS; ++i)
            fprintf(dump, "%.17g %.17g %.17g %.17g %.17g\n", X[i * 3], X[i * 3 + 1], X[i * 3 + 2],
                    y[i], w != NULL ? w[i] : 1.0);
        for (size_t a = 0; a < K * p; ++a)
            fprintf(dump, "%.17g %.17g\n", gate[a], experts[a]);
        for (size_t k = 0; k < K; ++k)
            fprintf(dump, "%.17g\n", variances[k]);
        fclose(dump);
    }
    for (size_t a = 0; a < P * P; ++a)
        printf("%.17g\n", information[a]);
    free(information);
    moe_fitter_free(fitter);
    moe_model_free(model);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        moe_family family;
        size_t classes;
    } families[] = {{"gaussian", MOE_FAMILY_GAUSSIAN, 0}, {"t", MOE_FAMILY_STUDENT_T, 0},
                    {"poisson", MOE_FAMILY_POISSON, 0},   {"gamma", MOE_FAMILY_GAMMA, 0},
                    {"binomial", MOE_FAMILY_BINOMIAL, 0}, {"logistic", MOE_FAMILY_LOGISTIC, 0},
                    {"multinomial3", MOE_FAMILY_MULTINOMIAL, 3},
                    {"multinomial4", MOE_FAMILY_MULTINOMIAL, 4}};
    int failures = 0;
    char name[128];
    for (size_t f = 0; f < sizeof families / sizeof families[0]; ++f)
        for (size_t K = 1; K <= 3; ++K)
            for (int variant = 0; variant < 6; ++variant) {
                test_case c = {name, families[f].family, K, families[f].classes, 1, 0, 0, 0, 0,
                               0, 0};
                const char *label[] = {"plain", "no-intercept", "weighted", "restricted",
                                       "extra-column", "penalised"};
                c.intercept = variant != 1;
                c.weighted = variant == 2;
                c.restrict_gate = c.restrict_experts = variant == 3 && K > 1;
                if (variant == 4) {
                    c.trials = families[f].family == MOE_FAMILY_BINOMIAL;
                    c.offset = families[f].family == MOE_FAMILY_POISSON ||
                               families[f].family == MOE_FAMILY_GAUSSIAN;
                }
                c.penalised = variant == 5;
                snprintf(name, sizeof name, "%s-K%zu-%s", families[f].name, K, label[variant]);
                if (argc > 1 && strstr(name, argv[1]) == NULL)
                    continue;
                failures += run_case(&c);
            }
    return failures != 0;
}
