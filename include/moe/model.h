/*
 * libmoe: the model handle.
 *
 *   p(y | x) = sum_k pi_k(x) f_k(y | x),   pi(x) = softmax(W x~),  x~ = [1, x] or x
 *
 * A moe_model_t holds the structure (family, number of experts, features,
 * intercept) and the parameters. It is opaque; parameters are read and
 * written through caller buffers.
 *
 * Data conventions for every function below:
 *   - X is row-major, n rows of n_features values, row i starting at
 *     X[i * ldx]; ldx >= n_features.
 *   - y holds one value per row; class labels are integral values.
 *   - weights, where accepted, may be NULL (all ones); otherwise n values,
 *     finite and >= 0 (MOE_ERR_NEGATIVE_WEIGHT, MOE_ERR_NON_FINITE), not all
 *     zero (MOE_ERR_INVALID_ARGUMENT). They act as frequency weights.
 *   - Nothing the caller passes is modified or retained.
 *
 * Parameter layout ("inputs" p = n_features + 1 with an intercept, whose
 * coefficient comes first, else p = n_features):
 *   - gate: n_experts rows of p values, row-major. The last expert is the
 *     reference: its row is always zero. Setting a gate subtracts the last
 *     row from every row, which leaves the model unchanged.
 *   - experts: n_experts blocks of moe_model_expert_rows() rows of p values.
 *     Gaussian, logistic and Poisson experts have one row (the regression
 *     coefficients); multinomial experts have n_classes rows with the last
 *     class as reference (zero row).
 *   - variances: n_experts values (Gaussian and Student-t families only; for
 *     Student-t experts the squared scale sigma_k^2, not the variance).
 *   - degrees: n_experts values, Student-t experts only: the degrees of
 *     freedom nu_k (moe_model_get_degrees, since 1.1).
 *
 * Thread safety: functions taking a const model may be called from several
 * threads on the same model at once; functions taking a mutable model need
 * exclusive access to it.
 */
#ifndef MOE_MODEL_H
#define MOE_MODEL_H

#include <stddef.h>
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Expert families. Values are part of the ABI. */
typedef enum moe_family {
    MOE_FAMILY_GAUSSIAN = 1,   /* y real, N(g(beta_k' x~), sigma_k^2), g the link */
    MOE_FAMILY_LOGISTIC = 2,   /* y in {0, 1}: P(y = 1 | expert k) = sigma(beta_k' x~) */
    MOE_FAMILY_MULTINOMIAL = 3, /* y in {0, ..., C-1}: P(y = c | expert k) = softmax_c(B_k x~) */
    MOE_FAMILY_POISSON = 4,     /* since 1.1: y in {0, 1, 2, ...}, Poisson with log link:
                                   E[y | expert k] = exp(beta_k' x~) */
    MOE_FAMILY_STUDENT_T = 5,   /* since 1.1: y real, y = beta_k' x~ + sigma_k e with e
                                   Student-t with nu_k degrees of freedom (identity link);
                                   name "t" */
    MOE_FAMILY_BINOMIAL = 6,    /* since 1.2: y successes out of n_i trials (the spec's
                                   trials_feature; 1 without it), logit link:
                                   P(success | expert k) = sigma(beta_k' x~) */
    MOE_FAMILY_GAMMA = 7        /* since 1.2: y > 0, Gamma with log link and shape alpha_k:
                                   E[y | expert k] = exp(beta_k' x~), variance mean^2 / alpha_k
                                   (the shapes are held where t experts hold nu) */
} moe_family;

/* Since 1.2: the families this library knows, in enum order, and the one at
   `index` (0 when index >= moe_family_count()), for listings that should grow with the
   library (moe --help, the bindings). */
MOE_API size_t moe_family_count(void);
MOE_API moe_family moe_family_at(size_t index);
/* Since 1.2: one line on what a family fits, for listings; NULL outside the enum. */
MOE_API const char *moe_family_description(moe_family family);

/*
 * Link of the Gaussian expert mean: expert k's mean is g(beta_k' x~). Gaussian experts
 * take any of the three; the classification families only the identity (their own
 * logistic or softmax is part of the family). predict returns sum_k pi_k(x) g(beta_k' x~),
 * and the log-likelihood, posterior and criteria use the same mean. The estimators em,
 * gem and gd fit every link; for sigmoid and ReLU the expert M-step is iterative
 * (docs/ARCHITECTURE.md). Values are part of the ABI.
 */
