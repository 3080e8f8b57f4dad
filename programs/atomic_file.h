/*
 * Output files that are replaced whole or not at all, by the rules moe_model_save follows
 * (lib/common/replace_file.h, which the tool compiles): the contents are gathered in
 * memory and written when complete, so a run that fails leaves the old file as it was; a
 * regular file keeps its mode and owner, a symbolic link is followed, a FIFO or a device
 * is written through, a file with several hard links is rewritten in place.
 */
#ifndef MOE_PROGRAMS_ATOMIC_FILE_H
#define MOE_PROGRAMS_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct atomic_file {
    FILE *stream;     /* write here */
    const char *path; /* the caller's */
    char *contents;   /* what was written, once the stream is closed */
    size_t size;
} atomic_file;

/* Open `path` for writing; 0, or -1 with a message naming the path in `error`. */
int atomic_file_open(atomic_file *file, const char *path, char *error, size_t error_size);

/* Finish: put the new contents in place; 0, or -1 with a message (the old file is then
   left as it was, unless it has several hard links: see lib/common/replace_file.h). */
int atomic_file_commit(atomic_file *file, char *error, size_t error_size);

/* Give up: nothing is written. */
void atomic_file_abandon(atomic_file *file);

#endif
