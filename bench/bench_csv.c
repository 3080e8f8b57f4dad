/*
 * Reading speed of the moe tool's CSV reader (programs/table.c), through table_read as
 * `moe fit` calls it.
 *
 *   bench_csv [MEGABYTES] [--quoted] [--threads T] [--digits D]
 *
 * Writes a CSV of about MEGABYTES (default 1024) to a temporary file in /tmp: a header
 * x1..x5,y and rows of six numbers like -1.234567890123, as a simulated data set would
 * be written. --digits D gives each number D significant digits (default 13, 2..18;
 * 7 is printf's "%.6f" of a number below 10, a common way to write data). --quoted quotes every cell, which sends the whole file down libcsv's
 * general path rather than the unquoted fast path. --threads T reads with T threads,
 * as `moe fit --threads T` does (default 1: the serial reader; a quoted file is read
 * serially whatever T). The file is read three times from
 * the page cache (it was just written), the best rate (wall clock) is printed in MB/s
 * (10^6 bytes per second), and the file is deleted.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, clock_gettime */

#include "table.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { COLUMNS = 6, RUNS = 3 };

static uint64_t random_state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    /* xorshift64*: the numbers only have to look like data, fast to draw. */
    random_state ^= random_state >> 12;
    random_state ^= random_state << 25;
    random_state ^= random_state >> 27;
    return random_state * 0x2545f4914f6cdd1du;
}

enum { DIGITS_MAX = 18 };

/* "-d.ddd..." or "d.ddd..." with `count` digits at `out`, formatted by hand: snprintf
   would make writing a gigabyte take longer than reading it. Returns the bytes written. */
static size_t format_value(char *out, int count)
{
    uint64_t bits = next_random();
    size_t used = 0;
    if (bits & 1)
        out[used++] = '-';
    uint64_t digits = bits >> 1;
    char reversed[DIGITS_MAX];
    for (int i = 0; i < count; ++i) {
        reversed[i] = (char)('0' + digits % 10);
        digits /= 10;
    }
    out[used++] = reversed[count - 1];
    out[used++] = '.';
    for (int i = count - 2; i >= 0; --i)
        out[used++] = reversed[i];
    return used;
}

static int write_file(FILE *file, size_t target, int quoted, int digits)
{
    static const char header[] = "x1,x2,x3,x4,x5,y\n";
    size_t written = 0;
    if (fputs(header, file) == EOF)
        return -1;
    written += sizeof header - 1;
    char row[COLUMNS * 24 + 2];
    while (written < target) {
        size_t used = 0;
        for (int c = 0; c < COLUMNS; ++c) {
            if (quoted)
                row[used++] = '"';
            used += format_value(row + used, digits);
            if (quoted)
                row[used++] = '"';
            row[used++] = c + 1 < COLUMNS ? ',' : '\n';
        }
        if (fwrite(row, 1, used, file) != used)
            return -1;
        written += used;
    }
    return fflush(file) == 0 ? 0 : -1;
}

static double seconds_of(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    double megabytes = 1024;
    int quoted = 0, threads = 1, digits = 13;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--quoted") == 0)
            quoted = 1;
        else if (strcmp(argv[i], "--digits") == 0 && i + 1 < argc &&
                 (digits = atoi(argv[i + 1])) >= 2 && digits <= DIGITS_MAX)
            ++i;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
                 (threads = atoi(argv[i + 1])) >= 1)
            ++i;
        else if ((megabytes = atof(argv[i])) <= 0) {
            fprintf(stderr, "usage: bench_csv [MEGABYTES] [--quoted] [--threads T] [--digits 2..18]\n");
            return 2;
        }
    }
    char path[] = "/tmp/bench_csv_XXXXXX";
    int descriptor = mkstemp(path);
    FILE *file = descriptor >= 0 ? fdopen(descriptor, "wb") : NULL;
    if (file == NULL) {
        perror("bench_csv: cannot create a temporary file");
        return 1;
    }
    size_t target = (size_t)(megabytes * 1e6);
    int status = write_file(file, target, quoted, digits);
    long size = ftell(file);
    fclose(file);
    if (status != 0 || size <= 0) {
        perror("bench_csv: cannot write the temporary file");
        unlink(path);
        return 1;
    }
    printf("file: %s, %.1f MB, %s cells of %d digits, %d thread%s\n", path,
           (double)size / 1e6, quoted ? "quoted" : "unquoted", digits, threads,
           threads > 1 ? "s" : "");

    table_request request = {"y", 0, NULL, 0, ',', 1, threads, 0};
    double best = 0;
    for (int run = 0; run < RUNS; ++run) {
        table t;
        char error[1024];
        double start = seconds_of(CLOCK_MONOTONIC);
        double cpu_start = seconds_of(CLOCK_PROCESS_CPUTIME_ID);
        int failed = table_read(path, &request, &t, error, sizeof error);
        double seconds = seconds_of(CLOCK_MONOTONIC) - start;
        double cpu_seconds = seconds_of(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
        if (failed) {
            fprintf(stderr, "bench_csv: %s\n", error);
            unlink(path);
            return 1;
        }
        double rate = (double)size / 1e6 / seconds;
        /* CPU time too: on a shared machine the wall clock also counts other jobs. */
        printf("run %d: %zu rows in %.3f s, %.1f MB/s (CPU time %.3f s, %.1f MB/s)\n", run + 1,
               t.n, seconds, rate, cpu_seconds, (double)size / 1e6 / cpu_seconds);
        if (rate > best)
            best = rate;
        table_free(&t);
    }
    printf("best of %d: %.1f MB/s\n", RUNS, best);
    unlink(path);
    return 0;
}
