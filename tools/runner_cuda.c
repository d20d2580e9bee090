#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_bench.h"
#include "host_timing.h"
#include "runner.h"

/* Timed runs are queued in batches of this many event pairs. */
#define EVENT_BATCH 128
/* Columns of the matrix read between timed extractions to evict the L2. */
#define FLUSH_COLUMNS 1024

typedef struct {
    bench_runner_t base; /* first, so the runner pointer is this struct's */
    cudaStream_t stream;
    cublasHandle_t cublas;
    float *a, *b, *c; /* device: copies x stride each */
    int64_t next_copy;
    cudaEvent_t start[EVENT_BATCH], stop[EVENT_BATCH];
    int events_created;
    size_t l2_bytes;      /* 0 when unknown */
    bool flush_tried;
    float *flush;         /* zeros read between timed extractions; NULL without one */
    int64_t flush_rows;
    stream_gate_t gate;
} cuda_runner_t;

static int cuda_launch(bench_runner_t *base, const bench_kernel_t *kernel, int64_t copy,
                       cli_error_t *err)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    const bench_problem_t *p = &base->p;
    if (strcmp(kernel->name, "cublas") == 0) {
        if (!base->has_cublas)
            return cli_error_set(err, "cublas: cuBLAS could not be initialised");
        /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
         * row-major buffers read as column-major are already the transposes. */
        int64_t lda = p->transa == ESMM_OP_N ? p->k : p->m;
        int64_t ldb = p->transb == ESMM_OP_N ? p->n : p->k;
        cublasStatus_t cs = cublasSgemm_64(
            r->cublas, p->transb == ESMM_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T,
            p->transa == ESMM_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T, p->n, p->m, p->k, &p->alpha,
            r->b + copy * base->b_stride, ldb, r->a + copy * base->a_stride, lda, &p->beta,
            r->c + copy * base->c_stride, p->n);
        if (cs != CUBLAS_STATUS_SUCCESS)
            return cli_error_set(err, "cublas: %s", cublasGetStatusString(cs));
        return 0;
    }
    esmm_status_t st = bench_runner_library(base, kernel, copy);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "%s: %s", kernel->name, esmm_status_string(st));
    return 0;
}

static int cuda_wait(bench_runner_t *base, const char *what, cli_error_t *err)
{
    return bench_cuda_wait(((cuda_runner_t *)base)->stream, what, err);
}

static int cuda_run_checked(bench_runner_t *base, const bench_kernel_t *kernel, float *out,
                            cli_error_t *err)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    const bench_problem_t *p = &base->p;
    size_t c_bytes = (size_t)(p->m * p->n) * sizeof(float);
    cudaError_t e = bench_reset_c(r->c, p->c0, c_bytes, r->stream);
    if (e != cudaSuccess)
        return bench_cuda_fail(err, "preparing C", e);
    if (cuda_launch(base, kernel, 0, err) != 0)
        return -1;
    e = cudaMemcpyAsync(out, r->c, c_bytes, cudaMemcpyDeviceToHost, r->stream);
    if (e != cudaSuccess)
        return bench_cuda_fail(err, "copying C back", e);
    return cuda_wait(base, kernel->name, err);
}

static int64_t take_copy(cuda_runner_t *r)
{
    int64_t copy = r->next_copy;
    r->next_copy = (r->next_copy + 1) % r->base.copies;
    return copy;
}

static int time_gemm(cuda_runner_t *r, const bench_kernel_t *kernel, int64_t warmup, int64_t runs,
                     double *ms, cli_error_t *err)
{
    for (int64_t i = 0; i < warmup; i++)
        if (cuda_launch(&r->base, kernel, take_copy(r), err) != 0)
            return -1;
    double host_ms = 0.0;
    for (int64_t done = 0; done < runs;) {
        int64_t batch = runs - done < EVENT_BATCH ? runs - done : EVENT_BATCH;
        for (int64_t i = 0; i < batch; i++) {
            cudaEventRecord(r->start[i], r->stream);
            const double queued = host_now_ms();
            if (cuda_launch(&r->base, kernel, take_copy(r), err) != 0)
                return -1;
            host_ms += host_now_ms() - queued;
            cudaEventRecord(r->stop[i], r->stream);
        }
        if (cuda_wait(&r->base, kernel->name, err) != 0 || bench_read_events(r->start, r->stop, batch, ms + done, err) != 0)
            return -1;
        done += batch;
    }
    r->base.host_us = runs > 0 ? host_ms * 1e3 / (double)runs : NAN;
    return 0;
}