typedef enum moe_link {
    MOE_LINK_IDENTITY = 0, /* g(t) = t */
    MOE_LINK_SIGMOID = 1,  /* g(t) = 1 / (1 + exp(-t)): a mean in (0, 1) */
    MOE_LINK_RELU = 2      /* g(t) = max(0, t); derivative taken as 0 at t = 0 */
} moe_link;

/*
 * Since 1.2: what a family's experts hold besides their coefficients (the arrays of
 * moe_model_get_variances and moe_model_get_degrees), so that a summary or plot needs no
 * list of families.
 */
typedef enum moe_scale_kind {
    MOE_SCALE_NONE = 0,     /* nothing: logistic, multinomial, Poisson, binomial */
    MOE_SCALE_VARIANCE = 1, /* variances sigma_k^2: Gaussian */
    MOE_SCALE_STUDENT = 2,  /* squared scales sigma_k^2 (variances) and degrees of freedom
                               nu_k (degrees): t */
    MOE_SCALE_SHAPE = 3     /* a shape per expert (degrees), no variance: a family whose
                               variance is a function of its mean (1.2: Gamma) */
} moe_scale_kind;

/* Lower-case names of families ("gaussian", "logistic", "multinomial", "poisson", "t",
   "binomial") and
   links ("identity", "sigmoid", "relu"), as the CLI, the bindings and the
   model files' text forms spell them; NULL for a value outside the enum. */
MOE_API const char *moe_family_name(moe_family family);
MOE_API const char *moe_link_name(moe_link link);
/* The value of a name above (exact, lower case; "student_t" is also accepted for "t");
   MOE_ERR_NOT_FOUND otherwise. */
MOE_API moe_status moe_family_from_name(const char *name, moe_family *family);
MOE_API moe_status moe_link_from_name(const char *name, moe_link *link);
/*
 * Versioned model description. Always initialise with MOE_MODEL_SPEC_INIT
 * (or moe_model_spec_init) and then set fields, so that code compiled
 * against this header keeps working when later versions append fields.
 */
#define MOE_MODEL_SPEC_VERSION 3
/* Limits (MOE_ERR_INVALID_ARGUMENT beyond them), which keep every size product far from
   overflow: at most 4096 experts, 2^24 features, 65536 classes, and 2^31 expert
   coefficients (experts x classes x inputs). */
typedef struct moe_model_spec {
    unsigned int version; /* MOE_MODEL_SPEC_VERSION */
    moe_family family;    /* default MOE_FAMILY_GAUSSIAN */
    size_t n_experts;     /* K >= 1; default 2 */
    size_t n_features;    /* d >= 1 (d = 0 allowed with an intercept); default 1 */
    int intercept;        /* nonzero: x~ = [1, x]; default 1 */
    size_t n_classes;     /* multinomial only (>= 2); 0 otherwise */
    moe_link link;        /* Gaussian only; default MOE_LINK_IDENTITY */
    /*
     * Since 1.1 (version 2): which columns of the design feed the gate and which the
     * experts. X stays the whole design (n x d) at every entry point; each part sees the
     * features whose byte is nonzero (an array of n_features bytes; NULL: every feature)
     * and the intercept when `intercept` is set and its flag below is nonzero. The sets
     * may overlap, be equal or be disjoint; the experts may see the intercept alone (a
     * mixture of means, or of rates, with covariate-dependent weights). Each part must see
     * at least one input. A coefficient of an input its part does not see is held at
     * zero: the parameter arrays keep their K x p shape (p = n_features + intercept), the
     * setters refuse a nonzero value there, and the information and standard errors leave
     * those coefficients out (moe_model_n_free_params counts only what is estimated). The
     * model copies the arrays; moe_model_get_spec returns pointers to the model's copies
     * (valid while the model lives), or NULL for "every feature".
     */
    const unsigned char *gate_features;
    const unsigned char *expert_features;
    int gate_intercept;   /* default 1 */
    int expert_intercept; /* default 1 */
    /*
     * A feature that enters every expert's linear predictor with its coefficient fixed at
     * one: the log exposure of Poisson experts (rate = exposure x exp(beta' x~)), or any
     * known offset of Gaussian, Student-t or logistic experts (not multinomial). The
     * experts cannot otherwise see it (its expert_features byte is ignored, and
     * moe_model_get_spec reports it as 2); the gate may. Its coefficient reads back as 1 from moe_model_get_experts
     * and must be 1 for moe_model_set_experts. -1 (the default): no offset.
     */
    long offset_feature;
    /*
     * Since 1.2 (version 3): binomial experts only, the feature that holds each row's number
     * of trials n_i (a count; y is the successes among them, 0 <= y <= n_i). Neither the
     * gate nor the experts see it (its bytes above are ignored; moe_model_get_spec reports
     * it as 0 in the gate's and 3 in the experts') and its coefficients read back as 0.
     * -1 (the default): one trial a row (the Bernoulli likelihood, y in {0, 1}).
     */
    long trials_feature;
} moe_model_spec;

