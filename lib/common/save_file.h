/* Writing bytes to a path without changing what the path is (docs/ARCHITECTURE.md). */
#ifndef MOE_LIB_SAVE_FILE_H
#define MOE_LIB_SAVE_FILE_H

#include <stddef.h>

#include "moe/common.h"

/*
 * Make `size` bytes the contents of `path`, following symbolic links to
 * the file they name. A regular file (or none yet) is replaced atomically,
 * keeping its mode and owner; a regular file with several hard links is
 * rewritten in place; anything else (FIFO, device) is written straight
 * through. MOE_ERR_IO with a message on failure; no temporary file is left.
 * The rules are spelled out for users at moe_model_save in moe/model.h.
 */
moe_status moe_save_file(const char *path, const void *bytes, size_t size);

#endif
