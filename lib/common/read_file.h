/* Reading a whole file of one of the library's formats (models, fitter states). */
#ifndef MOE_LIB_READ_FILE_H
#define MOE_LIB_READ_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "moe/common.h"

/*
 * What the reader knows of a format: every one starts with its signature, a u32 version at
 * offset 8 and the u64 total size at offset 16 (common/bytes.h encoding).
 */
typedef struct moe_file_kind {
    const unsigned char *signature;
    size_t signature_size;
    uint32_t newest_version;
    size_t maximum; /* bytes a file may hold */
    const char *what; /* "a model file", for messages */
} moe_file_kind;

/*
 * Read the file at `path` into *contents (malloc'ed, *length bytes). Reading stops early
 * once the bytes cannot be of the kind, so that /dev/zero or a huge unrelated file costs
 * little: after a wrong signature or an unknown version (the caller's checks of the bytes
 * report those), or past the size the header declares (MOE_ERR_FORMAT). MOE_ERR_IO for a
 * file that cannot be opened or read, or a directory.
 */
moe_status moe_read_file(const char *path, const moe_file_kind *kind, unsigned char **contents,
                         size_t *length);

#endif
