/* moe_save_file: moe_replace_file's outcome as a status and the thread's message. */
#include "common/save_file.h"
#include "common/error.h"
#include "common/replace_file.h"

moe_status moe_save_file(const char *path, const void *bytes, size_t size)
{
    char message[MOE_MESSAGE_SIZE];
    int outcome = moe_replace_file(path, bytes, size, message, sizeof message);
    if (outcome == 0)
        return MOE_OK;
    return moe_fail(NULL, outcome == MOE_REPLACE_MEMORY ? MOE_ERR_OUT_OF_MEMORY : MOE_ERR_IO,
                    "%s", message);
}
