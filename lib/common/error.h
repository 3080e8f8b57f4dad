/* Error reporting: a status plus a formatted message, kept per thread and per handle. */
#ifndef MOE_LIB_ERROR_H
#define MOE_LIB_ERROR_H

#include "moe/common.h"

#define MOE_MESSAGE_SIZE 256

/*
 * Record a failure: formats the message into the calling thread's slot and,
 * if handle_message is not NULL, into that handle's buffer (MOE_MESSAGE_SIZE
 * bytes). Returns status so callers can write `return moe_fail(...)`.
 */
moe_status moe_fail(char *handle_message, moe_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Copy the thread's current message into a handle buffer (after a nested call failed). */
moe_status moe_fail_propagate(char *handle_message, moe_status status);

/*
 * After a nested call on the caller's rows first, first + 1, ... failed: renumber the
 * "row I" that starts the thread's message (the convention of <moe/common.h>) to first + I,
 * so that it names the caller's row, and copy it into handle_message as above. A message
 * that names no row is kept as it is.
 */
moe_status moe_fail_rebase_row(char *handle_message, moe_status status, size_t first);

#endif
