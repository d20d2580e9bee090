/* A minimal test harness: CHECK counts, a failure prints where and why, and
 * check_finish prints "N passed, N failed, N skipped" and gives the exit code
 * (77 = skipped, when nothing ran and something was skipped). */
#ifndef ESMM_TEST_CHECK_H
#define ESMM_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int check_passed_count;
static int check_failed_count;
static int check_skipped_count;

static inline void check_record(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        check_passed_count++;
        return;
    }
    check_failed_count++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* CHECK(condition, printf-style message describing the case). */
#define CHECK(cond, ...) check_record((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

static inline void check_skip(const char *why)
{
    check_skipped_count++;
    printf("skipped: %s\n", why);
}

static inline int check_finish(void)
{
    printf("%d passed, %d failed, %d skipped\n", check_passed_count, check_failed_count,
           check_skipped_count);
    if (check_failed_count > 0)
        return 1;
    if (check_passed_count == 0 && check_skipped_count > 0)
        return 77;
    return 0;
}

#endif
