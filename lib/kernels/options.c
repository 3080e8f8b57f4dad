#include "kernels/options.h"

#include <stddef.h>
#include <string.h>

static const char *const init_keywords[] = {"random", "kmeans", "model", "custom", "tensor", "mixed", NULL};
static const char *const line_search_keywords[] = {"none", "armijo", NULL};
static const char *const gate_solver_keywords[] = {"newton", "bound", "newton_step", "hessian_free",
                                                   "auto", NULL};
static const char *const optimizer_keywords[] = {"sgd", "momentum", "adam", "adamw", "rmsprop",
                                                 NULL};

static const moe_option_info option_table[] = {
    {MOE_OPTION_INFO_VERSION, "max_iter", MOE_OPTION_INTEGER, 0, 1, 1e9, 500, NULL,
     "maximum iterations per restart", MOE_OPT_MAX_ITER},
    {MOE_OPTION_INFO_VERSION, "tol", MOE_OPTION_REAL, 0, 0, 1, 1e-8, NULL,
     "stop when |change of objective| <= tol * (N + |objective|), N the total weight", MOE_OPT_TOLERANCE},
    {MOE_OPTION_INFO_VERSION, "n_init", MOE_OPTION_INTEGER, 0, 1, 100000, 5, NULL,
     "restarts; the best objective is kept", MOE_OPT_N_INIT},
    {MOE_OPTION_INFO_VERSION, "seed", MOE_OPTION_INTEGER, 0, 0, 9007199254740991.0, 0, NULL,
     "PRNG seed (below 2^53)", MOE_OPT_SEED},
    {MOE_OPTION_INFO_VERSION, "init", MOE_OPTION_KEYWORD, 0, 0, 5, MOE_INIT_MIXED, init_keywords,
     "initialisation strategy", MOE_OPT_INIT},
    {MOE_OPTION_INFO_VERSION, "gate_l2", MOE_OPTION_REAL, 0, 0, 1e12, 0, NULL,
     "L2 penalty on non-intercept gate weights centred over experts (mean-objective scale)", MOE_OPT_GATE_L2},
    {MOE_OPTION_INFO_VERSION, "expert_ridge", MOE_OPTION_REAL, 0, 0, 1e12, 0, NULL,
     "L2 penalty on non-intercept expert coefficients (mean-objective scale)", MOE_OPT_EXPERT_RIDGE},
    {MOE_OPTION_INFO_VERSION, "variance_floor", MOE_OPTION_REAL, 0, 0, 1, 1e-6, NULL,
     "lower bound on variances, relative to the weighted variance of y", MOE_OPT_VARIANCE_FLOOR},
    {MOE_OPTION_INFO_VERSION, "gate_max_newton", MOE_OPTION_INTEGER, 0, 1, 10000, 25, NULL,
     "Newton steps per gate M-step", MOE_OPT_GATE_MAX_NEWTON},
    {MOE_OPTION_INFO_VERSION, "gate_tol", MOE_OPTION_REAL, 0, 0, 1, 1e-10, NULL,
     "gate Newton stop: decrement / 2 <= gate_tol * (1 + |Q|)", MOE_OPT_GATE_TOLERANCE},
    {MOE_OPTION_INFO_VERSION, "min_expert_weight", MOE_OPTION_REAL, 0, 0, 0.5, 1e-6, NULL,
     "an expert with less than this share of the total weight is left unchanged", MOE_OPT_MIN_EXPERT_WEIGHT},
    {MOE_OPTION_INFO_VERSION, "threads", MOE_OPTION_INTEGER, 0, 0, 1024, 1, NULL,
     "worker threads (0: automatic)", MOE_OPT_THREADS},
    {MOE_OPTION_INFO_VERSION, "step", MOE_OPTION_REAL, 0, 0, 1e12, 0, NULL,
     "gradient step (gd), experts' step (gem, em inner steps); 0: the safe step", MOE_OPT_STEP},
    {MOE_OPTION_INFO_VERSION, "gate_step", MOE_OPTION_REAL, 0, 0, 1e12, 0, NULL,
     "gate step (gem, em inner steps); 0: the safe step", MOE_OPT_GATE_STEP},
    {MOE_OPTION_INFO_VERSION, "batch_size", MOE_OPTION_INTEGER, 0, 0, 9007199254740991.0, 0, NULL,
     "gd mini-batch rows (0: full batch)", MOE_OPT_BATCH_SIZE},
    {MOE_OPTION_INFO_VERSION, "line_search", MOE_OPTION_KEYWORD, 0, 0, 1, 0, line_search_keywords,
     "gd step control: none or armijo backtracking", MOE_OPT_LINE_SEARCH},
    {MOE_OPTION_INFO_VERSION, "inner_steps", MOE_OPTION_INTEGER, 0, 0, 1000000, 0, NULL,
     "em: gradient steps per block per iteration (0: exact Newton M-steps)", MOE_OPT_INNER_STEPS},
    {MOE_OPTION_INFO_VERSION, "update_variance", MOE_OPTION_INTEGER, 0, 0, 1, 1, NULL,
     "0 keeps the model's Gaussian variances fixed", MOE_OPT_UPDATE_VARIANCE},
    {MOE_OPTION_INFO_VERSION, "expert_max_newton", MOE_OPTION_INTEGER, 0, 1, 10000, 25, NULL,
     "Newton steps per classification-expert M-step (Gauss-Newton steps for a sigmoid or " "ReLU link)", MOE_OPT_EXPERT_MAX_NEWTON},
    {MOE_OPTION_INFO_VERSION, "expert_tol", MOE_OPTION_REAL, 0, 0, 1, 1e-10, NULL,
     "expert Newton and Gauss-Newton stop: decrement / 2 <= expert_tol * (1 + |Q|)", MOE_OPT_EXPERT_TOLERANCE},
    {MOE_OPTION_INFO_VERSION, "gate_solver", MOE_OPTION_KEYWORD, 0, 0, 4, 4, gate_solver_keywords,
     "em's gate M-step: auto (newton_step or hessian_free, by the gate's size), newton_step " "(one checked Newton step per iteration), hessian_free (one Newton step by conjugate " "gradients, no Hessian), newton (exact) or bound (one fixed-curvature majorise-minimise " "step)", MOE_OPT_GATE_SOLVER},
    {MOE_OPTION_INFO_VERSION, "update_experts", MOE_OPTION_INTEGER, 0, 0, 1, 1, NULL,
     "0 holds the experts as the model has them and fits the gate alone", MOE_OPT_UPDATE_EXPERTS},
    {MOE_OPTION_INFO_VERSION, "optimizer", MOE_OPTION_KEYWORD, 0, 0, 4, 0, optimizer_keywords,
     "gd's update: sgd, momentum, adam, adamw or rmsprop", MOE_OPT_OPTIMIZER},
    {MOE_OPTION_INFO_VERSION, "beta1", MOE_OPTION_REAL, 0, 0, 0.999999, 0.9, NULL,
     "first-moment decay of momentum, adam and adamw", MOE_OPT_BETA1},
    {MOE_OPTION_INFO_VERSION, "beta2", MOE_OPTION_REAL, 0, 0, 0.999999, 0.999, NULL,
     "squared-gradient decay of adam, adamw and rmsprop", MOE_OPT_BETA2},
    {MOE_OPTION_INFO_VERSION, "optimizer_eps", MOE_OPTION_REAL, 0, 1e-300, 1, 1e-8, NULL,
     "added to the root of the squared-gradient average", MOE_OPT_OPTIMIZER_EPS},
    {MOE_OPTION_INFO_VERSION, "weight_decay", MOE_OPTION_REAL, 0, 0, 1e6, 0.01, NULL,
     "adamw's decoupled decay of the coefficients", MOE_OPT_WEIGHT_DECAY},
    {MOE_OPTION_INFO_VERSION, "update_degrees", MOE_OPTION_INTEGER, 0, 0, 1, 1, NULL,
     "0 keeps the t experts' degrees of freedom as the model has them", MOE_OPT_UPDATE_DEGREES},
    {MOE_OPTION_INFO_VERSION, "search_shards", MOE_OPTION_INTEGER, 0, -1, 1048576, 0, NULL,
     "init = mixed for one of this many shards of the rows: 1 / this of a full search, one "
     "restart; 0: a full search; -1: a shard's search by its rows", MOE_OPT_SEARCH_SHARDS},
};

