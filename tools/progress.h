/* Progress of a long sweep on stderr: shown when stderr is a terminal, quiet
 * in pipes, log files and CI. */
#ifndef ESMM_TOOLS_PROGRESS_H
#define ESMM_TOOLS_PROGRESS_H

#include <stdbool.h>

typedef struct {
    const char *name; /* "sweep targets", ... */
    bool shown;
} progress_t;

progress_t progress_begin(const char *name);
/* Before step `index` (0-based) of `count`; the rest is printf's. */
void progress_step(const progress_t *progress, int index, int count, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
void progress_end(const progress_t *progress);

#endif
