/*
 * The expert-family interface. Each family (Gaussian, logistic, multinomial, Poisson, t)
 * implements these operations in its own file; estimators and the model code
 * reach experts only through this table.
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
    int update_variance;   /* zero: variances stay as they are */
    /* Classification experts: 0 inner_steps means the exact maximiser by Newton
       (max_newton steps, decrement tolerance `tolerance`); otherwise that many gradient
       steps of size `step` on the mean-scale surrogate (the inexact M-step). */
    size_t inner_steps;
    double step;
    size_t max_newton;
    double tolerance;
    size_t threads;        /* for passes over the data (see common/parallel.h) */
    int update_degrees;    /* t experts: nonzero estimates nu, zero keeps it */
} moe_expert_mstep_options;

/* What an expert M-step reports back. */
typedef struct moe_expert_mstep_report {
    size_t degenerate_experts;   /* experts left unchanged for vanishing weight */
    size_t ridge_fallbacks;      /* singular systems solved with an added ridge */
    size_t floored_variances;    /* variances raised to the floor */
    size_t newton_steps;         /* inner Newton or gradient steps taken */
    size_t line_search_failures; /* Newton steps that found no decrease */
    size_t separations;          /* experts whose weighted data were fitted perfectly
                                    (unpenalised optimum at infinity) */
} moe_expert_mstep_report;

#define MOE_EXPERT_MSTEP_REPORT_INIT { 0, 0, 0, 0, 0, 0 }

/*
 * An expert's terms of the observed information in coefficient form (information/): with
 * x~ a row's inputs, R free coefficient rows (n_classes - 1 for multinomial experts, else 1)
 * and E parameters of its own (the variance or squared scale, then the second parameter:
 * t's nu, Gamma's shape), the expert's complete-data score of the row is a_q x~ in
 * coefficient row q and b_e in parameter e, and minus its Hessian is h_qq' x~ x~' between
 * rows q and q', c_qe x~ between row q and parameter e, d_ee' between parameters. The
 * information needs only these scalars per row: its products with x~ x~' are formed once
 * for all of them, in blocks of rows (information/information_pass.c).
 */
typedef struct moe_information_shape {
    size_t R, E;
    /* Offsets of a, b, h (R x R, upper triangle by rows), c (R x E), d (E x E, upper
       triangle by rows) among the terms, and their count. */
    size_t a, b, h, c, d, count;
} moe_information_shape;

