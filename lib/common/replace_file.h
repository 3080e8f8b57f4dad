/*
 * Writing bytes to a path without changing what the path is (docs/ARCHITECTURE.md,
 * "Saving keeps what the path is"). Self-contained: the moe tool compiles it too, so that
 * its output files follow the same rules as moe_model_save.
 */
#ifndef MOE_LIB_REPLACE_FILE_H
#define MOE_LIB_REPLACE_FILE_H

#include <stddef.h>

enum { MOE_REPLACE_IO = 1, MOE_REPLACE_MEMORY = 2 };

/*
 * Make `size` bytes the contents of `path`, following symbolic links to the file they
 * name. A regular file (or none yet) is replaced atomically, keeping its mode and owner; a
 * regular file with several hard links is rewritten in place; anything else (FIFO, device)
 * is written straight through; a directory is refused. Returns 0, or MOE_REPLACE_IO /
 * MOE_REPLACE_MEMORY with a message naming the file in `message` (message_size bytes, may
 * be 0); no temporary file is left. The rules are spelled out for users at moe_model_save
 * in moe/model.h.
 */
int moe_replace_file(const char *path, const void *bytes, size_t size, char *message,
                     size_t message_size);

#endif
