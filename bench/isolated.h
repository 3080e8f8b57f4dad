/*
 * One benchmark configuration in a child process, so that the peak RSS the parent reads
 * back (wait4's rusage) is that configuration's alone, and the result comes back through
 * a pipe. Used by bench_em and bench_cqt.
 *
 * fork, pipe and wait4 are POSIX or BSD: a program defines _DEFAULT_SOURCE before its
 * first include.
 */
#ifndef MOE_BENCH_ISOLATED_H
#define MOE_BENCH_ISOLATED_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Fills *result (size bytes) from *arguments; runs in the child. */
typedef void (*isolated_work)(const void *arguments, void *result);

/* 0 when the child ran work and its whole result arrived in *result; -1 otherwise (then
   *result holds what it held before, or part of the child's). *peak_rss is the child's
   peak resident set in bytes, 0 when it could not be read. The result must fit in one
   pipe write (PIPE_BUF, at least 512 bytes). */
static inline int run_isolated_child(isolated_work work, const void *arguments, void *result,
                                     size_t size, double *peak_rss)
{
    int pipe_fds[2];
    *peak_rss = 0.0;
    if (pipe(pipe_fds) != 0)
        return -1;
    pid_t child = fork();
    if (child < 0) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return -1;
    }
    if (child == 0) {
        close(pipe_fds[0]);
        work(arguments, result);
        ssize_t written = write(pipe_fds[1], result, size);
        _exit(written == (ssize_t)size ? 0 : 1);
    }
    close(pipe_fds[1]);
    ssize_t got = read(pipe_fds[0], result, size);
    close(pipe_fds[0]);
    int status = 0;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) == child)
        *peak_rss = (double)usage.ru_maxrss * 1024.0;
    return got == (ssize_t)size ? 0 : -1;
}

#endif
