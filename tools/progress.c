#define _POSIX_C_SOURCE 200809L /* fileno, isatty */
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

progress_t progress_begin(const char *name)
{
    return (progress_t){name, isatty(fileno(stderr)) == 1};
}

void progress_step(const progress_t *progress, int index, int count, const char *format, ...)
{
    if (!progress->shown)
        return;
    fflush(stdout); /* keeps the terminal's lines in order */
    fprintf(stderr, "esmm bench: %s [%d/%d] ", progress->name, index + 1, count);
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

void progress_end(const progress_t *progress)
{
    if (progress->shown)
        fprintf(stderr, "esmm bench: %s done\n", progress->name);
}