/* Reads the zero-filled flush matrix through an extraction, so the next
 * timed extraction finds none of its operand in the L2 (reads leave no dirty
 * lines to write back, unlike a memset). */
static esmm_status_t flush_l2(cuda_runner_t *r, esmm_pattern_t *pattern)
{
    return esmm_pattern_extract_a(r->base.p.handle, ESMM_OP_N, r->flush_rows, FLUSH_COLUMNS,
                                  r->flush, FLUSH_COLUMNS, pattern);
}

static void destroy_patterns(esmm_pattern_t *patterns, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        esmm_pattern_destroy(patterns[i]);
}

/* Queues one batch of timed extractions behind the gate; patterns gets the
 * timed and the flush patterns. Returns how many patterns it made, or
 * -1 - that count (with err set) when a call failed. */
static int64_t queue_extractions(cuda_runner_t *r, bench_operand_t operand, int64_t batch,
                                 esmm_pattern_t *patterns, const char *name, cli_error_t *err)
{
    int64_t made = 0;
    for (int64_t i = 0; i < batch; i++) {
        esmm_status_t st = ESMM_STATUS_SUCCESS;
        if (r->flush != NULL)
            st = flush_l2(r, &patterns[made++]);
        if (st == ESMM_STATUS_SUCCESS) {
            cudaEventRecord(r->start[i], r->stream);
            st = bench_runner_extract(&r->base, operand, take_copy(r), &patterns[made++]);
            cudaEventRecord(r->stop[i], r->stream);
        }
        if (st != ESMM_STATUS_SUCCESS) {
            cli_error_set(err, "%s: %s", name, esmm_status_string(st));
            return -1 - made;
        }
    }
    return made;
}

/* The flush matrix of the extraction rows: BENCH_L2_MULTIPLE x L2 of zeros, made
 * on first use. Without it (no L2 size, no memory) extraction times may start
 * with a warm L2. */
static void allocate_flush(cuda_runner_t *r)
{
    if (r->flush_tried || r->l2_bytes == 0)
        return;
    r->flush_tried = true;
    r->flush_rows = (int64_t)(r->l2_bytes * BENCH_L2_MULTIPLE / sizeof(float) / FLUSH_COLUMNS);
    size_t bytes = (size_t)(r->flush_rows * FLUSH_COLUMNS) * sizeof(float);
    if (cudaMalloc((void **)&r->flush, bytes) != cudaSuccess ||
        cudaMemset(r->flush, 0, bytes) != cudaSuccess) {
        cudaFree(r->flush);
        r->flush = NULL;
        cudaGetLastError();
    }
}

static int time_extraction(cuda_runner_t *r, const bench_kernel_t *kernel, int64_t warmup,
                           int64_t runs, double *ms, cli_error_t *err)
{
    bench_operand_t operand = bench_kernel_extracts(kernel->name);
    esmm_pattern_t patterns[2 * EVENT_BATCH];
    allocate_flush(r);
    /* Warm-up makes the same calls unheld, so first-call setup never happens
     * while a batch is held. */
    for (int64_t i = 0; i < warmup; i++) {
        esmm_pattern_t flushed = NULL, pattern = NULL;
        esmm_status_t st = r->flush != NULL ? flush_l2(r, &flushed) : ESMM_STATUS_SUCCESS;
        if (st == ESMM_STATUS_SUCCESS)
            st = bench_runner_extract(&r->base, operand, take_copy(r), &pattern);
        esmm_pattern_destroy(flushed);
        esmm_pattern_destroy(pattern);
        if (st != ESMM_STATUS_SUCCESS)
            return cli_error_set(err, "%s: %s", kernel->name, esmm_status_string(st));
    }
    atomic_store(&r->gate.timed_out, 0);
    for (int64_t done = 0; done < runs;) {
        int64_t batch = runs - done < EVENT_BATCH ? runs - done : EVENT_BATCH;
        memset(patterns, 0, sizeof patterns);
        bench_gate_close(&r->gate, r->stream);
        int64_t made = queue_extractions(r, operand, batch, patterns, kernel->name, err);
        bench_gate_open(&r->gate);
        int status = cuda_wait(&r->base, kernel->name, made < 0 ? NULL : err);
        destroy_patterns(patterns, made < 0 ? -1 - made : made);
        if (made < 0 || status != 0 || bench_read_events(r->start, r->stop, batch, ms + done, err) != 0)
            return -1;
        done += batch;
    }
    if (atomic_load(&r->gate.timed_out))
        fprintf(stderr, "esmm bench: %s: the library waited for the device while runs were "
                        "queued; these times include host overhead\n", kernel->name);
    return 0;
}

