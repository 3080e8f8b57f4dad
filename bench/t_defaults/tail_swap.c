#include <moe/moe.h>
#include <stdio.h>
#include <stdlib.h>
/* read x,y csv */
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "r"); char line[256]; fgets(line, sizeof line, f);
    size_t n = 0, cap = 100000; double *X = malloc(cap * sizeof(double)), *Y = malloc(cap * sizeof(double));
    while (fscanf(f, "%lf,%lf", &X[n], &Y[n]) == 2) n++;
    moe_model_spec spec = MOE_MODEL_SPEC_INIT; spec.family = MOE_FAMILY_STUDENT_T; spec.n_experts = 2; spec.n_features = 1;
    moe_model_t *m; moe_model_create(&m, &spec);
    moe_fitter_t *fit; moe_fitter_create(&fit, "em"); moe_fitter_set_int(fit, MOE_OPT_SEED, 1);
    moe_fitter_fit(fit, m, n, X, 1, Y, NULL);
    double base; moe_model_loglik(m, n, X, 1, Y, NULL, &base);
    printf("default %.4f\n", base);
    for (int k = 0; k < 2; ++k) {
        moe_model_t *c; moe_model_clone(&c, m);
        double nu[2]; nu[k] = 1.0; nu[1 - k] = 1e6;
        moe_model_set_degrees(c, nu, 2);
        moe_fitter_t *g; moe_fitter_create(&g, "em"); moe_fitter_set_option(g, "init", "model");
        moe_fitter_fit(g, c, n, X, 1, Y, NULL);
        double l; moe_model_loglik(c, n, X, 1, Y, NULL, &l);
        printf("heavy on expert %d: %.4f\n", k, l);
        moe_fitter_free(g); moe_model_free(c);
    }
    return 0;
}
