/*
 * moe_replace_file: new contents for a path, which stays what it was. The library's
 * moe_save_file and the moe tool's output files both go through it (the tool compiles
 * this file; it depends on nothing else of the library).
 *
 * A rename over the path would turn whatever is there into a fresh regular
 * file: a private file would become readable to others, hard links would
 * part, a symbolic link would be replaced by a copy and its target left
 * stale, and /dev/null or a FIFO would become a file. So the path is first
 * looked at (docs/ARCHITECTURE.md, "Saving keeps what the path is"):
 *
 *   symbolic link    followed, chains too, to the file it names
 *   nothing yet      temporary file next to it, renamed into place
 *   regular, 1 link  the same, with the old file's mode and owner
 *   regular, links   rewritten in place, after reserving the space
 *   directory        refused
 *   anything else    opened and written straight through
 *   via /dev, /proc  opened as fopen(path, "w") would and written (/dev/stdout)
 *
 * Checking and then writing is not one atomic step: if another process
 * swaps what the path is in between, the rules apply to what was seen.
 */
#define _POSIX_C_SOURCE 200809L

#include "common/replace_file.h"

#include <stdarg.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* The limit the kernel itself puts on a chain of links (Linux: 40). */
#define MAX_LINK_HOPS 40

/* What the caller's path turned out to be, after following links. */
typedef struct save_target {
    const char *path;    /* as the caller gave it, for messages */
    char *resolved;      /* the file the links lead to */
    int exists;
    struct stat info;    /* of `resolved`, when it exists */
    char name[160];      /* "'resolved'" or "'resolved' (linked from 'path')", for messages */
    int special;         /* the path or a link passes through /dev/ or /proc/ */
    char *message;       /* the caller's, for what went wrong */
    size_t message_size;
} save_target;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(const save_target *target, int code, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    if (target->message_size > 0)
        vsnprintf(target->message, target->message_size, format, arguments);
    va_end(arguments);
    return code;
}

static int io_failure(const save_target *target, const char *action, int error)
{
    return fail(target, MOE_REPLACE_IO, "cannot %s %s: %s", action, target->name,
                strerror(error));
}

/* The contents of the symbolic link `link`, NUL-terminated, in a new allocation. */
static char *read_link(const char *link, size_t size_hint, int *error)
{
    size_t capacity = size_hint + 1 > 64 ? size_hint + 1 : 64;
    for (;;) {
        char *text = malloc(capacity);
        if (text == NULL) {
            *error = ENOMEM;
            return NULL;
        }
        ssize_t length = readlink(link, text, capacity);
        if (length < 0) {
            *error = errno;
            free(text);
            return NULL;
        }
        if ((size_t)length < capacity) {
            text[length] = '\0';
            return text;
        }
        free(text); /* the link grew since lstat, or st_size was not its length */
        if (capacity > SIZE_MAX / 2) {
            *error = ENAMETOOLONG;
            return NULL;
        }
        capacity *= 2;
    }
}

/* A relative link is relative to the directory holding the link. */
static char *link_destination(const char *link, const char *text)
{
    const char *slash = strrchr(link, '/');
    size_t directory = text[0] == '/' || slash == NULL ? 0 : (size_t)(slash - link) + 1;
    size_t length = strlen(text);
    char *destination = malloc(directory + length + 1);
    if (destination != NULL) {
        memcpy(destination, link, directory);
        memcpy(destination + directory, text, length + 1);
    }
    return destination;
}

