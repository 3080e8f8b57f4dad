/* The names of families and links: one spelling for the CLI, the bindings and the docs. */
#include "model/family.h"

#include <stdio.h>
#include <string.h>

static const char *const link_names[] = { "identity", "sigmoid", "relu" };

const char *moe_family_name(moe_family family)
{
    const struct moe_family_ops *ops = moe_family_lookup(family);
    return ops == NULL ? NULL : ops->name;
}

const char *moe_family_description(moe_family family)
{
    const struct moe_family_ops *ops = moe_family_lookup(family);
    return ops == NULL ? NULL : ops->description;
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
    char known[256] = "";
    size_t used = 0, count = moe_family_count();
    for (size_t i = 0; i < count; ++i) {
        const struct moe_family_ops *ops = moe_family_lookup(moe_family_at(i));
        if (strcmp(name, ops->name) == 0 || (ops->alias != NULL && strcmp(name, ops->alias) == 0)) {
            *family = ops->id;
            return MOE_OK;
        }
        int written = snprintf(known + used, sizeof known - used, "%s%s",
                               i == 0 ? "" : i + 1 == count ? " or " : ", ", ops->name);
        if (written > 0 && (size_t)written < sizeof known - used)
            used += (size_t)written;
    }
    return moe_fail(NULL, MOE_ERR_NOT_FOUND, "unknown family \"%.64s\" (%s)", name, known);
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
