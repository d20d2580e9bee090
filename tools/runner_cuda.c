#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* Each copy starts 256-byte aligned, like a fresh cudaMalloc, so every copy
 * sees the same alignment and vector paths. */
#define COPY_ALIGN_FLOATS 64
/* Enough copies that a copy is reused only after at least this many times the
 * L2 size of other data has gone through, so no run starts with a warm L2. */
#define L2_MULTIPLE 2
#define MAX_COPIES 4096
/* Timed runs are queued in batches of this many event pairs. */
#define EVENT_BATCH 128

typedef struct {
    bench_runner_t base; /* first, so the runner pointer is this struct's */
    bench_problem_t p;
    cudaStream_t stream;
    cublasHandle_t cublas;
    int64_t a_stride, b_stride, c_stride; /* floats per copy */
    float *a, *b, *c;                     /* device: copies x stride each */
    int64_t next_copy;
    cudaEvent_t start[EVENT_BATCH], stop[EVENT_BATCH];
    int events_created;
} cuda_runner_t;

static int64_t round_up(int64_t x, int64_t to)
{
    return (x + to - 1) / to * to;
}

static int cuda_fail(cli_error_t *err, const char *what, cudaError_t e)
{
    return cli_error_set(err, "%s: %s", what, cudaGetErrorString(e));
}

static int launch(cuda_runner_t *r, const char *kernel, int64_t copy, cli_error_t *err)
{
    const float *a = r->a + copy * r->a_stride;
    const float *b = r->b + copy * r->b_stride;
    float *c = r->c + copy * r->c_stride;
    const bench_problem_t *p = &r->p;
    if (strcmp(kernel, "cublas") == 0) {
        if (!r->base.has_cublas)
            return cli_error_set(err, "cublas: cuBLAS could not be initialised");
        /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
         * row-major buffers read as column-major are already the transposes. */
        int64_t lda = p->transa == ESMM_OP_N ? p->k : p->m;
        int64_t ldb = p->transb == ESMM_OP_N ? p->n : p->k;
        cublasStatus_t cs = cublasSgemm_64(
            r->cublas, p->transb == ESMM_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T,
            p->transa == ESMM_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T, p->n, p->m, p->k, &p->alpha, b, ldb,
            a, lda, &p->beta, c, p->n);
        if (cs != CUBLAS_STATUS_SUCCESS)
            return cli_error_set(err, "cublas: %s", cublasGetStatusString(cs));
        return 0;
    }
    esmm_status_t st = bench_run_library(p, kernel, a, b, c);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "%s: %s", kernel, esmm_status_string(st));
    return 0;
}

/* Waits for the stream and turns a pending (asynchronous) error into a message. */
static int finish(cuda_runner_t *r, const char *kernel, cli_error_t *err)
{
    cudaError_t e = cudaStreamSynchronize(r->stream);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return cli_error_set(err, "%s: CUDA error: %s", kernel, cudaGetErrorString(e));
    return 0;
}

static int cuda_run_checked(bench_runner_t *base, const char *kernel, float *out, cli_error_t *err)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    const bench_problem_t *p = &r->p;
    size_t c_bytes = (size_t)(p->m * p->n) * sizeof(float);
    /* All-ones bytes are a NaN: a kernel that leaves an element unwritten fails. */
    cudaError_t e = p->c0 != NULL
                        ? cudaMemcpyAsync(r->c, p->c0, c_bytes, cudaMemcpyHostToDevice, r->stream)
                        : cudaMemsetAsync(r->c, 0xff, c_bytes, r->stream);
    if (e != cudaSuccess)
        return cuda_fail(err, "preparing C", e);
    if (launch(r, kernel, 0, err) != 0)
        return -1;
    e = cudaMemcpyAsync(out, r->c, c_bytes, cudaMemcpyDeviceToHost, r->stream);
    if (e != cudaSuccess)
        return cuda_fail(err, "copying C back", e);
    return finish(r, kernel, err);
}

static int64_t take_copy(cuda_runner_t *r)
{
    int64_t copy = r->next_copy;
    r->next_copy = (r->next_copy + 1) % r->base.copies;
    return copy;
}

static int cuda_time_runs(bench_runner_t *base, const char *kernel, int64_t warmup, int64_t runs,
                          double *ms, cli_error_t *err)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    for (int64_t i = 0; i < warmup; i++)
        if (launch(r, kernel, take_copy(r), err) != 0)
            return -1;
    for (int64_t done = 0; done < runs;) {
        int64_t batch = runs - done < EVENT_BATCH ? runs - done : EVENT_BATCH;
        for (int64_t i = 0; i < batch; i++) {
            cudaEventRecord(r->start[i], r->stream);
            if (launch(r, kernel, take_copy(r), err) != 0)
                return -1;
            cudaEventRecord(r->stop[i], r->stream);
        }
        if (finish(r, kernel, err) != 0)
            return -1;
        for (int64_t i = 0; i < batch; i++) {
            float elapsed = 0.0f;
            cudaError_t e = cudaEventElapsedTime(&elapsed, r->start[i], r->stop[i]);
            if (e != cudaSuccess)
                return cuda_fail(err, "reading the CUDA events", e);
            ms[done + i] = elapsed;
        }
        done += batch;
    }
    return 0;
}

static void cuda_destroy(bench_runner_t *base)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    if (r->stream != NULL)
        cudaStreamSynchronize(r->stream);
    for (int i = 0; i < r->events_created; i++) {
        cudaEventDestroy(r->start[i]);
        cudaEventDestroy(r->stop[i]);
    }
    cudaFree(r->a);
    cudaFree(r->b);
    cudaFree(r->c);
    if (r->base.has_cublas)
        cublasDestroy(r->cublas);
    esmm_set_stream(r->p.handle, NULL);
    if (r->stream != NULL)
        cudaStreamDestroy(r->stream);
    free(r);
}