#define MOE_MODEL_SPEC_INIT                                                                  \
    { MOE_MODEL_SPEC_VERSION, MOE_FAMILY_GAUSSIAN, 2, 1, 1, 0, MOE_LINK_IDENTITY, NULL, NULL, 1, \
      1, -1, -1 }

/* Fill *spec with the defaults of the given spec version. */
MOE_API moe_status moe_model_spec_init(moe_model_spec *spec, unsigned int version);

typedef struct moe_model moe_model_t;

/*
 * Create a model with neutral parameters: zero gate (equal weights), zero
 * expert coefficients, unit variances.
 */
MOE_API moe_status moe_model_create(moe_model_t **out, const moe_model_spec *spec);
/* Free a model; NULL is a no-op. */
MOE_API void moe_model_free(moe_model_t *model);
/* Deep copy. */
MOE_API moe_status moe_model_clone(moe_model_t **out, const moe_model_t *model);

/*
 * Copy the parameters (gate, experts, variances; not the names) of `source`
 * into `target`, a model of the same structure (family, link, experts,
 * features, classes, intercept), else MOE_ERR_DIMENSION with target
 * unchanged. Exact: the values are copied, not re-referenced.
 */
MOE_API moe_status moe_model_copy_parameters(moe_model_t *target, const moe_model_t *source);
/* Message of the last failing call that modified this model; "" if none. */
MOE_API const char *moe_model_last_error(const moe_model_t *model);

/* Structure getters. Each returns 0 (or the zero value) for a NULL model. */
MOE_API moe_family moe_model_family(const moe_model_t *model);
MOE_API moe_link moe_model_link(const moe_model_t *model);
MOE_API size_t moe_model_n_experts(const moe_model_t *model);
MOE_API size_t moe_model_n_features(const moe_model_t *model);
MOE_API size_t moe_model_n_classes(const moe_model_t *model);
MOE_API int moe_model_has_intercept(const moe_model_t *model);
/* p: n_features + (intercept ? 1 : 0). */
MOE_API size_t moe_model_n_inputs(const moe_model_t *model);
/* Rows per expert block: 1, or n_classes for multinomial experts. */
MOE_API size_t moe_model_expert_rows(const moe_model_t *model);
/* Values per row that moe_model_predict writes: n_classes for multinomial
   experts, else 1; 0 for a NULL model. */
MOE_API size_t moe_model_prediction_width(const moe_model_t *model);
/* Number of free parameters (gate reference row and reference classes excluded). */
MOE_API size_t moe_model_n_free_params(const moe_model_t *model);
/* The structure as a spec (spec->version selects how many fields are written). */
MOE_API moe_status moe_model_get_spec(const moe_model_t *model, moe_model_spec *spec);

/* Since 1.2: what each input of the design (intercept first) is to a part of the model. */
typedef enum moe_model_part {
    MOE_PART_GATE = 0,
    MOE_PART_EXPERTS = 1
} moe_model_part;

typedef enum moe_input_role {
    MOE_INPUT_UNSEEN = 0, /* not seen: its coefficients are held at 0 */
    MOE_INPUT_FREE = 1,   /* seen and estimated */
    MOE_INPUT_OFFSET = 2, /* the experts' offset: coefficient held at 1 */
    MOE_INPUT_TRIALS = 3  /* binomial experts' trials: coefficient held at 0 */
} moe_input_role;