const moe_option_info *moe_option_info_get(moe_option option)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; ++i)
        if (option_table[i].number == (int)option)
            return &option_table[i];
    return NULL;
}

const moe_option_info *moe_option_info_find(const char *name)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; ++i)
        if (strcmp(option_table[i].name, name) == 0)
            return &option_table[i];
    return NULL;
}

void moe_option_values_default(moe_option_values *values)
{
    memset(values, 0, sizeof *values);
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; ++i) {
        const moe_option_info *info = &option_table[i];
        if (info->type == MOE_OPTION_REAL)
            values->real[info->number] = info->default_value;
        else
            values->integer[info->number] = (long long)info->default_value;
    }
}

long long moe_option_values_int(const moe_option_values *values, const moe_option_info *info)
{
    return info->type != MOE_OPTION_REAL ? values->integer[info->number]
                                         : (long long)values->real[info->number];
}

double moe_option_values_double(const moe_option_values *values, const moe_option_info *info)
{
    return info->type != MOE_OPTION_REAL ? (double)values->integer[info->number]
                                         : values->real[info->number];
}

const char *moe_option_name(moe_option option)
{
    const moe_option_info *info = moe_option_info_get(option);
    return info == NULL ? NULL : info->name;
}

size_t moe_pinned_option_count(void)
{
    return sizeof option_table / sizeof option_table[0];
}

const moe_option_info *moe_pinned_option_at(size_t index)
{
    return index < moe_pinned_option_count() ? &option_table[index] : NULL;
}
