#include "fitter/options.h"

#include <stddef.h>
#include <string.h>

static const char *const init_keywords[] = {"random", "kmeans", "model", "custom", "tensor", "mixed", NULL};
static const char *const line_search_keywords[] = {"none", "armijo", NULL};
static const char *const gate_solver_keywords[] = {"newton", "bound", "newton_step", NULL};
static const char *const optimizer_keywords[] = {"sgd", "momentum", "adam", "adamw", "rmsprop",
                                                 NULL};

static const moe_option_info option_table[] = {
    {MOE_OPT_MAX_ITER, "max_iter", 1, 1, 1e9, 500, NULL, "maximum iterations per restart"},
    {MOE_OPT_TOLERANCE, "tol", 0, 0, 1, 1e-8,
     NULL, "stop when |change of objective| <= tol * (N + |objective|), N the total weight"},
    {MOE_OPT_N_INIT, "n_init", 1, 1, 100000, 5, NULL, "restarts; the best objective is kept"},
    {MOE_OPT_SEED, "seed", 1, 0, 9007199254740991.0, 0, NULL, "PRNG seed (below 2^53)"},
    {MOE_OPT_INIT, "init", 1, 0, 5, MOE_INIT_MIXED, init_keywords, "initialisation strategy"},
    {MOE_OPT_GATE_L2, "gate_l2", 0, 0, 1e12, 0, NULL,
     "L2 penalty on non-intercept gate weights centred over experts (mean-objective scale)"},
    {MOE_OPT_EXPERT_RIDGE, "expert_ridge", 0, 0, 1e12, 0, NULL,
     "L2 penalty on non-intercept expert coefficients (mean-objective scale)"},
    {MOE_OPT_VARIANCE_FLOOR, "variance_floor", 0, 0, 1, 1e-6, NULL,
     "lower bound on variances, relative to the weighted variance of y"},
    {MOE_OPT_GATE_MAX_NEWTON, "gate_max_newton", 1, 1, 10000, 25, NULL,
     "Newton steps per gate M-step"},
    {MOE_OPT_GATE_TOLERANCE, "gate_tol", 0, 0, 1, 1e-10, NULL,
     "gate Newton stop: decrement / 2 <= gate_tol * (1 + |Q|)"},
    {MOE_OPT_MIN_EXPERT_WEIGHT, "min_expert_weight", 0, 0, 0.5, 1e-6, NULL,
     "an expert with less than this share of the total weight is left unchanged"},
    {MOE_OPT_THREADS, "threads", 1, 0, 1024, 1, NULL, "worker threads (0: automatic)"},
    {MOE_OPT_STEP, "step", 0, 0, 1e12, 0, NULL,
     "gradient step (gd), experts' step (gem, em inner steps); 0: the safe step"},
    {MOE_OPT_GATE_STEP, "gate_step", 0, 0, 1e12, 0, NULL,
     "gate step (gem, em inner steps); 0: the safe step"},
    {MOE_OPT_BATCH_SIZE, "batch_size", 1, 0, 9007199254740991.0, 0, NULL,
     "gd mini-batch rows (0: full batch)"},
    {MOE_OPT_LINE_SEARCH, "line_search", 1, 0, 1, 0, line_search_keywords,
     "gd step control: none or armijo backtracking"},
    {MOE_OPT_INNER_STEPS, "inner_steps", 1, 0, 1000000, 0, NULL,
     "em: gradient steps per block per iteration (0: exact Newton M-steps)"},
    {MOE_OPT_UPDATE_VARIANCE, "update_variance", 1, 0, 1, 1, NULL,
     "0 keeps the model's Gaussian variances fixed"},
    {MOE_OPT_EXPERT_MAX_NEWTON, "expert_max_newton", 1, 1, 10000, 25, NULL,
     "Newton steps per classification-expert M-step (Gauss-Newton steps for a sigmoid or "
     "ReLU link)"},
    {MOE_OPT_EXPERT_TOLERANCE, "expert_tol", 0, 0, 1, 1e-10, NULL,
     "expert Newton and Gauss-Newton stop: decrement / 2 <= expert_tol * (1 + |Q|)"},
    {MOE_OPT_GATE_SOLVER, "gate_solver", 1, 0, 2, 2, gate_solver_keywords,
     "em's gate M-step: newton_step (one checked Newton step per iteration), newton (exact) "
     "or bound (one fixed-curvature majorise-minimise step)"},
    {MOE_OPT_UPDATE_EXPERTS, "update_experts", 1, 0, 1, 1, NULL,
     "0 holds the experts as the model has them and fits the gate alone"},
    {MOE_OPT_OPTIMIZER, "optimizer", 1, 0, 4, 0, optimizer_keywords,
     "gd's update: sgd, momentum, adam, adamw or rmsprop"},
    {MOE_OPT_BETA1, "beta1", 0, 0, 0.999999, 0.9, NULL,
     "first-moment decay of momentum, adam and adamw"},
    {MOE_OPT_BETA2, "beta2", 0, 0, 0.999999, 0.999, NULL,
     "squared-gradient decay of adam, adamw and rmsprop"},
    {MOE_OPT_OPTIMIZER_EPS, "optimizer_eps", 0, 1e-300, 1, 1e-8, NULL,
     "added to the root of the squared-gradient average"},
    {MOE_OPT_WEIGHT_DECAY, "weight_decay", 0, 0, 1e6, 0.01, NULL,
     "adamw's decoupled decay of the coefficients"},
};

const moe_option_info *moe_option_info_get(moe_option option)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; ++i)
        if (option_table[i].id == option)
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
        if (info->is_integer)
            values->integer[info->id] = (long long)info->default_value;
        else
            values->real[info->id] = info->default_value;
    }
}

const char *moe_option_name(moe_option option)
{
    const moe_option_info *info = moe_option_info_get(option);
    return info == NULL ? NULL : info->name;
}
