/* Runs and times one GEMM problem on one backend. Two implementations share
 * this interface: the CPU backend (host buffers, wall clock) and the CUDA
 * backend (device buffers rotated past the L2 cache, CUDA events, cuBLAS). */
#ifndef ESMM_TOOLS_RUNNER_H
#define ESMM_TOOLS_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "cli_error.h"
#include "esmm.h"

/* The problem: operands densely stored on the host (tight leading dimensions). */
typedef struct {
    esmm_handle_t handle;
    esmm_operation_t transa, transb;
    int64_t m, n, k;
    float alpha, beta;
    const float *a, *b;
    const float *c0; /* initial C (m x n); NULL when beta == 0 */
} bench_problem_t;

typedef struct bench_runner bench_runner_t;

struct bench_runner {
    /* Runs `kernel` once on a C poisoned with NaN (or holding C0 when
     * beta != 0) and copies the result to out (m x n, leading dimension n). */
    int (*run_checked)(bench_runner_t *r, const char *kernel, float *out, cli_error_t *err);
    /* warmup untimed runs, then runs timed runs; ms[i] is run i in milliseconds. */
    int (*time_runs)(bench_runner_t *r, const char *kernel, int64_t warmup, int64_t runs,
                     double *ms, cli_error_t *err);
    void (*destroy)(bench_runner_t *r);
    bool has_cublas;
    int64_t copies;        /* copies of A, B and C cycled through while timing */
    const char *clock;     /* what measures the time */
};

/* Both return NULL with err set on failure. */
bench_runner_t *bench_runner_cpu_create(const bench_problem_t *p, cli_error_t *err);
bench_runner_t *bench_runner_cuda_create(const bench_problem_t *p, cli_error_t *err);

/* Ties the problem to operand buffers: "esmm" runs esmm_sgemm, any other name
 * the library kernel of that name. */
esmm_status_t bench_run_library(const bench_problem_t *p, const char *kernel, const float *a,
                                const float *b, float *c);

#endif