static int cuda_time_runs(bench_runner_t *base, const bench_kernel_t *kernel, int64_t warmup,
                          int64_t runs, double *ms, cli_error_t *err)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    if (bench_kernel_extracts(kernel->name) != BENCH_OPERAND_NONE)
        return time_extraction(r, kernel, warmup, runs, ms, err);
    return time_gemm(r, kernel, warmup, runs, ms, err);
}

static void cuda_destroy(bench_runner_t *base)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    if (r->stream != NULL)
        cudaStreamSynchronize(r->stream);
    bench_runner_release_patterns(base);
    bench_destroy_events(r->start, r->stop, r->events_created);
    cudaFree(r->a);
    cudaFree(r->b);
    cudaFree(r->c);
    cudaFree(r->flush);
    if (base->has_cublas)
        cublasDestroy(r->cublas);
    esmm_set_stream(base->p.handle, NULL);
    if (r->stream != NULL)
        cudaStreamDestroy(r->stream);
    free(r);
}

static int setup(cuda_runner_t *r, cli_error_t *err)
{
    bench_runner_t *base = &r->base;
    const bench_problem_t *p = &base->p;
    cudaError_t e = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return bench_cuda_fail(err, "creating a CUDA stream", e);
    esmm_status_t st = esmm_set_stream(p->handle, r->stream);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "esmm_set_stream: %s", esmm_status_string(st));
    if (bench_create_events(r->start, r->stop, EVENT_BATCH, &r->events_created, err) != 0)
        return -1;
    /* cuBLAS FP32 as the baseline: default math mode, which never uses TF32
     * for cublasSgemm (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH). */
    base->has_cublas = cublasCreate(&r->cublas) == CUBLAS_STATUS_SUCCESS;
    if (base->has_cublas) {
        cublasMath_t mode = CUBLAS_TF32_TENSOR_OP_MATH;
        if (cublasSetStream(r->cublas, r->stream) != CUBLAS_STATUS_SUCCESS ||
            cublasSetMathMode(r->cublas, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS ||
            cublasGetMathMode(r->cublas, &mode) != CUBLAS_STATUS_SUCCESS ||
            mode != CUBLAS_DEFAULT_MATH) {
            cublasDestroy(r->cublas);
            base->has_cublas = false;
        }
    }

    esmm_device_info_t info;
    r->l2_bytes = esmm_get_device_info(p->handle, &info) == ESMM_STATUS_SUCCESS ? info.l2_bytes : 0;
    base->a_stride = bench_round_up(p->m * p->k, BENCH_COPY_ALIGN_FLOATS);
    base->b_stride = bench_round_up(p->k * p->n, BENCH_COPY_ALIGN_FLOATS);
    base->c_stride = bench_round_up(p->m * p->n, BENCH_COPY_ALIGN_FLOATS);
    int64_t working_set = (base->a_stride + base->b_stride + base->c_stride) * (int64_t)sizeof(float);
    base->copies = bench_choose_copies(working_set, r->l2_bytes);
    if (bench_device_alloc((void **)&r->a, (size_t)(base->a_stride * base->copies) * sizeof(float), "A", err) != 0 ||
        bench_device_alloc((void **)&r->b, (size_t)(base->b_stride * base->copies) * sizeof(float), "B", err) != 0 ||
        bench_device_alloc((void **)&r->c, (size_t)(base->c_stride * base->copies) * sizeof(float), "C", err) != 0)
        return -1;
    base->a = r->a;
    base->b = r->b;
    base->c = r->c;
    if (bench_fill_copies(r->a, p->a, p->m * p->k, base->a_stride, base->copies, "uploading A", err) != 0 ||
        bench_fill_copies(r->b, p->b, p->k * p->n, base->b_stride, base->copies, "uploading B", err) != 0 ||
        bench_fill_copies(r->c, p->c0, p->m * p->n, base->c_stride, base->copies, "uploading C", err) != 0)
        return -1;
    return 0;
}

bench_runner_t *bench_runner_cuda_create(const bench_problem_t *p, cli_error_t *err)
{
    cuda_runner_t *r = calloc(1, sizeof *r);
    if (r == NULL) {
        cli_error_set(err, "out of host memory");
        return NULL;
    }
    bench_runner_t *base = &r->base;
    base->p = *p;
    base->launch = cuda_launch;
    base->wait = cuda_wait;
    base->run_checked = cuda_run_checked;
    base->time_runs = cuda_time_runs;
    base->destroy = cuda_destroy;
    base->times_extraction = true;
    base->copies = 1;
    base->clock = "CUDA events";
    if (setup(r, err) != 0) {
        cuda_destroy(base);
        return NULL;
    }
    return base;
}
