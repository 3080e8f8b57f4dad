/*
 * What the logistic and multinomial families share: each expert is a weighted
 * softmax regression of the class label (pass/softmax.c), so their M-steps
 * and gradients are the same code with a different class coding.
 *
 *   logistic:    one stored row beta per expert; as a softmax problem it is
 *                C = 2 with rows [beta; 0] and label 1 on row 0; plain ridge
 *   multinomial: n_classes stored rows, the last one the zero reference;
 *                penalty centred over classes
 */
#ifndef MOE_LIB_FAMILY_CATEGORICAL_H
#define MOE_LIB_FAMILY_CATEGORICAL_H

#include "model/family.h"

/* log sigma(z) without overflow. */
double moe_log_sigmoid(double z);

moe_status moe_categorical_m_step(struct moe_model *model, const moe_data *data,
                                  const double *resp, const moe_expert_mstep_options *options,
                                  moe_expert_mstep_report *report, char *message);

moe_status moe_categorical_gradient(const struct moe_model *model, const moe_data *data,
                                    const double *resp, double ridge, double total_weight,
                                    size_t threads,
                                    double *coefficients, double *log_variances, char *message);

/* The observed information's terms of logistic or multinomial experts (family.h): the
   score (1[label = q] - m_q) x~ and minus the Hessian (1[q = q'] m_q - m_q m_q') x~ x~'. */
void moe_categorical_information_terms(const struct moe_model *model, size_t k, size_t rows,
                                      const double *columns, const double *linear,
                                      const double *y, double *terms);

#endif
