#include "cli_error.h"

#include <stdarg.h>
#include <stdio.h>

int cli_error_set(cli_error_t *err, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int cli_usage_error(const char *command, const char *help, const cli_error_t *err)
{
    fprintf(stderr, "%s: %s\n(run '%s' for the options)\n", command, err->text, help);
    return ESMM_EXIT_USAGE;
}

int cli_runtime_error(const char *command, const cli_error_t *err)
{
    fprintf(stderr, "%s: %s\n", command, err->text);
    return ESMM_EXIT_RUNTIME;
}

int cli_worse_exit(int a, int b)
{
    return a > b ? a : b;
}
