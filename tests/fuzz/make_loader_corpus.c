/*
 * Writes the committed seed corpus of the loader harness (tests/fuzz/corpus/loader/): valid
 * models of every family and format version (1 to 3), with ordinary and extreme parameters, from which
 * the fuzzer's mutations start. Run by hand when the format changes:
 *
 *   build/tests/fuzz/make_loader_corpus tests/fuzz/corpus/loader
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moe/moe.h"

/* A call that must succeed: a corpus written from a half-set model would not be the one
   named. */
static void require(moe_status status, const char *what)
{
    if (status != MOE_OK) {
        fprintf(stderr, "%s: %s\n", what, moe_last_error());
        exit(1);
    }
}

static int save(const moe_model_t *model, const char *directory, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    moe_status status = moe_model_save(model, path);
    if (status != MOE_OK)
        fprintf(stderr, "%s: %s\n", path, moe_last_error());
    return status == MOE_OK ? 0 : 1;
}

static moe_model_t *make(moe_family family, size_t K, size_t d, size_t C, int intercept)
{
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.family = family;
    spec.n_experts = K;
    spec.n_features = d;
    spec.n_classes = C;
    spec.intercept = intercept;
    moe_model_t *model = NULL;
    if (moe_model_create(&model, &spec) != MOE_OK) {
        fprintf(stderr, "create: %s\n", moe_last_error());
        exit(1);
    }
    return model;
}

/* Parameters v(a) = scale * (a-th value of a fixed pattern). */
static void fill(moe_model_t *model, double scale)
{
    double values[256];
    for (size_t a = 0; a < 256; ++a)
        values[a] = scale * (double)((int)(a * 37 % 11) - 5) / 3.0;
    require(moe_model_set_gate(model, values, 256), "gate");
    require(moe_model_set_experts(model, values + 3, 253), "experts");
    double variances[16] = {0.5, 1.5, 0.25, 2.0, 0.75, 1.0, 3.0, 0.1,
                            0.5, 1.5, 0.25, 2.0, 0.75, 1.0, 3.0, 0.1};
    if (moe_model_family(model) == MOE_FAMILY_GAUSSIAN) /* the others have none */
        require(moe_model_set_variances(model, variances, 16), "variances");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
        return 2;
    }
    const char *directory = argv[1];
    int failures = 0;
    struct {
        const char *name;
        moe_family family;
        size_t K, d, C;
        int intercept;
        double scale;
    } cases[] = {
        {"gaussian-k1-d0", MOE_FAMILY_GAUSSIAN, 1, 0, 0, 1, 1.0},
        {"gaussian-k2-d1", MOE_FAMILY_GAUSSIAN, 2, 1, 0, 1, 1.0},
        {"gaussian-k3-d4", MOE_FAMILY_GAUSSIAN, 3, 4, 0, 1, 1.0},
        {"gaussian-k2-d2-nointercept", MOE_FAMILY_GAUSSIAN, 2, 2, 0, 0, 1.0},
        {"gaussian-k3-huge", MOE_FAMILY_GAUSSIAN, 3, 2, 0, 1, 1e150},
        {"gaussian-k2-extreme", MOE_FAMILY_GAUSSIAN, 2, 1, 0, 1, 1e307},
        {"logistic-k2-d1", MOE_FAMILY_LOGISTIC, 2, 1, 0, 1, 1.0},
        {"logistic-k4-d3", MOE_FAMILY_LOGISTIC, 4, 3, 0, 1, 1e17},
        {"multinomial-k2-d1-c3", MOE_FAMILY_MULTINOMIAL, 2, 1, 3, 1, 1.0},
        {"multinomial-k3-d2-c4", MOE_FAMILY_MULTINOMIAL, 3, 2, 4, 1, 1e148},
        {"multinomial-k1-d0-c2", MOE_FAMILY_MULTINOMIAL, 1, 0, 2, 1, 1.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        moe_model_t *model = make(cases[c].family, cases[c].K, cases[c].d, cases[c].C,
                                  cases[c].intercept);
        fill(model, cases[c].scale);
        failures += save(model, directory, cases[c].name);
        moe_model_free(model);
    }
    /* Format version 2: names. */
    moe_model_t *named = make(MOE_FAMILY_MULTINOMIAL, 2, 2, 3, 1);
    fill(named, 1.0);
    require(moe_model_set_name(named, MOE_NAME_FEATURE, 0, "age"), "feature 0");
    require(moe_model_set_name(named, MOE_NAME_FEATURE, 1, "income, net"), "feature 1");
    require(moe_model_set_name(named, MOE_NAME_RESPONSE, 0, "choice"), "response");
    require(moe_model_set_name(named, MOE_NAME_CLASS, 0, "bus"), "class 0");
    require(moe_model_set_name(named, MOE_NAME_CLASS, 2, "\xc3\xa9lectrique"), "class 2");
    failures += save(named, directory, "multinomial-names");
    moe_model_free(named);
    /* Format version 3: a gate and experts that see different inputs, and an offset. */
    static const unsigned char gate_sees[2] = {0, 1}, experts_see[2] = {1, 0};
    moe_model_spec spec = MOE_MODEL_SPEC_INIT;
    spec.n_features = 2;
    spec.gate_features = gate_sees;
    spec.expert_features = experts_see;
    moe_model_t *split = NULL;
    require(moe_model_create(&split, &spec), "split model");
    double gate[6] = {0.5, 0.0, -1.25, 0, 0, 0}, experts[6] = {1.0, 2.0, 0.0, -1.0, -1.5, 0.0};
    require(moe_model_set_gate(split, gate, 6), "split gate");
    require(moe_model_set_experts(split, experts, 6), "split experts");
    require(moe_model_set_name(split, MOE_NAME_FEATURE, 1, "z"), "split name");
    failures += save(split, directory, "gaussian-split-inputs");
    moe_model_free(split);
    spec.family = MOE_FAMILY_POISSON;
    spec.expert_features = NULL;
    spec.offset_feature = 1;
    spec.gate_intercept = 0;
    moe_model_t *offset = NULL;
    require(moe_model_create(&offset, &spec), "offset model");
    double rates[6] = {0.5, 1.0, 1.0, 1.5, -1.0, 1.0}, logits[6] = {0.0, 0.0, 2.0, 0, 0, 0};
    require(moe_model_set_gate(offset, logits, 6), "offset gate");
    require(moe_model_set_experts(offset, rates, 6), "offset experts");
    failures += save(offset, directory, "poisson-offset");
    moe_model_free(offset);
    return failures == 0 ? 0 : 1;
}
