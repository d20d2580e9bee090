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
    bool keep_copy;  /* cached B patterns keep B's copy (esmm_pattern_keep_copy) */
} bench_problem_t;

/* What one row of the benchmark runs. */
typedef struct {
    const char *name; /* a library kernel, "esmm", "cublas", "extract-a" or "extract-b" */
    bool cached_b;    /* "esmm" given B's pattern, extracted before timing */
} bench_kernel_t;

typedef enum {
    BENCH_OPERAND_NONE = 0,
    BENCH_OPERAND_A = 1,
    BENCH_OPERAND_B = 2
} bench_operand_t;

/* The operand an extraction row extracts; BENCH_OPERAND_NONE for GEMM kernels. */
bench_operand_t bench_kernel_extracts(const char *name);

/* True for kernels of the esmm library (esmm and the named ones). */
bool bench_kernel_is_library(const char *name);

typedef struct bench_runner bench_runner_t;

struct bench_runner {
    /* Queues one GEMM run on copy `copy` of the operands (on the CPU backend
     * it runs at once). */
    int (*launch)(bench_runner_t *r, const bench_kernel_t *kernel, int64_t copy, cli_error_t *err);
    /* Waits for everything queued; an asynchronous error becomes a message
     * naming `what`. */
    int (*wait)(bench_runner_t *r, const char *what, cli_error_t *err);
    /* Runs a GEMM kernel once on a C poisoned with NaN (or holding C0 when
     * beta != 0) and copies the result to out (m x n, leading dimension n). */
    int (*run_checked)(bench_runner_t *r, const bench_kernel_t *kernel, float *out,
                       cli_error_t *err);
    /* warmup untimed runs, then runs timed runs; ms[i] is run i in
     * milliseconds. Extraction rows only where times_extraction. */
    int (*time_runs)(bench_runner_t *r, const bench_kernel_t *kernel, int64_t warmup, int64_t runs,
                     double *ms, cli_error_t *err);
    void (*destroy)(bench_runner_t *r);
    bool has_cublas;
    bool times_extraction;
    /* Host time of one call in the last time_runs (what queuing it cost the
     * calling thread), in microseconds; NaN where not measured. */
    double host_us;
    int64_t copies;    /* copies of A, B and C cycled through while timing */
    const char *clock; /* what measures the time */

    /* Copy c of A is at a + c * a_stride, and so on: device pointers on the
     * CUDA backend. */
    bench_problem_t p;
    const float *a, *b;
    float *c;
    int64_t a_stride, b_stride, c_stride;
    esmm_pattern_t *patterns_b; /* B's pattern per copy once bench_runner_cache_b ran */
};

/* Both return NULL with err set on failure. */
bench_runner_t *bench_runner_cpu_create(const bench_problem_t *p, cli_error_t *err);
bench_runner_t *bench_runner_cuda_create(const bench_problem_t *p, cli_error_t *err);

/* The library call of a GEMM kernel on copy `copy`: esmm_sgemm for "esmm"
 * (esmm_sgemm_patterns with the copy's B pattern when cached_b), else the
 * library kernel of that name. */
esmm_status_t bench_runner_library(bench_runner_t *r, const bench_kernel_t *kernel, int64_t copy);

/* Extracts the pattern of op(A) or op(B) from copy `copy`. */
esmm_status_t bench_runner_extract(bench_runner_t *r, bench_operand_t operand, int64_t copy,
                                   esmm_pattern_t *pattern);

/* Extracts B's pattern of every copy, for kernels with cached_b (each keeping
 * that copy of B laid out along n where p.keep_copy). */
int bench_runner_cache_b(bench_runner_t *r, cli_error_t *err);

/* One more run of a library kernel with extraction timing on, and what
 * esmm_get_last_info says of it. Timing is off again afterwards. */
int bench_runner_stats(bench_runner_t *r, const bench_kernel_t *kernel, esmm_info_t *info,
                       cli_error_t *err);

/* Takes a pattern an esmm_pattern_extract_* call (named `extractor`) just
 * returned with status `extracted`: its esmm_pattern_density, then destroys
 * it. Returns 0, or the CLI error code with err set. */
int bench_pattern_density(esmm_status_t extracted, esmm_pattern_t pattern, const char *extractor,
                          double *density, cli_error_t *err);

/* esmm_pattern_density of the library's extraction of one operand. */
int bench_runner_extracted_density(bench_runner_t *r, bench_operand_t operand, double *density,
                                   cli_error_t *err);

/* Destroys the cached patterns (the runners' destroy functions call it). */
void bench_runner_release_patterns(bench_runner_t *r);

#endif
