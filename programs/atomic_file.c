#define _POSIX_C_SOURCE 200809L

#include "atomic_file.h"
#include "common/replace_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int atomic_file_open(atomic_file *file, const char *path, char *error, size_t error_size)
{
    memset(file, 0, sizeof *file);
    file->path = path;
    file->stream = open_memstream(&file->contents, &file->size);
    if (file->stream == NULL) {
        snprintf(error, error_size, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int atomic_file_commit(atomic_file *file, char *error, size_t error_size)
{
    int failed = ferror(file->stream) != 0;
    if (fclose(file->stream) != 0)
        failed = 1;
    file->stream = NULL;
    int status = 0;
    if (failed) {
        snprintf(error, error_size, "cannot write '%s': out of memory", file->path);
        status = -1;
    } else if (moe_replace_file(file->path, file->contents, file->size, error, error_size) != 0) {
        status = -1;
    }
    atomic_file_abandon(file);
    return status;
}

void atomic_file_abandon(atomic_file *file)
{
    if (file->stream != NULL)
        fclose(file->stream);
    free(file->contents);
    memset(file, 0, sizeof *file);
}
