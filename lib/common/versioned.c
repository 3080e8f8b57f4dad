#include "common/versioned.h"
#include "common/check.h"

#include <string.h>

moe_status moe_struct_fill(void *out, unsigned int version, const void *value,
                           const moe_struct_layout *layout, char *message)
{
    moe_status status = moe_check_struct_version(message, layout->name, version, layout->newest);
    if (status != MOE_OK)
        return status;
    memcpy(out, value, layout->sizes[version - 1]);
    memcpy(out, &version, sizeof version);
    return MOE_OK;
}

moe_status moe_struct_copy_out(void *out, const void *value, const moe_struct_layout *layout,
                               char *message)
{
    unsigned int version;
    memcpy(&version, out, sizeof version);
    return moe_struct_fill(out, version, value, layout, message);
}