static int resolve(save_target *target)
{
    if ((target->resolved = malloc(strlen(target->path) + 1)) == NULL)
        return fail(target, MOE_REPLACE_MEMORY, "cannot allocate a file name");
    strcpy(target->resolved, target->path);
    snprintf(target->name, sizeof target->name, "'%s'", target->path);
    for (int hops = 0;; ++hops) {
        target->special |= strncmp(target->resolved, "/dev/", 5) == 0 ||
                           strncmp(target->resolved, "/proc/", 6) == 0;
        if (lstat(target->resolved, &target->info) != 0) {
            if (errno != ENOENT)
                return io_failure(target, "inspect", errno);
            target->exists = 0; /* a new file, or a link to one still to be made */
            return 0;
        }
        if (!S_ISLNK(target->info.st_mode)) {
            target->exists = 1;
            return 0;
        }
        if (hops == MAX_LINK_HOPS)
            return fail(target, MOE_REPLACE_IO, "cannot save to %s: more than %d symbolic links",
                            target->name, MAX_LINK_HOPS);
        int error = 0;
        char *text = read_link(target->resolved, (size_t)target->info.st_size, &error);
        if (text == NULL)
            return io_failure(target, "read the symbolic link", error);
        char *next = link_destination(target->resolved, text);
        free(text);
        if (next == NULL)
            return fail(target, MOE_REPLACE_MEMORY, "cannot allocate a file name");
        free(target->resolved);
        target->resolved = next;
        snprintf(target->name, sizeof target->name, "'%s' (linked from '%s')",
                 target->resolved, target->path);
    }
}

/* 0, or the errno of the write that failed. */
static int write_all(int fd, const unsigned char *bytes, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t count = write(fd, bytes + done, size - done);
        if (count < 0 && errno == EINTR)
            continue;
        if (count < 0)
            return errno;
        if (count == 0)
            return EIO;
        done += (size_t)count;
    }
    return 0;
}

static int open_existing(const char *path)
{
    int fd;
    do
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC); /* a FIFO waits for a reader here */
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* FIFOs, terminals, /dev/null, /dev/full: the node stays, the bytes go through it. */
static int write_through(const save_target *target, const unsigned char *bytes,
                                size_t size)
{
    int fd = open_existing(target->resolved);
    if (fd < 0)
        return io_failure(target, "open", errno);
    int error = write_all(fd, bytes, size);
    if (close(fd) != 0 && error == 0 && errno != EINTR)
        error = errno;
    return error == 0 ? 0 : io_failure(target, "write", error);
}

/*
 * /dev/stdout and the like are links through /proc to whatever the process has open (a
 * pipe, a terminal, a file the shell truncated), which only the kernel can follow: such a
 * path is opened as fopen(path, "w") would open it and written, never replaced.
 */