/* Since 1.2: the role (moe_input_role) of each of the p = moe_model_n_inputs inputs for the
   gate or the experts into roles (length >= p, else MOE_ERR_DIMENSION). */
MOE_API moe_status moe_model_get_inputs(const moe_model_t *model, moe_model_part part,
                                        unsigned char *roles, size_t length);
/* Since 1.2: the kind of the model's per-expert parameters besides the coefficients. */
MOE_API moe_scale_kind moe_model_scale_kind(const moe_model_t *model);
/*
 * Since 1.2: an expert's mean at linear predictors eta = beta_k' x~ (n values; out may be
 * linear): the Gaussian link g(eta), t's eta, the probability of class 1 sigma(eta) for
 * logistic experts, the success probability sigma(eta) for binomial ones, exp(eta) for
 * Poisson experts. Multinomial experts have no one mean: MOE_ERR_UNSUPPORTED.
 */
MOE_API moe_status moe_model_inverse_link(const moe_model_t *model, size_t n,
                                          const double *linear, double *out);

/*
 * Parameter access. `length` is the number of doubles the buffer holds; it
 * must be at least the size documented above (n_experts * p for the gate,
 * n_experts * expert_rows * p for the experts, n_experts for variances),
 * else MOE_ERR_DIMENSION. Setters reject non-finite values and variances
 * <= 0, and (MOE_ERR_NON_FINITE) a gate or multinomial expert whose
 * re-referencing (row minus the reference row) overflows; on error the
 * model is unchanged.
 */
MOE_API moe_status moe_model_get_gate(const moe_model_t *model, double *gate, size_t length);
MOE_API moe_status moe_model_set_gate(moe_model_t *model, const double *gate, size_t length);
MOE_API moe_status moe_model_get_experts(const moe_model_t *model, double *coefficients,
                                         size_t length);
MOE_API moe_status moe_model_set_experts(moe_model_t *model, const double *coefficients,
                                         size_t length);
MOE_API moe_status moe_model_get_variances(const moe_model_t *model, double *variances,
                                           size_t length);
MOE_API moe_status moe_model_set_variances(moe_model_t *model, const double *variances,
                                           size_t length);

/*
 * Since 1.1. Degrees of freedom nu_k of Student-t experts (n_experts values),
 *   log f_k(y | x) = lgamma((nu+1)/2) - lgamma(nu/2) - log(pi nu sigma^2)/2
 *                    - (nu+1)/2 log(1 + (y - beta_k' x~)^2 / (nu sigma^2)).
 * A new model holds nu_k = 4 (Lange, Little and Taylor's robust default). Values must lie
 * in [MOE_DEGREES_MIN, MOE_DEGREES_MAX] (MOE_ERR_INVALID_ARGUMENT otherwise, non-finite
 * values MOE_ERR_NON_FINITE); as nu grows the expert tends to a Gaussian one with variance
 * sigma^2. em estimates nu (ECME: each nu maximises the t log-likelihood given the posterior)
 * unless the fitter's MOE_OPT_UPDATE_DEGREES is 0, when it keeps the values set here. The
 * default start search (init = mixed) then also starts from the Gaussian fit's end points
 * and from the heavy tail on each expert in turn (docs/ARCHITECTURE.md, "Default starts"). Other families: MOE_ERR_UNSUPPORTED. Lengths as above; on
 * error the model is unchanged.
 */
#define MOE_DEGREES_MIN 0.1
#define MOE_DEGREES_MAX 1e6
MOE_API moe_status moe_model_get_degrees(const moe_model_t *model, double *degrees,
                                         size_t length);
MOE_API moe_status moe_model_set_degrees(moe_model_t *model, const double *degrees,
                                         size_t length);

/*
 * Names carried by the model and saved with it (format version 2): a name for
 * each feature (index < n_features), for the response (index 0) and for each
 * class label (index < n_classes for multinomial experts, < 2 for logistic:
 * the labels the numeric classes 0..C-1 stand for). Names are optional; a
 * model without any saves in format version 1. A name is 1 to MOE_NAME_MAX
 * bytes (any bytes but NUL; UTF-8 is recommended).
 *   set: copies `name`; NULL removes it. MOE_ERR_INVALID_ARGUMENT for an
 *        unknown kind, an index out of range or a name of bad length.
 *   get: the stored name, or NULL when unset, out of range or model is NULL;
 *        valid until the name is set again or the model is freed.
 */
