/* Reading whole files of the library's formats (common/read_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "common/read_file.h"
#include "common/bytes.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Signature, version, flags and total size: enough to judge what follows. */
#define HEADER_BYTES 24u

moe_status moe_read_file(const char *path, const moe_file_kind *kind, unsigned char **contents,
                         size_t *length)
{
    *contents = NULL;
    *length = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return moe_fail(NULL, MOE_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat info;
    if (fstat(fd, &info) != 0) {
        int error = errno;
        close(fd);
        return moe_fail(NULL, MOE_ERR_IO, "cannot inspect '%s': %s", path, strerror(error));
    }
    if (S_ISDIR(info.st_mode)) {
        close(fd);
        return moe_fail(NULL, MOE_ERR_IO, "cannot read '%s': it is a directory", path);
    }
    if (S_ISREG(info.st_mode) && (uintmax_t)info.st_size > kind->maximum) {
        close(fd);
        return moe_fail(NULL, MOE_ERR_FORMAT, "'%s' has %jd bytes, more than the %zu %s may hold",
                        path, (intmax_t)info.st_size, kind->maximum, kind->what);
    }
    /*
     * The first block holds the header; once it is checked the buffer grows
     * straight to the size of a regular file (plus one byte, to see its end),
     * or by doubling for other files.
     */
    int regular = S_ISREG(info.st_mode);
    size_t file_size = regular ? (size_t)info.st_size : 0;
    size_t capacity = 4096;
    size_t limit = kind->maximum; /* more bytes than this are an error */
    int header_checked = 0;
    size_t have = 0;
    moe_status status = MOE_OK;
    unsigned char *bytes = malloc(capacity);
    if (bytes == NULL)
        status = moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes", capacity);
    while (status == MOE_OK) {
        if (have == capacity) {
            size_t grown = capacity <= limit / 2 ? 2 * capacity : limit + 1;
            if (header_checked && regular && file_size <= limit && file_size + 1 > grown)
                grown = file_size + 1;
            unsigned char *larger = realloc(bytes, grown);
            if (larger == NULL) {
                status = moe_fail(NULL, MOE_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes",
                                  grown);
                break;
            }
            bytes = larger;
            capacity = grown;
        }
        size_t want = capacity - have;
        if (want > limit + 1 - have)
            want = limit + 1 - have;
        ssize_t count = read(fd, bytes + have, want);
        if (count < 0 && errno == EINTR)
            continue;
        if (count < 0) {
            status = moe_fail(NULL, MOE_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
            break;
        }
        if (count == 0)
            break;
        have += (size_t)count;
        if (!header_checked && have >= HEADER_BYTES) {
            header_checked = 1;
            uint32_t version = moe_get_u32(bytes + 8);
            if (memcmp(bytes, kind->signature, kind->signature_size) != 0 || version == 0 ||
                version > kind->newest_version)
                break; /* the caller's check of the bytes reports it */
            uint64_t declared = moe_get_u64(bytes + 16);
            if (declared < limit)
                limit = (size_t)declared;
            if (regular && file_size > limit)
                have = file_size; /* reported below without reading the rest */
        }
        if (have > limit) {
            if (limit == kind->maximum)
                status = moe_fail(NULL, MOE_ERR_FORMAT,
                                  "'%s' has more than the %zu bytes %s may hold", path, limit,
                                  kind->what);
            else
                status = moe_fail(NULL, MOE_ERR_FORMAT,
                                  "'%s' is longer than the %zu bytes its header declares", path,
                                  limit);
            break;
        }
    }
    close(fd);
    if (status != MOE_OK) {
        free(bytes);
        return status;
    }
    *contents = bytes;
    *length = have;
    return MOE_OK;
}

