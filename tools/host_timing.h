/* Wall-clock timing of host calls, shared by the CPU runners of `esmm bench`
 * so sgemm and CSR rows are timed the same way. */
#ifndef ESMM_HOST_TIMING_H
#define ESMM_HOST_TIMING_H

#include <stdint.h>

#include "cli_error.h"

typedef int (*host_call_t)(void *ctx, cli_error_t *err); /* 0, or -1 with err set */

/* Milliseconds on the monotonic clock. */
double host_now_ms(void);

/* Makes `warmup` untimed calls, then `runs` timed ones, ms[i] the i-th in
 * milliseconds (monotonic clock). Stops at the first failing call: -1. */
int host_time_runs(host_call_t call, void *ctx, int64_t warmup, int64_t runs, double *ms,
                   cli_error_t *err);

#endif