static int write_as_opened(const save_target *target, const unsigned char *bytes, size_t size)
{
    int fd;
    do
        fd = open(target->path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return io_failure(target, "open", errno);
    int error = write_all(fd, bytes, size);
    if (close(fd) != 0 && error == 0 && errno != EINTR)
        error = errno;
    return error == 0 ? 0 : io_failure(target, "write", error);
}

/*
 * Several names share this file, and a rename would keep the old contents
 * under the others, so it is overwritten where it is. Not atomic; reserving
 * the space first keeps a full disk or a size limit from damaging it.
 */
static int write_in_place(const save_target *target, const unsigned char *bytes,
                                 size_t size)
{
    int fd = open_existing(target->resolved);
    if (fd < 0)
        return io_failure(target, "open", errno);
    if ((uintmax_t)size > (uintmax_t)target->info.st_size) {
        int error = posix_fallocate(fd, 0, (off_t)size);
        /* Other errors mean the file system cannot reserve; the writes will tell. */
        if (error == ENOSPC || error == EFBIG
#ifdef EDQUOT
            || error == EDQUOT
#endif
        ) {
            close(fd);
            return io_failure(target, "make room for the new contents in", error);
        }
    }
    const char *action = "write";
    int error = write_all(fd, bytes, size);
    if (error == 0 && ftruncate(fd, (off_t)size) != 0) {
        error = errno;
        action = "truncate";
    }
    if (error == 0 && fsync(fd) != 0) {
        error = errno;
        action = "flush";
    }
    if (close(fd) != 0 && error == 0 && errno != EINTR) {
        error = errno;
        action = "close";
    }
    if (error == 0)
        return 0;
    return fail(target, MOE_REPLACE_IO, "cannot %s %s, which may now be damaged: %s", action,
                    target->name, strerror(error));
}

/* A name for the temporary file, different for every process, thread and attempt. */
static unsigned long temporary_suffix(unsigned attempt)
{
    uint64_t x = (uint64_t)getpid();
    x = x * 0x9E3779B97F4A7C15u + (uint64_t)time(NULL);
    x = x * 0x9E3779B97F4A7C15u + (uint64_t)clock();
    x = x * 0x9E3779B97F4A7C15u + (uint64_t)(uintptr_t)&x;
    x = x * 0x9E3779B97F4A7C15u + attempt;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9u;
    x ^= x >> 29;
    return (unsigned long)(x & 0xFFFFFFFFu);
}

/*
 * The old file, if any, gives the new one its owner and mode; fchown may be
 * refused (only root gives files away), and then the group alone is tried.
 * Owner first: changing it clears the set-user-ID and set-group-ID bits.
 */
static int copy_ownership_and_mode(int fd, const struct stat *old)
{
    mode_t bits = old->st_mode & 07777;
    if (fchown(fd, old->st_uid, old->st_gid) != 0) {
        /* if the group is refused too, the new file keeps ours: not an error (a variable,
           since glibc's hardened headers warn on a cast-away result) */
        int group_refused = fchown(fd, (uid_t)-1, old->st_gid);
        (void)group_refused;
        bits &= 0777; /* set-ID bits belong to the old owner, not to us */
    }
    return fchmod(fd, bits) == 0 ? 0 : errno;
}

/* Write a temporary file next to the target, flush it, rename it over the target. */
static int replace(const save_target *target, const unsigned char *bytes, size_t size)
{
    size_t name_size = strlen(target->resolved) + sizeof ".tmp" + 8;
    char *temporary = malloc(name_size);
    if (temporary == NULL)
        return fail(target, MOE_REPLACE_MEMORY, "cannot allocate a file name");
    /* 0600 until the old mode is copied, so nobody can open it in between; new files
       get 0666 less the umask, as from fopen. */
    mode_t mode = target->exists ? 0600 : 0666;
    int fd = -1;
    for (unsigned attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        snprintf(temporary, name_size, "%s.tmp%08lx", target->resolved,
                 temporary_suffix(attempt));
        fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST && errno != EINTR)
            break;
    }
    if (fd < 0) {
        int error = errno;
        free(temporary);
        return io_failure(target, "create a temporary file next to", error);
    }
    const char *action = "set the mode of the temporary file for";
    int error = target->exists ? copy_ownership_and_mode(fd, &target->info) : 0;
    if (error == 0) {
        action = "write";
        error = write_all(fd, bytes, size);
    }
    if (error == 0 && fsync(fd) != 0) {
        error = errno;
        action = "flush";
    }
    if (close(fd) != 0 && error == 0 && errno != EINTR) {
        error = errno;
        action = "close";
    }
    if (error == 0 && rename(temporary, target->resolved) != 0) {
        error = errno;
        action = "replace";
    }
    if (error != 0)
        unlink(temporary);
    free(temporary);
    return error == 0 ? 0 : io_failure(target, action, error);
}

int moe_replace_file(const char *path, const void *bytes, size_t size, char *message,
                     size_t message_size)
{
    save_target target = {.path = path, .message = message, .message_size = message_size};
    if (path[0] == '\0')
        return fail(&target, MOE_REPLACE_IO, "cannot save to an empty path");
    int status = resolve(&target);
    if (status == 0 && target.special) {
        status = write_as_opened(&target, bytes, size);
    } else if (status == 0) {
        int regular = target.exists && S_ISREG(target.info.st_mode);
        if (!target.exists || (regular && target.info.st_nlink <= 1))
            status = replace(&target, bytes, size);
        else if (regular)
            status = write_in_place(&target, bytes, size);
        else if (S_ISDIR(target.info.st_mode))
            status = fail(&target, MOE_REPLACE_IO, "cannot save to %s: it is a directory",
                          target.name);
        else
            status = write_through(&target, bytes, size);
    }
    free(target.resolved);
    return status;
}
