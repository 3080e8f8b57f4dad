#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char thread_message[MOE_MESSAGE_SIZE];

moe_status moe_fail(char *handle_message, moe_status status, const char *format, ...)
{
    /* Formatted apart first: a caller may pass moe_last_error() or a handle's message as an
       argument, and formatting a buffer into itself is undefined (it came out empty). */
    char formatted[MOE_MESSAGE_SIZE];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(formatted, sizeof formatted, format, arguments);
    va_end(arguments);
    memcpy(thread_message, formatted, sizeof formatted);
    if (handle_message != NULL && handle_message != thread_message)
        memcpy(handle_message, thread_message, MOE_MESSAGE_SIZE);
    return status;
}

moe_status moe_fail_propagate(char *handle_message, moe_status status)
{
    if (handle_message != NULL)
        memcpy(handle_message, thread_message, MOE_MESSAGE_SIZE);
    return status;
}

moe_status moe_fail_rebase_row(char *handle_message, moe_status status, size_t first)
{
    const char *prefix = "row ";
    size_t length = strlen(prefix);
    const char *digits = thread_message + length;
    if (strncmp(thread_message, prefix, length) == 0 && *digits >= '0' && *digits <= '9') {
        char *rest = NULL;
        unsigned long long row = strtoull(digits, &rest, 10);
        char copy[MOE_MESSAGE_SIZE];
        snprintf(copy, sizeof copy, "%s", rest);
        return moe_fail(handle_message, status, "row %llu%s",
                        row + (unsigned long long)first, copy);
    }
    return moe_fail_propagate(handle_message, status);
}

const char *moe_last_error(void)
{
    return thread_message;
}

const char *moe_strerror(moe_status status)
{
    switch (status) {
    case MOE_OK: return "success";
    case MOE_ERR_INVALID_ARGUMENT: return "invalid argument";
    case MOE_ERR_NULL_POINTER: return "required pointer argument is NULL";
    case MOE_ERR_EMPTY_INPUT: return "empty input (a size is zero)";
    case MOE_ERR_DIMENSION: return "dimension mismatch";
    case MOE_ERR_NON_FINITE: return "non-finite value (NaN or Inf) in input";
    case MOE_ERR_NEGATIVE_WEIGHT: return "negative sample weight";
    case MOE_ERR_TOO_FEW_SAMPLES: return "fewer samples than free parameters";
    case MOE_ERR_OUT_OF_MEMORY: return "out of memory";
    case MOE_ERR_NUMERICAL: return "numerical breakdown";
    case MOE_ERR_UNSUPPORTED: return "operation not supported";
    case MOE_ERR_IO: return "input/output error";
    case MOE_ERR_FORMAT: return "invalid model data";
    case MOE_ERR_CANCELLED: return "cancelled by the progress callback";
    case MOE_ERR_NOT_FOUND: return "unknown name";
    case MOE_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case MOE_ERR_INVALID_LABEL: return "response value not valid for the family";
    case MOE_ERR_INTERNAL: return "internal error in libmoe";
    }
    return "unknown status code";
}