struct moe_family_ops {
    moe_family id;
    const char *name;
    const char *alias; /* another spelling moe_family_from_name accepts, or NULL */
    const char *description; /* one line for listings (moe_family_description) */
    int uses_classes; /* expert blocks have n_classes rows */
    int has_variance;
    int has_degrees;  /* K second parameters in model->degrees: t's nu, Gamma's shape */
    double default_degrees; /* their value in a new model */
    int numeric_response; /* y is a number to cluster on (Gaussian, Poisson), not a label */
    int takes_trials; /* binomial: a feature may hold the rows' trials (MOE_INPUT_TRIALS) */
    /* What moe_model_scale_kind reports (the public name of the per-expert parameters). */
    moe_scale_kind scale_kind;
    int (*supports_link)(moe_link link);
    /* Free parameters of one expert. */
    size_t (*expert_free_params)(const struct moe_model *model);
    /* Restore the family's constraints on an array of experts' coefficients before they are
       stored (may be NULL); nonzero, with the array unchanged, when that overflows. */
    int (*normalize_experts)(const struct moe_model *model, double *experts);
    /* Check the response values (and the features the family reads: binomial trials in
       X, n x ldx); the message names the first bad row. */
    moe_status (*check_response)(const struct moe_model *model, size_t n, const double *X,
                                 size_t ldx, const double *y, char *message);
    /* An expert's mean at linear predictor eta (moe_model_inverse_link); NULL when the
       experts have no one mean (multinomial). */
    double (*inverse_link)(const struct moe_model *model, double eta);
    /*
     * log f_k(y_i | x_i) for a block of `rows` rows by columns (common/columns.h) from
     * the experts' linear predictors (moe_expert_linear_columns' K * expert_rows x rows):
     * out is K x rows. columns is the block's design by columns (p x rows), for families
     * that read a column of it (binomial trials). scratch holds rows * K * expert_rows
     * doubles. The caller computes the predictors so that the E-step can get them and the
     * gate's logits from one product.
     */
    void (*log_density)(const struct moe_model *model, size_t rows, const double *columns,
                        const double *linear, const double *y, double *out, double *scratch);
    /*
     * Expert k's information terms (moe_information_shape) for a block of `rows` rows by
     * columns: terms is shape.count x rows, each term's values over the rows contiguous.
     * linear is the block's linear predictors as for log_density (every expert's), columns
     * the design by columns (p x rows) for families that read a column of it.
     */
    void (*information_terms)(const struct moe_model *model, size_t k, size_t rows,
                              const double *columns, const double *linear, const double *y,
                              double *terms);
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
    /*
     * Optional (NULL for families whose M-step is iterative): the M-step split into
     * sufficient statistics, which EM accumulates in the same pass as its E-step, and
     * their solve. statistics_size gives the doubles. The statistics begin with the K
     * weighted Gram matrices block' diag(weights[., k]) block (upper triangles, p x p
     * each), which the caller adds (moe_weighted_grams_add), so that they can share one
     * product with the caller's own Grams. accumulate_statistics adds the rest of a
     * block by columns: columns (p x rows) the design, weights (K x rows) w_i r_ik, linear
     * the linear predictors log_density was given (K x rows), work holds
     * moe_family_statistics_work(model, rows) doubles. solve_statistics is m_step's update from the sums (which it may
     * overwrite); data and resp are there for a second pass when the one-pass formula
     * cancels. statistics_size may return 0 for a model whose M-step has no such split
     * (a Gaussian model with a non-identity link): callers then use m_step, and ask
     * moe_family_has_statistics rather than test the pointer.
     */
    size_t (*statistics_size)(const struct moe_model *model);
    void (*accumulate_statistics)(const struct moe_model *model, size_t rows,
                                  const double *columns, const double *y, const double *weights,
                                  const double *linear, double *work, double *statistics);
    /*
     * Optional (NULL for other families): whether log f_k(y) = constants_k - inverses_k
     * e^2 / 2 with the residual e = y - linear_k (Gaussian experts, identity link). If so
     * it fills the K constants and inverses and returns 1, and the E-step may compute the
     * densities, and the residual parts of the statistics, inside its per-row loop
     * (pass/posterior_block.c), in place of log_density and accumulate_statistics: it
     * then hands accumulate_normal_statistics scaled = w r e (K x rows), and adds the
     * sums of w r and w r e^2 (K each) to sums[0..K) and sums[K..2K).
     */
    int (*normal_parts)(const struct moe_model *model, double *constants, double *inverses);
    void (*accumulate_normal_statistics)(const struct moe_model *model, size_t rows,
                                         const double *columns, const double *scaled,
                                         const double *sums, double *statistics);
    moe_status (*solve_statistics)(struct moe_model *model, const moe_data *data,
                                   const double *resp, double *statistics,
                                   const moe_expert_mstep_options *options,
                                   moe_expert_mstep_report *report, char *message);
    /*
     * Gradient of the experts' part of the mean-scale surrogate to be minimised,
     *   -(1/N) sum_i w_i sum_k r_ik log f_k(y_i | x_i) + moe_expert_penalty(ridge),
     * at the model's experts, N = total_weight. coefficients receives
     * K x expert_rows x p values (zero on reference rows); log_variances, for
     * families with variances, K values: the derivative in log sigma_k^2.
     * With r the posterior at the model this is the experts' part of the
     * gradient of the mean negative log-likelihood (Fisher identity).
     */
    moe_status (*gradient)(const struct moe_model *model, const moe_data *data, const double *resp,
                           double ridge, double total_weight, size_t threads,
                           double *coefficients, double *log_variances, char *message);
    /*
     * Optional (families with degrees of freedom, has_degrees): the derivative of the same
     * surrogate in log nu_k, K values, for gem and gd to step nu with the other parameters.
     */
    moe_status (*degrees_gradient)(const struct moe_model *model, const moe_data *data,
                                   const double *resp, double total_weight, size_t threads,
                                   double *log_degrees, char *message);
    /*
     * c such that the surrogate's curvature in one expert's coefficients is at
     * most c * lambda_max(E_w[x x']) (plus the ridge): 1/sigma^2_min for Gaussian,
     * 1/4 for logistic, 1/2 for multinomial experts (Boehning's bound). For Gaussian
     * experts with a non-identity link it bounds the Gauss-Newton part of the curvature
     * only (sigmoid 1/(16 sigma^2_min), ReLU 1/sigma^2_min; family_gaussian.c).
     */
    double (*curvature)(const struct moe_model *model);
    /*
     * Optional: the same c for families whose curvature has no bound without the data
     * (Poisson: the largest expected count on the rows). When present the safe steps use
     * it on the call's rows in place of curvature.
     */
    double (*data_curvature)(const struct moe_model *model, const moe_data *data);
    /*
     * Optional: what the default start search (kernels/start_search.c) does beyond
     * partitions of the rows, for families with second parameters. A family that nests
     * another (nested_family, with the same gate, experts and variances; t experts nest the
     * normal) sets its second parameters to the nested limit with nested_start (nu at
     * MOE_DEGREES_MAX); the search then runs the nested family's own search too, and its
     * end points start the fit as well, so that the fit is not below the nested family's.
     * start_variant sets variant v (0, 1, ...) of the second parameters in place and
     * returns 1, or returns 0 when there is no variant v: the search runs EM from each
     * variant of its best end points (kernels/start_variants.c) and the likelihood judges. t experts: the heavy tail on expert v, the others normal; a tail
     * taken by the wrong expert is an optimum of its own, which EM does not leave.
     */
    moe_family nested_family; /* 0: none */
    void (*nested_start)(struct moe_model *model);
    int (*start_variant)(struct moe_model *model, size_t variant);
};