#define MOE_NAME_MAX 1024
typedef enum moe_name_kind {
    MOE_NAME_FEATURE = 0,
    MOE_NAME_RESPONSE = 1,
    MOE_NAME_CLASS = 2
} moe_name_kind;

MOE_API moe_status moe_model_set_name(moe_model_t *model, moe_name_kind kind, size_t index,
                                      const char *name);
MOE_API const char *moe_model_get_name(const moe_model_t *model, moe_name_kind kind,
                                       size_t index);

/*
 * Prediction. `out` must hold `out_length` doubles:
 *   predict:     Gaussian: n values of E[y | x]; logistic: n values of
 *                P(y = 1 | x); multinomial: n * n_classes values, row-major,
 *                P(y = c | x); Poisson: n values of the mean count
 *                E[y | x] = sum_k pi_k(x) exp(beta_k' x~); binomial (1.2): n values
 *                of the success probability sum_k pi_k(x) sigma(beta_k' x~) (times a
 *                row's trials it is the expected count)
 *   gate_proba:  n * n_experts values, row-major, pi_k(x_i)
 *   posterior:   n * n_experts values, P(expert k | x_i, y_i)
 * posterior, loglik and the criteria return MOE_ERR_NUMERICAL when some row
 * has zero or non-finite likelihood under every expert, and every function
 * here when a gate logit or expert predictor overflows (parameters near the
 * largest double) or a sum over rows does. The output buffer is checked
 * before X is read.
 */
MOE_API moe_status moe_model_predict(const moe_model_t *model, size_t n, const double *X,
                                     size_t ldx, double *out, size_t out_length);
MOE_API moe_status moe_model_gate_proba(const moe_model_t *model, size_t n, const double *X,
                                        size_t ldx, double *out, size_t out_length);
MOE_API moe_status moe_model_posterior(const moe_model_t *model, size_t n, const double *X,
                                       size_t ldx, const double *y, double *out,
                                       size_t out_length);

/*
 * Hard assignments, one per row (out holds n values):
 *   classify: the most probable class under the mixture's predictive
 *             distribution, the rule of moe_model_accuracy (logistic:
 *             1 when P(y = 1 | x) > 1/2; multinomial: argmax, ties to the
 *             lower class). Classification families only
 *             (MOE_ERR_UNSUPPORTED for Gaussian).
 *   cluster:  the expert of largest posterior P(k | x_i, y_i), or with y
 *             NULL of largest gate probability pi_k(x_i); ties to the lower
 *             expert.
 */
MOE_API moe_status moe_model_classify(const moe_model_t *model, size_t n, const double *X,
                                      size_t ldx, size_t *classes, size_t length);
MOE_API moe_status moe_model_cluster(const moe_model_t *model, size_t n, const double *X,
                                     size_t ldx, const double *y, size_t *experts,
                                     size_t length);
/* Total (weighted) log-likelihood sum_i w_i log p(y_i | x_i). */
MOE_API moe_status moe_model_loglik(const moe_model_t *model, size_t n, const double *X,
                                    size_t ldx, const double *y, const double *weights,
                                    double *loglik);

/*
 * Mean negative log-likelihood -(1/N) sum_i w_i log p(y_i | x_i), N the sum of
 * the weights: for the classification families, the cross-entropy of the
 * mixture's predictive distribution against the labels. Any family.
 */
MOE_API moe_status moe_model_cross_entropy(const moe_model_t *model, size_t n, const double *X,
                                           size_t ldx, const double *y, const double *weights,
                                           double *cross_entropy);

/*
 * Weighted share of rows whose most probable class under the mixture's
 * predictive distribution equals y (logistic: P(y = 1 | x) > 1/2; multinomial:
 * argmax_c, ties to the lower class). Classification families only
 * (MOE_ERR_UNSUPPORTED for Gaussian).
 */
MOE_API moe_status moe_model_accuracy(const moe_model_t *model, size_t n, const double *X,
                                      size_t ldx, const double *y, const double *weights,
                                      double *accuracy);

