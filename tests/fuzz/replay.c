/*
 * Runs a fuzz harness over saved inputs, so each harness is also a plain regression
 * test: every file named on the command line, and every file in every directory named
 * there, is passed to LLVMFuzzerTestOneInput once. Exit status 0 when all inputs ran,
 * 1 when an input could not be read or none was found (an empty corpus would
 * otherwise pass unnoticed). Crashes and sanitizer reports end the run on their own.
 *
 *   fuzz_NAME_replay tests/fuzz/corpus/NAME [more files or directories]
 */
#define _POSIX_C_SOURCE 200809L /* opendir, readdir, stat */

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each input in a buffer of exactly its size, so a sanitizer sees any read past it. */
static int run_file(const char *path, size_t size)
{
    uint8_t *data = malloc(size > 0 ? size : 1);
    FILE *file = fopen(path, "rb");
    size_t got = data != NULL && file != NULL ? fread(data, 1, size, file) : 0;
    int complete = data != NULL && file != NULL && got == size && fgetc(file) == EOF;
    if (file != NULL)
        fclose(file);
    if (!complete) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(data);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int run_path(const char *path, size_t *count)
{
    struct stat info;
    if (stat(path, &info) != 0) {
        fprintf(stderr, "replay: no such file or directory: %s\n", path);
        return -1;
    }
    if (!S_ISDIR(info.st_mode)) {
        ++*count;
        return run_file(path, (size_t)info.st_size);
    }
    DIR *directory = opendir(path);
    if (directory == NULL) {
        fprintf(stderr, "replay: cannot list %s\n", path);
        return -1;
    }
    int status = 0;
    struct dirent *entry;
    while (status == 0 && (entry = readdir(directory)) != NULL) {
        if (entry->d_name[0] == '.')
            continue; /* ".", ".." and hidden files */
        size_t length = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(length);
        if (child == NULL) {
            status = -1;
            break;
        }
        snprintf(child, length, "%s/%s", path, entry->d_name);
        struct stat child_info;
        if (stat(child, &child_info) == 0 && S_ISREG(child_info.st_mode)) {
            ++*count;
            status = run_file(child, (size_t)child_info.st_size);
        }
        free(child);
    }
    closedir(directory);
    return status;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    for (int a = 1; a < argc; ++a)
        if (run_path(argv[a], &count) != 0)
            return 1;
    if (count == 0) {
        fprintf(stderr, "replay: no inputs (usage: %s FILE_OR_DIRECTORY...)\n", argv[0]);
        return 1;
    }
    printf("replay: %zu inputs\n", count);
    return 0;
}
