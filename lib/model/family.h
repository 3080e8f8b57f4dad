/*
 * The expert-family interface. Each family (Gaussian, later logistic and
 * multinomial) implements these operations in its own file; estimators and
 * the model code reach experts only through this table.
 */
#ifndef MOE_LIB_FAMILY_H
#define MOE_LIB_FAMILY_H

#include "common/data.h"
#include "model/model_impl.h"

/* What an expert M-step needs beyond the data and responsibilities. */
typedef struct moe_expert_mstep_options {
    double ridge;          /* penalty (ridge/2) ||beta without intercepts||^2, mean scale */
    double total_weight;   /* N: the penalty enters the sum-scale objective times N */
    double variance_floor; /* absolute lower bound on variances */
    double min_weight;     /* absolute total weight below which an expert is left as it is */
} moe_expert_mstep_options;

/* What an expert M-step reports back. */
typedef struct moe_expert_mstep_report {
    size_t degenerate_experts;  /* experts left unchanged for vanishing weight */
    size_t ridge_fallbacks;     /* singular systems solved with an added ridge */
    size_t floored_variances;   /* variances raised to the floor */
} moe_expert_mstep_report;

struct moe_family_ops {
    moe_family id;
    const char *name;
    int uses_classes; /* expert blocks have n_classes rows */
    int has_variance;
    int (*supports_link)(moe_link link);
    /* Free parameters of one expert. */
    size_t (*expert_free_params)(const struct moe_model *model);
    /* Restore the family's constraints after experts were set (may be NULL). */
    void (*normalize_experts)(struct moe_model *model);
    /* Check the response values; the message names the first bad row. */
    moe_status (*check_response)(const struct moe_model *model, size_t n, const double *y,
                                 char *message);
    /*
     * log f_k(y_i | x_i) for a block of `rows` design rows (rows x p): out is
     * rows x K. scratch holds rows * K * expert_rows doubles.
     */
    void (*log_density)(const struct moe_model *model, size_t rows, const double *block,
                        const double *y, double *out, double *scratch);
    /* Values per row returned by predict (1, or n_classes). */
    size_t (*prediction_width)(const struct moe_model *model);
    /*
     * Mixture prediction for a block given gate probabilities (rows x K):
     * out is rows x prediction_width. scratch as for log_density.
     */
    void (*predict)(const struct moe_model *model, size_t rows, const double *block,
                    const double *gate_proba, double *out, double *scratch);
    /*
     * M-step of every expert given responsibilities (n x K): it must not
     * decrease sum_i w_i sum_k r_ik log f_k(y_i) - N * moe_expert_penalty.
     * Leaves an expert unchanged when its total weight is below
     * options->min_weight.
     */
    moe_status (*m_step)(struct moe_model *model, const moe_data *data, const double *resp,
                         const moe_expert_mstep_options *options,
                         moe_expert_mstep_report *report, char *message);
};

const struct moe_family_ops *moe_family_lookup(moe_family family);

/* (ridge/2) * sum of squared non-intercept expert coefficients at the model's experts:
   the expert penalty of the mean-scale objective. */
double moe_expert_penalty(const struct moe_model *model, double ridge);

extern const struct moe_family_ops moe_family_gaussian;

#endif