/*
 * Information criteria, "smaller is better" convention:
 *   aic = -2 loglik + 2 n_params
 *   bic = -2 loglik + n_params log(n_obs)
 *   icl = bic + 2 * entropy,  entropy = -sum_i w_i sum_k r_ik log r_ik
 * n_obs is the sum of the weights (n without weights).
 */
#define MOE_CRITERIA_VERSION 1
typedef struct moe_criteria {
    unsigned int version; /* set to MOE_CRITERIA_VERSION before the call */
    double loglik;
    double n_params;
    double n_obs;
    double aic;
    double bic;
    double icl;
    double entropy;
} moe_criteria;

#define MOE_CRITERIA_INIT { MOE_CRITERIA_VERSION, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 }
/* The same for bindings that cannot use macros: *criteria zeroed with the given version
   (1 .. MOE_CRITERIA_VERSION; MOE_ERR_UNSUPPORTED otherwise). */
MOE_API moe_status moe_criteria_init(moe_criteria *criteria, unsigned int version);

MOE_API moe_status moe_model_criteria(const moe_model_t *model, size_t n, const double *X,
                                      size_t ldx, const double *y, const double *weights,
                                      moe_criteria *criteria);

/*
 * Put the experts in canonical order (by first coefficient row, then by
 * variance) and re-reference the gate to the last expert. Fitters do this
 * after every fit. Predictions change only by the rounding of the
 * re-referenced gate rows: each row becomes its difference from the new
 * reference row, rounded once, which moves a logit by about 2^-52 times
 * max_k |w_k|.|x~| - negligible unless gate coefficients are so large that
 * their rounding error is comparable to the logit differences that decide
 * the gate. MOE_ERR_NUMERICAL, with the model unchanged, when such a
 * difference overflows.
 */
MOE_API moe_status moe_model_canonicalize(moe_model_t *model);

/*
 * The observed information of the free parameters on data (the negative Hessian of the
 * weighted log-likelihood, exact: Louis' identity row by row), and its inverse, the
 * asymptotic covariance of the maximum-likelihood estimate: standard errors are the roots
 * of its diagonal. P = moe_model_n_free_params(model) parameters, in this order: the gate's
 * free rows ((K - 1) x p, the last expert the reference), the experts' free rows (K x R x p,
 * R = 1, or classes - 1 for multinomial experts, the last class the reference), then the K
 * variances of Gaussian experts (sigma_k^2 itself, not its logarithm), or for Student-t
 * experts (since 1.1) their K squared scales sigma_k^2 and then their K degrees of freedom
 * nu_k (nu itself); p = inputs, intercept first. A model whose gate or experts see only
 * some inputs (spec version 2) leaves the held coefficients out: each gate row has only
 * the inputs the gate sees, each expert row only those the experts estimate (the offset is
 * not estimated), in the same order. out holds P x P values
 * (row-major, symmetric). Unpenalised: for a fit with gate_l2 or expert_ridge it is the
 * information of the likelihood alone (the _penalized variants below include the penalty).
 * Every family; Gaussian experts with the identity link only, at most 64 experts and at
 * most 256 classes (MOE_ERR_UNSUPPORTED otherwise). The t entries in nu are analytic
 * (trigamma included), but for large nu (beyond about 1e4) the likelihood is nearly flat in
 * nu and those entries are mostly rounding. nu is always in the layout, also when the fit
 * held it fixed (the fitter's update_degrees = 0) or it stopped at MOE_DEGREES_MIN or
 * MOE_DEGREES_MAX: nu is then not at a maximum, and moe_model_vcov may fail or give
 * meaningless nu entries. For the covariance of the other parameters given nu, take
 * moe_model_information, delete the last K rows and columns and invert the rest.
 * moe_model_vcov returns
 * MOE_ERR_NUMERICAL with a message when the information is not positive definite (an
 * expert without data, separation, or parameters that are not a maximum), never a matrix
 * of garbage.
 */
MOE_API moe_status moe_model_information(const moe_model_t *model, size_t n, const double *X,
                                         size_t ldx, const double *y, const double *weights,
                                         double *information, size_t length);
MOE_API moe_status moe_model_vcov(const moe_model_t *model, size_t n, const double *X, size_t ldx,
                                  const double *y, const double *weights, double *covariance,
                                  size_t length);

