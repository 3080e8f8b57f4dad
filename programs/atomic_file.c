#define _POSIX_C_SOURCE 200809L /* mkstemp, fchmod, fsync, readlink, lstat */

#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Links followed before giving up (the kernel's own limit for a path is 40). */
enum { MAX_LINKS = 40 };

static char *join(const char *a, size_t a_length, const char *b)
{
    size_t b_length = strlen(b);
    char *joined = malloc(a_length + b_length + 1);
    if (joined != NULL) {
        memcpy(joined, a, a_length);
        memcpy(joined + a_length, b, b_length + 1);
    }
    return joined;
}

/* Length of the directory part of `path`, with its final slash ("" for "plot.svg"). */
static size_t directory_length(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash == NULL ? 0 : (size_t)(slash - path) + 1;
}

/* Paths under /dev and /proc name devices and other processes' files (/dev/stdout is
   a link to /proc/self/fd/1, which may be a regular file the shell opened): they are
   written in place, never replaced. */
static int is_special(const char *path)
{
    return strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0;
}

/* The file a path finally names: symbolic links followed, even one whose target does
   not exist yet (writing through it creates that target, as fopen would). NULL with
   errno set on failure; *special is set when a link passes through /dev or /proc. */
static char *follow_links(const char *path, int *special)
{
    char *current = join(path, strlen(path), "");
    for (int hops = 0; current != NULL; ++hops) {
        *special |= is_special(current);
        struct stat info;
        if (lstat(current, &info) != 0) {
            if (errno == ENOENT)
                return current; /* a new file */
            break;
        }
        if (!S_ISLNK(info.st_mode))
            return current;
        if (hops == MAX_LINKS) {
            errno = ELOOP;
            break;
        }
        size_t size = info.st_size > 0 ? (size_t)info.st_size + 1 : 4096;
        char *link = malloc(size);
        ssize_t got = link != NULL ? readlink(current, link, size) : -1;
        if (got < 0 || (size_t)got >= size) {
            if (got >= 0)
                errno = ENAMETOOLONG; /* the link changed while being read */
            free(link);
            break;
        }
        link[got] = '\0';
        /* A relative link is relative to the directory holding it. */
        char *next = link[0] == '/' ? join(link, (size_t)got, "")
                                    : join(current, directory_length(current), link);
        free(link);
        free(current);
        current = next;
    }
    int saved = errno;
    free(current);
    errno = saved;
    return NULL;
}

static int failed(char *error, size_t error_size, const char *what, const char *path)
{
    snprintf(error, error_size, "%s: %s: %s", path, what, strerror(errno));
    return -1;
}

/* Devices, pipes, terminals and paths under /dev and /proc: opened as fopen would. */
static int open_in_place(atomic_file *file, const char *path, char *error, size_t error_size)
{
    free(file->target);
    file->target = join(path, strlen(path), "");
    if (file->target == NULL || (file->stream = fopen(path, "w")) == NULL) {
        failed(error, error_size, "cannot write", path);
        atomic_file_abandon(file);
        return -1;
    }
    return 0;
}

int atomic_file_open(atomic_file *file, const char *path, char *error, size_t error_size)
{
    memset(file, 0, sizeof *file);
    int special = 0;
    if ((file->target = follow_links(path, &special)) == NULL)
        return failed(error, error_size, "cannot write", path);
    struct stat info;
    int exists = stat(file->target, &info) == 0;
    if (!exists && errno != ENOENT) {
        failed(error, error_size, "cannot write", path);
        atomic_file_abandon(file);
        return -1;
    }
    if (special || (exists && !S_ISREG(info.st_mode)))
        return open_in_place(file, path, error, error_size);
    /* Hidden, beside the target: a rename within one directory is atomic. */
    size_t directory = directory_length(file->target);
    char *prefix = join(file->target, directory, ".");
    file->temporary = prefix != NULL ? join(prefix, strlen(prefix), file->target + directory)
                                     : NULL;
    free(prefix);
    char *pattern = file->temporary != NULL
                        ? join(file->temporary, strlen(file->temporary), ".XXXXXX")
                        : NULL;
    free(file->temporary);
    file->temporary = NULL;
    int descriptor = pattern != NULL ? mkstemp(pattern) : -1;
    if (descriptor < 0) {
        if (pattern == NULL)
            errno = ENOMEM;
        failed(error, error_size, "cannot create a temporary file beside it", path);
        free(pattern);
        atomic_file_abandon(file);
        return -1;
    }
    file->temporary = pattern;
    mode_t mode;
    if (exists) {
        mode = info.st_mode & 07777;
    } else {
        /* umask can only be read by setting it; the tool runs one thread here. */
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(descriptor, mode) != 0 || (file->stream = fdopen(descriptor, "w")) == NULL) {
        failed(error, error_size, "cannot write", path);
        close(descriptor);
        atomic_file_abandon(file);
        return -1;
    }
    return 0;
}

int atomic_file_commit(atomic_file *file, char *error, size_t error_size)
{
    const char *name = file->target;
    int status = 0;
    /* An earlier failed write (a full disk) shows only in the error flag. */
    if (fflush(file->stream) != 0 || ferror(file->stream)) {
        if (errno == 0)
            errno = EIO;
        status = failed(error, error_size, "write error", name);
    } else if (file->temporary != NULL && fsync(fileno(file->stream)) != 0) {
        status = failed(error, error_size, "write error", name);
    }
    if (fclose(file->stream) != 0 && status == 0)
        status = failed(error, error_size, "write error", name);
    file->stream = NULL;
    if (status == 0 && file->temporary != NULL && rename(file->temporary, file->target) != 0)
        status = failed(error, error_size, "cannot replace", name);
    if (status == 0) {
        free(file->temporary);
        file->temporary = NULL;
    }
    atomic_file_abandon(file);
    return status;
}

void atomic_file_abandon(atomic_file *file)
{
    if (file->stream != NULL)
        fclose(file->stream);
    if (file->temporary != NULL)
        unlink(file->temporary);
    free(file->temporary);
    free(file->target);
    memset(file, 0, sizeof *file);
}
