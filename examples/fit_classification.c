/*
 * fit_classification: a mixture of two multinomial (softmax) experts for a
 * three-class label, fitted by EM, by gradient EM and by gradient descent on
 * the same data; prints each fit's log-likelihood, accuracy, cross-entropy
 * and work, and the class probabilities of one new point.
 *
 * Build against an installed libmoe:
 *   cc fit_classification.c $(pkg-config --cflags --libs moe) -lm -o fit_classification
 */
#include <moe/moe.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4000     /* samples */
#define D 2        /* features */
#define C 3        /* classes */

/* splitmix64: the same data on every platform. */
static double uniform(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}

static double normal(uint64_t *state)
{
    double u = uniform(state), v = uniform(state);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/*
 * The gate sends x1 > 0 to expert A, else to expert B. Expert A ranks the classes by x2,
 * expert B in the opposite order: neither a single softmax nor a single expert fits this.
 */
static void make_data(double *X, double *y)
{
    uint64_t state = 2026;
    for (size_t i = 0; i < N; ++i) {
        double x1 = normal(&state), x2 = normal(&state);
        X[i * D] = x1;
        X[i * D + 1] = x2;
        int first = uniform(&state) < 1.0 / (1.0 + exp(-4.0 * x1));
        double logits[C] = {first ? 3.0 * x2 : -3.0 * x2, first ? 0.0 : 1.0, first ? -3.0 * x2 : 3.0 * x2};
        double total = 0.0;
        for (int c = 0; c < C; ++c)
            total += logits[c] = exp(logits[c]);
        double u = uniform(&state) * total;
        int label = 0;
        while (label < C - 1 && (u -= logits[label]) > 0.0)
            ++label;
        y[i] = label;
    }
}

static int fail(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, moe_last_error());
    return EXIT_FAILURE;
}

int main(void)
{
    double *X = malloc(N * D * sizeof(double)), *y = malloc(N * sizeof(double));
    if (X == NULL || y == NULL)
        return EXIT_FAILURE;
    make_data(X, y);

    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_MULTINOMIAL;
    spec.n_classes = C;
    spec.n_experts = 2;
    spec.n_features = D;

    const char *estimators[] = {"em", "gem", "gd"};
    printf("%-4s %12s %9s %9s %6s %10s %10s\n", "", "loglik", "accuracy", "cross-ent", "iter",
           "gradients", "converged");
    for (size_t e = 0; e < 3; ++e) {
        moe_model_t *model = NULL;
        moe_fitter_t *fitter = NULL;
        if (moe_model_create(&model, &spec) != MOE_OK)
            return fail("moe_model_create");
        if (moe_fitter_create(&fitter, estimators[e]) != MOE_OK)
            return fail("moe_fitter_create");
        moe_fitter_set_int(fitter, MOE_OPT_N_INIT, 3);
        moe_fitter_set_int(fitter, MOE_OPT_MAX_ITER, 300);
        moe_status status = moe_fitter_fit(fitter, model, N, X, D, y, NULL);
        if (status != MOE_OK) {
            fprintf(stderr, "%s: %s\n", estimators[e], moe_fitter_last_error(fitter));
            return EXIT_FAILURE;
        }
        moe_fit_report report = MOE_FIT_REPORT_INIT;
        moe_fitter_get_report(fitter, &report);
        double accuracy = 0.0, cross_entropy = 0.0;
        if (moe_model_accuracy(model, N, X, D, y, NULL, &accuracy) != MOE_OK ||
            moe_model_cross_entropy(model, N, X, D, y, NULL, &cross_entropy) != MOE_OK)
            return fail("summaries");
        printf("%-4s %12.3f %8.1f%% %9.4f %6zu %10zu %10s\n", estimators[e], report.loglik,
               100.0 * accuracy, cross_entropy, report.iterations, report.gradient_evaluations,
               report.converged ? "yes" : "no");
        if (e == 0) {
            const double point[D] = {1.5, 1.0};
            double proba[C];
            if (moe_model_predict(model, 1, point, D, proba, C) != MOE_OK)
                return fail("moe_model_predict");
            printf("     P(y | x = (1.5, 1.0)) = %.3f %.3f %.3f\n", proba[0], proba[1], proba[2]);
        }
        moe_fitter_free(fitter);
        moe_model_free(model);
    }
    free(X);
    free(y);
    return EXIT_SUCCESS;
}