/*
 * The same for a fit with penalties: the negative Hessian of the objective the fitters
 * maximise (include/moe/fitter.h, "The objective"), i.e. the information above plus N times
 * the penalty's Hessian, N the sum of the weights (n without weights). On every
 * non-intercept input that is gate_l2 * N * (I - 11'/K) over the gate's K - 1 free rows
 * (the penalty is centred over the experts, the reference row fixed at 0), expert_ridge * N
 * on each Gaussian, logistic, Poisson or t expert's coefficient, and expert_ridge * N * (I - 11'/C) over
 * a multinomial expert's C - 1 free class rows; intercepts, variances and nu are not
 * penalised.
 * Pass the gate_l2 and expert_ridge the model was fitted with. The inverse is the Laplace
 * covariance of the penalised estimate (the penalty read as a Gaussian prior); it ignores
 * the penalty's bias, and the frequentist sandwich V I V (V this inverse, I the unpenalised
 * information) can be formed from the two. Zero penalties give exactly
 * moe_model_information / moe_model_vcov.
 * gate_l2 and expert_ridge must be finite and at least 0 (MOE_ERR_INVALID_ARGUMENT); other
 * errors as above.
 */
MOE_API moe_status moe_model_information_penalized(const moe_model_t *model, size_t n,
                                                   const double *X, size_t ldx, const double *y,
                                                   const double *weights, double gate_l2,
                                                   double expert_ridge, double *information,
                                                   size_t length);
MOE_API moe_status moe_model_vcov_penalized(const moe_model_t *model, size_t n, const double *X,
                                            size_t ldx, const double *y, const double *weights,
                                            double gate_l2, double expert_ridge,
                                            double *covariance, size_t length);

/*
 * Persistence. The format is portable (little-endian IEEE-754, fixed-width
 * integers), versioned and protected by a CRC-32; loaders check every byte
 * and return MOE_ERR_FORMAT for anything that is not a valid model.
 *
 * moe_model_save_buffer follows the buffer convention of moe/common.h:
 * *written receives the size of the serialized model; buffer NULL with
 * capacity 0 asks for that size (MOE_OK); a smaller capacity is
 * MOE_ERR_BUFFER_TOO_SMALL and writes nothing.
 *
 * moe_model_save writes the file the way the path already is:
 *   - nothing there: a new regular file, mode 0666 less the umask (as fopen);
 *   - a regular file: replaced atomically. The model goes to a temporary
 *     file "PATH.tmpXXXXXXXX" (8 hex digits) next to it, which is flushed to
 *     disk, given the old file's mode and, where the process may set them,
 *     its owner and group, then renamed over it. Other metadata (ACLs,
 *     extended attributes) is not carried over. A failed save leaves the old
 *     file as it was and removes the temporary file; only a process killed
 *     during the save can leave the temporary file behind (the old file is
 *     intact; delete the temporary file);
 *   - a regular file with several hard links: rewritten in place, so every
 *     name sees the new model. This is not atomic: space is reserved first,
 *     so a full disk or a file size limit leaves the file as it was, but a
 *     write error or a kill part way leaves a damaged file (which the loader
 *     rejects by its checksum);
 *   - a symbolic link, or a chain of them: followed to the file it names,
 *     which is saved as above (created if missing); the link stays a link;
 *   - a FIFO or a device (/dev/null, /dev/full, ...): opened and written
 *     straight through, never replaced. Opening a FIFO waits for a reader; a
 *     write error (/dev/full: no space) is MOE_ERR_IO;
 *   - a path under /dev/ or /proc/, or a link through them (/dev/stdout is
 *     /proc/self/fd/1, whatever the process has open there: a pipe, a
 *     terminal, a file the shell truncated): opened as fopen(path, "w")
 *     would, and written, never replaced;
 *   - a directory: MOE_ERR_IO.
 * A file that cannot be written is MOE_ERR_IO, with a message naming it.
 */
MOE_API moe_status moe_model_save(const moe_model_t *model, const char *path);
MOE_API moe_status moe_model_load(moe_model_t **out, const char *path);
MOE_API moe_status moe_model_save_buffer(const moe_model_t *model, void *buffer,
                                         size_t capacity, size_t *written);
MOE_API moe_status moe_model_load_buffer(moe_model_t **out, const void *buffer, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MOE_MODEL_H */
