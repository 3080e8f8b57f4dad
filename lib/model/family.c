#include "model/family.h"

#include "common/linalg.h"
#include "common/combine.h"

void moe_expert_linear(const struct moe_model *model, size_t rows, const double *block,
                       double *out)
{
    size_t columns = model->n_experts * model->expert_rows;
    moe_product_abt(rows, columns, model->n_inputs, block, model->experts, out);
}

void moe_expert_linear_columns(const struct moe_model *model, size_t rows,
                               const double *columns, double *out)
{
    size_t width = model->n_experts * model->expert_rows;
    moe_product_ab(width, rows, model->n_inputs, model->experts, columns, out);
}

int moe_expert_has_weight(const moe_data *data, const double *resp, size_t K, size_t k,
                          const moe_expert_mstep_options *options,
                          moe_expert_mstep_report *report)
{
    double total = 0.0;
    for (size_t i = 0; i < data->n; ++i)
        total += moe_data_weight(data, i) * resp[i * K + k];
    char ignored[MOE_MESSAGE_SIZE]; /* a failed request fails the fit's next one */
    moe_combine_sums(&total, 1, ignored);
    if (total > options->min_weight)
        return 1;
    report->degenerate_experts++;
    return 0;
}

void moe_expert_mixture_mean(const struct moe_model *model, size_t rows, const double *block,
                             const double *gate_proba, double (*log_mean)(double), double *out,
                             double *scratch)
{
    size_t K = model->n_experts;
    moe_expert_linear(model, rows, block, scratch);
    for (size_t i = 0; i < rows; ++i) {
        double sum = 0.0;
        for (size_t k = 0; k < K; ++k)
            sum += gate_proba[i * K + k] * moe_exp(log_mean(scratch[i * K + k]));
        out[i] = sum;
    }
}

moe_information_shape moe_information_shape_of(const struct moe_model *model)
{
    const struct moe_family_ops *ops = model->family_ops;
    moe_information_shape shape;
    shape.R = ops->uses_classes ? model->n_classes - 1 : 1;
    shape.E = (size_t)(ops->has_variance != 0) + (size_t)(ops->has_degrees != 0);
    shape.a = 0;
    shape.b = shape.R;
    shape.h = shape.b + shape.E;
    shape.c = shape.h + shape.R * (shape.R + 1) / 2;
    shape.d = shape.c + shape.R * shape.E;
    shape.count = shape.d + shape.E * (shape.E + 1) / 2;
    return shape;
}

int moe_family_has_statistics(const struct moe_model *model)
{
    return model->family_ops->statistics_size != NULL &&
           model->family_ops->statistics_size(model) > 0;
}

size_t moe_family_statistics_work(const struct moe_model *model, size_t rows)
{
    return rows * model->n_experts;
}

double moe_expert_penalty(const struct moe_model *model, double ridge)
{
    if (ridge == 0.0)
        return 0.0;
    size_t p = model->n_inputs, rows = model->expert_rows;
    double sum = 0.0;
    for (size_t k = 0; k < model->n_experts; ++k) {
        const double *block = model->experts + k * rows * p;
        for (size_t j = (size_t)model->intercept; j < p; ++j) {
            double column = 0.0, squares = 0.0;
            for (size_t r = 0; r < rows; ++r) {
                column += block[r * p + j];
                squares += block[r * p + j] * block[r * p + j];
            }
            sum += model->family_ops->uses_classes ? squares - column * column / (double)rows
                                                   : squares;
        }
    }
    return 0.5 * ridge * sum;
}

/* The family table: every family the library knows, in enum order (value = index + 1),
   each defined in its own file as moe_family_<name>. A new family is its file and one row
   here (and its value in moe/model.h's enum). */
#define MOE_FAMILY_TABLE(ROW)                                                                \
    ROW(gaussian) ROW(logistic) ROW(multinomial) ROW(poisson) ROW(student_t) ROW(binomial) ROW(gamma)

#define DECLARE_FAMILY(name) extern const struct moe_family_ops moe_family_##name;
MOE_FAMILY_TABLE(DECLARE_FAMILY)
#define FAMILY_ROW(name) &moe_family_##name,
static const struct moe_family_ops *const family_table[] = {MOE_FAMILY_TABLE(FAMILY_ROW)};

#define FAMILY_COUNT (sizeof family_table / sizeof family_table[0])

const struct moe_family_ops *moe_family_lookup(moe_family family)
{
    size_t index = (size_t)family - 1;
    if ((int)family < 1 || index >= FAMILY_COUNT)
        return NULL;
    return family_table[index];
}

size_t moe_family_count(void)
{
    return FAMILY_COUNT;
}

moe_family moe_family_at(size_t index)
{
    return index < FAMILY_COUNT ? family_table[index]->id : (moe_family)0;
}
