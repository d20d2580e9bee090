/* Runs and times one CSR product (esmm_scsrmm / esmm_scsrmv, and cuSPARSE on
 * the CUDA backend) for `esmm bench --op csrmm|csrmv`. Two implementations
 * share this interface: the CPU backend (host buffers, wall clock) and the
 * CUDA backend (B and C rotated past the L2 cache, CUDA events, one stream
 * for esmm and cuSPARSE alike). */
#ifndef ESMM_TOOLS_CSR_RUNNER_H
#define ESMM_TOOLS_CSR_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "cli_args.h"
#include "cli_error.h"
#include "esmm.h"

/* C = alpha op(W) B + beta C on the host: W rows x cols in CSR, op(W) m x k,
 * B k x n and C m x n row-major with tight leading dimensions (n = 1 for
 * csrmv, where B is x and C is y). */
typedef struct {
    esmm_handle_t handle;
    bench_op_t op; /* BENCH_OP_CSRMM or BENCH_OP_CSRMV */
    esmm_operation_t transpose;
    int64_t rows, cols, nnz;
    const int32_t *row_ptr, *col_idx;
    const float *values; /* NULL: every entry weighs `value` */
    float value;
    int64_t m, n, k;
    float alpha, beta;
    const float *b;
    const float *c0; /* initial C; NULL when beta == 0 */
} csr_problem_t;

typedef enum {
    CSR_KERNEL_ESMM = 0,            /* esmm_scsrmm / esmm_scsrmv; T on a prepared W */
    CSR_KERNEL_ESMM_UNPREPARED = 1, /* the same on a W never prepared (T: atomics) */
    CSR_KERNEL_DENSE_B = 2,         /* esmm_scsrmm_kernel "csr-dense-b" */
    CSR_KERNEL_SPARSE_B = 3,        /* esmm_scsrmm_kernel "csr-sparse-b" */
    CSR_KERNEL_CUSPARSE = 4         /* cusparseSpMM / cusparseSpMV with one algorithm */
} csr_kernel_kind_t;

/* One row of the benchmark. */
typedef struct {
    const char *name;
    csr_kernel_kind_t kind;
    int algorithm; /* CSR_KERNEL_CUSPARSE: 0 = the default, i = CSR_ALGi */
} csr_kernel_t;

/* What a run returns besides 0: -1 (err set) when it failed, and
 * CSR_RUN_UNSUPPORTED (err says why) when cuSPARSE refuses the case for that
 * algorithm. */
#define CSR_RUN_UNSUPPORTED 1

typedef struct csr_runner csr_runner_t;

struct csr_runner {
    /* Runs the kernel once on a C poisoned with NaN (or holding C0 when
     * beta != 0) and copies the result to out (m x n). Setup the kernel needs
     * once (esmm_csr_prepare, cuSPARSE's buffer and preprocess) happens on
     * its first run, before any timing. */
    int (*run_checked)(csr_runner_t *r, const csr_kernel_t *kernel, float *out, cli_error_t *err);
    /* warmup untimed runs, then `runs` timed ones; ms[i] is run i. */
    int (*time_runs)(csr_runner_t *r, const csr_kernel_t *kernel, int64_t warmup, int64_t runs,
                     double *ms, cli_error_t *err);
    void (*destroy)(csr_runner_t *r);
    bool has_cusparse;
    int64_t copies;       /* copies of B and C cycled through while timing */
    int64_t copy_bytes;   /* bytes of one copy of B and C */
    const char *clock;    /* what measures the time */
    const char *notice;   /* a remark on the timing for the report, or NULL */

    csr_problem_t p;
    /* esmm's descriptors of W, over the runner's arrays: `prepared` gets
     * esmm_csr_prepare(transpose) on first use, `plain` never does. */
    esmm_csr_t prepared, plain;
    bool prepare_done;
};

/* Both return NULL with err set on failure. */
csr_runner_t *csr_runner_cpu_create(const csr_problem_t *p, cli_error_t *err);
csr_runner_t *csr_runner_cuda_create(const csr_problem_t *p, cli_error_t *err);

/* Creates r->prepared and r->plain over W's arrays as the backend holds
 * them. Returns 0, or -1 with err set. */
int csr_runner_describe_w(csr_runner_t *r, const int32_t *row_ptr, const int32_t *col_idx,
                          const float *values, cli_error_t *err);

/* The esmm call of an esmm kernel (not cuSPARSE) on B and C as the backend
 * holds them; prepares W first when the kernel needs it and it has not been. */
esmm_status_t csr_runner_esmm(csr_runner_t *r, const csr_kernel_t *kernel, const float *b,
                              float *c);

void csr_runner_release_w(csr_runner_t *r);

/* cuSPARSE's CSR algorithms: the enumerator's name (e.g.
 * "CUSPARSE_SPMM_CSR_ALG3") of algorithm index `algorithm` for the op, or
 * NULL when the op has no such algorithm (SpMV has no ALG3). */
#define CSR_CUSPARSE_ALGORITHMS 4
const char *csr_cusparse_algorithm_name(bench_op_t op, int algorithm);

#endif
