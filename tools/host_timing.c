#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "host_timing.h"

#include <time.h>

double host_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int host_time_runs(host_call_t call, void *ctx, int64_t warmup, int64_t runs, double *ms,
                   cli_error_t *err)
{
    for (int64_t i = 0; i < warmup; i++)
        if (call(ctx, err) != 0)
            return -1;
    for (int64_t i = 0; i < runs; i++) {
        const double start = host_now_ms();
        if (call(ctx, err) != 0)
            return -1;
        ms[i] = host_now_ms() - start;
    }
    return 0;
}