/* How many copies of the working set to cycle through: enough to exceed
 * L2_MULTIPLE x L2, as long as they fit in half the free device memory. */
static int64_t choose_copies(int64_t working_set_bytes, esmm_handle_t handle)
{
    esmm_device_info_t info;
    if (esmm_get_device_info(handle, &info) != ESMM_STATUS_SUCCESS || info.l2_bytes == 0)
        return 1;
    int64_t target = (int64_t)info.l2_bytes * L2_MULTIPLE;
    if (working_set_bytes >= target)
        return 1;
    int64_t copies = (target + working_set_bytes - 1) / working_set_bytes;
    if (copies > MAX_COPIES)
        copies = MAX_COPIES;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        int64_t affordable = (int64_t)(free_bytes / 2) / working_set_bytes;
        if (copies > affordable)
            copies = affordable > 1 ? affordable : 1;
    }
    return copies;
}

/* Uploads one copy and replicates it, doubling the filled part each time. */
static int fill_copies(float *slab, const float *host, int64_t count, int64_t stride,
                       int64_t copies, const char *what, cli_error_t *err)
{
    cudaError_t e = host != NULL
                        ? cudaMemcpy(slab, host, (size_t)count * sizeof(float), cudaMemcpyHostToDevice)
                        : cudaMemset(slab, 0, (size_t)count * sizeof(float));
    for (int64_t filled = 1; e == cudaSuccess && filled < copies;) {
        int64_t now = copies - filled < filled ? copies - filled : filled;
        e = cudaMemcpy(slab + filled * stride, slab, (size_t)(now * stride) * sizeof(float),
                       cudaMemcpyDeviceToDevice);
        filled += now;
    }
    if (e != cudaSuccess)
        return cuda_fail(err, what, e);
    return 0;
}

static int allocate_slab(float **slab, int64_t stride, int64_t copies, const char *what,
                         cli_error_t *err)
{
    size_t bytes = (size_t)(stride * copies) * sizeof(float);
    cudaError_t e = cudaMalloc((void **)slab, bytes);
    if (e != cudaSuccess) {
        *slab = NULL;
        cudaGetLastError(); /* an allocation failure is not sticky; clear it */
        return cli_error_set(err, "cannot allocate %.1f MiB of device memory for %s: %s",
                             (double)bytes / (1 << 20), what, cudaGetErrorString(e));
    }
    return 0;
}

static int setup(cuda_runner_t *r, cli_error_t *err)
{
    const bench_problem_t *p = &r->p;
    cudaError_t e = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return cuda_fail(err, "creating a CUDA stream", e);
    esmm_status_t st = esmm_set_stream(p->handle, r->stream);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "esmm_set_stream: %s", esmm_status_string(st));
    for (; r->events_created < EVENT_BATCH; r->events_created++) {
        e = cudaEventCreate(&r->start[r->events_created]);
        if (e == cudaSuccess) {
            e = cudaEventCreate(&r->stop[r->events_created]);
            if (e != cudaSuccess)
                cudaEventDestroy(r->start[r->events_created]);
        }
        if (e != cudaSuccess)
            return cuda_fail(err, "creating CUDA events", e);
    }
    /* cuBLAS FP32 as the baseline: default math mode, which never uses TF32
     * for cublasSgemm (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH). */
    r->base.has_cublas = cublasCreate(&r->cublas) == CUBLAS_STATUS_SUCCESS;
    if (r->base.has_cublas) {
        cublasMath_t mode = CUBLAS_TF32_TENSOR_OP_MATH;
        if (cublasSetStream(r->cublas, r->stream) != CUBLAS_STATUS_SUCCESS ||
            cublasSetMathMode(r->cublas, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS ||
            cublasGetMathMode(r->cublas, &mode) != CUBLAS_STATUS_SUCCESS ||
            mode != CUBLAS_DEFAULT_MATH) {
            cublasDestroy(r->cublas);
            r->base.has_cublas = false;
        }
    }

    r->a_stride = round_up(p->m * p->k, COPY_ALIGN_FLOATS);
    r->b_stride = round_up(p->k * p->n, COPY_ALIGN_FLOATS);
    r->c_stride = round_up(p->m * p->n, COPY_ALIGN_FLOATS);
    int64_t working_set = (r->a_stride + r->b_stride + r->c_stride) * (int64_t)sizeof(float);
    r->base.copies = choose_copies(working_set, p->handle);
    if (allocate_slab(&r->a, r->a_stride, r->base.copies, "A", err) != 0 ||
        allocate_slab(&r->b, r->b_stride, r->base.copies, "B", err) != 0 ||
        allocate_slab(&r->c, r->c_stride, r->base.copies, "C", err) != 0)
        return -1;
    if (fill_copies(r->a, p->a, p->m * p->k, r->a_stride, r->base.copies, "uploading A", err) != 0 ||
        fill_copies(r->b, p->b, p->k * p->n, r->b_stride, r->base.copies, "uploading B", err) != 0 ||
        fill_copies(r->c, p->c0, p->m * p->n, r->c_stride, r->base.copies, "uploading C", err) != 0)
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
    r->p = *p;
    r->base.run_checked = cuda_run_checked;
    r->base.time_runs = cuda_time_runs;
    r->base.destroy = cuda_destroy;
    r->base.copies = 1;
    r->base.clock = "CUDA events";
    if (setup(r, err) != 0) {
        cuda_destroy(&r->base);
        return NULL;
    }
    return &r->base;
}
