/* The names of families and links: one spelling for the CLI, the bindings and the docs. */
#include "model/family.h"

#include <string.h>

static const char *const link_names[] = { "identity", "sigmoid", "relu" };

const char *moe_family_name(moe_family family)
{
    const struct moe_family_ops *ops = moe_family_lookup(family);
    return ops == NULL ? NULL : ops->name;
}

const char *moe_link_name(moe_link link)
{
    size_t index = (size_t)link;
    return index < sizeof link_names / sizeof link_names[0] ? link_names[index] : NULL;
}

moe_status moe_family_from_name(const char *name, moe_family *family)
{
    if (name == NULL || family == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", name == NULL ? "name" : "family");
    static const moe_family all[] = { MOE_FAMILY_GAUSSIAN, MOE_FAMILY_LOGISTIC,
                                      MOE_FAMILY_MULTINOMIAL, MOE_FAMILY_POISSON,
                                      MOE_FAMILY_STUDENT_T };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (strcmp(name, moe_family_name(all[i])) == 0) {
            *family = all[i];
            return MOE_OK;
        }
    if (strcmp(name, "student_t") == 0) {
        *family = MOE_FAMILY_STUDENT_T;
        return MOE_OK;
    }
    return moe_fail(NULL, MOE_ERR_NOT_FOUND,
                    "unknown family \"%.64s\" (gaussian, logistic, multinomial, poisson or t)",
                    name);
}

moe_status moe_link_from_name(const char *name, moe_link *link)
{
    if (name == NULL || link == NULL)
        return moe_fail(NULL, MOE_ERR_NULL_POINTER, "%s is NULL", name == NULL ? "name" : "link");
    for (size_t i = 0; i < sizeof link_names / sizeof link_names[0]; ++i)
        if (strcmp(name, link_names[i]) == 0) {
            *link = (moe_link)i;
            return MOE_OK;
        }
    return moe_fail(NULL, MOE_ERR_NOT_FOUND,
                    "unknown link \"%.64s\" (identity, sigmoid or relu)", name);
}
