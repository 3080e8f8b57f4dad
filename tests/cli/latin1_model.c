/*
 * Writes a model whose names are not UTF-8 (Latin-1 bytes, as a program other than
 * the moe tool may save through the library), so test_cli.sh can check that moe info
 * --json and moe plot still write valid JSON and well-formed SVG for it.
 *
 *   latin1_model OUT.moe
 * Gaussian, K = 2, one feature named "gr\xf6\xdfe" (Latin-1 "größe"), the response
 * "y\xe9".
 */
#include <moe/moe.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: latin1_model OUT.moe\n");
        return 2;
    }
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = MOE_FAMILY_GAUSSIAN;
    spec.n_experts = 2;
    spec.n_features = 1;
    moe_model_t *model = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK ||
        moe_model_set_name(model, MOE_NAME_FEATURE, 0, "gr\xf6\xdf" "e") != MOE_OK ||
        moe_model_set_name(model, MOE_NAME_RESPONSE, 0, "y\xe9") != MOE_OK ||
        moe_model_save(model, argv[1]) != MOE_OK) {
        fprintf(stderr, "latin1_model: %s\n", moe_last_error());
        moe_model_free(model);
        return 1;
    }
    moe_model_free(model);
    return 0;
}