const struct moe_family_ops *moe_family_lookup(moe_family family);

/* A new model of the family's nested family (nested_family) with the model's structure,
   gate, experts and variances (model/nested.c). */
moe_status moe_model_nested(struct moe_model **out, const struct moe_model *model);

/* target's gate, experts and variances from a model of its nested family, its second
   parameters at the nested limit (nested_start). */
void moe_model_from_nested(struct moe_model *target, const struct moe_model *nested);

/* The model's expert information terms: R, E and where each kind starts. */
moe_information_shape moe_information_shape_of(const struct moe_model *model);

/* Nonzero when the model's family sums one-pass M-step statistics for this model
   (statistics_size present and nonzero); otherwise the M-step is m_step. */
int moe_family_has_statistics(const struct moe_model *model);

/* Scratch of accumulate_statistics for a block of `rows` rows. */
size_t moe_family_statistics_work(const struct moe_model *model, size_t rows);

/* Linear predictors of every expert row for a block: out (rows x K*expert_rows) =
   block (rows x p) * experts'. Gaussian means, logistic logits, multinomial class logits. */
void moe_expert_linear(const struct moe_model *model, size_t rows, const double *block,
                       double *out);

/* The same for a block by columns: out (K*expert_rows x rows) = experts * columns (p x
   rows). */
void moe_expert_linear_columns(const struct moe_model *model, size_t rows,
                               const double *columns, double *out);

/* Whether expert k's total weight sum_i w_i r_ik (resp n x K) is above options->min_weight,
   so that its M-step runs; an expert below it is left as it is and counted as degenerate. */
int moe_expert_has_weight(const moe_data *data, const double *resp, size_t K, size_t k,
                          const moe_expert_mstep_options *options,
                          moe_expert_mstep_report *report);

/* predict of one-row experts whose mean is exp(log_mean(linear predictor)) (logistic:
   log sigma, Poisson: the predictor itself): out (rows) = sum_k pi_k(x) exp(log_mean(eta_k)),
   scratch rows x K. */
void moe_expert_mixture_mean(const struct moe_model *model, size_t rows, const double *block,
                             const double *gate_proba, double (*log_mean)(double), double *out,
                             double *scratch);

/* (ridge/2) * sum of squared non-intercept expert coefficients at the model's experts,
   the rows of a multinomial expert centred over its classes (so the reference class does
   not matter): the expert penalty of the mean-scale objective. */
double moe_expert_penalty(const struct moe_model *model, double ridge);

/* One row of a t expert (family_student.c) at residual e = y - beta' x~, nu and the squared
   scale v: log f, its score (in beta the factor of x~, in v, in nu) and the entries of -the
   Hessian (in beta beta' the factor of x~ x~', in beta v and beta nu the factors of x~). */
typedef struct moe_student_t_terms {
    double log_density;
    double score_location, score_scale, score_degrees;
    double location_location, location_scale, location_degrees;
    double scale_scale, scale_degrees, degrees_degrees;
} moe_student_t_terms;

void moe_student_t_row(double residual, double nu, double scale_squared,
                       moe_student_t_terms *out);


#endif
