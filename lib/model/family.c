#include "model/family.h"

const struct moe_family_ops *moe_family_lookup(moe_family family)
{
    switch (family) {
    case MOE_FAMILY_GAUSSIAN: return &moe_family_gaussian;
    case MOE_FAMILY_LOGISTIC:
    case MOE_FAMILY_MULTINOMIAL: return NULL;
    }
    return NULL;
}
