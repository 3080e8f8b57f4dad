/*
 * Output files that are replaced whole or not at all: the new contents go to a
 * temporary file in the target's directory, which is renamed over the target only
 * once completely written, so a run that fails or is killed leaves the old file as it
 * was (and at worst a stray hidden temporary file beside it, when killed).
 *
 * The replacement keeps an existing target's permission bits; a new file gets
 * 0666 less the umask, as fopen would give it. A symbolic link is followed and its
 * final target replaced. Anything that is not a regular file (a terminal,
 * /dev/stdout, a pipe) is written in place, since it cannot be replaced.
 */
#ifndef MOE_PROGRAMS_ATOMIC_FILE_H
#define MOE_PROGRAMS_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct atomic_file {
    FILE *stream;   /* write here */
    char *target;    /* the file to replace (links followed), or the path written in place */
    char *temporary; /* NULL when writing in place */
} atomic_file;

/* Open `path` for writing; 0, or -1 with a message naming the path in `error`. */
int atomic_file_open(atomic_file *file, const char *path, char *error, size_t error_size);

/* Finish: flush, sync and put the new contents in place; 0, or -1 with a message (the
   old file is then left as it was and the temporary file removed). */
int atomic_file_commit(atomic_file *file, char *error, size_t error_size);

/* Give up: close and remove the temporary file; the target is left untouched. */
void atomic_file_abandon(atomic_file *file);

#endif
