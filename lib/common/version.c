#include "moe/common.h"

const char *moe_version_string(void)
{
    return MOE_VERSION_STRING;
}

int moe_version_number(void)
{
    return MOE_VERSION_NUMBER;
}
