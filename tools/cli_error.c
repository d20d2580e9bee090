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
