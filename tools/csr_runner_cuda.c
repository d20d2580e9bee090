#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csr_runner.h"
#include "cuda_bench.h"

/* Timed runs are queued in batches of this many, behind a gate: few enough
 * that a batch never fills the launch queue while the stream is held. */
#define EVENT_BATCH 32

static const char *const spmm_algorithm_names[CSR_CUSPARSE_ALGORITHMS] = {
    "CUSPARSE_SPMM_ALG_DEFAULT", "CUSPARSE_SPMM_CSR_ALG1", "CUSPARSE_SPMM_CSR_ALG2",
    "CUSPARSE_SPMM_CSR_ALG3"};
static const cusparseSpMMAlg_t spmm_algorithms[CSR_CUSPARSE_ALGORITHMS] = {
    CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2,
    CUSPARSE_SPMM_CSR_ALG3};
#define SPMV_ALGORITHM_COUNT 3
static const char *const spmv_algorithm_names[SPMV_ALGORITHM_COUNT] = {
    "CUSPARSE_SPMV_ALG_DEFAULT", "CUSPARSE_SPMV_CSR_ALG1", "CUSPARSE_SPMV_CSR_ALG2"};
static const cusparseSpMVAlg_t spmv_algorithms[SPMV_ALGORITHM_COUNT] = {
    CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};

const char *csr_cusparse_algorithm_name(bench_op_t op, int algorithm)
{
    if (algorithm < 0)
        return NULL;
    if (op == BENCH_OP_CSRMV)
        return algorithm < SPMV_ALGORITHM_COUNT ? spmv_algorithm_names[algorithm] : NULL;
    return algorithm < CSR_CUSPARSE_ALGORITHMS ? spmm_algorithm_names[algorithm] : NULL;
}

/* One cuSPARSE algorithm, set up on first use: its own matrix descriptor
 * (preprocessing belongs to it), buffer and preprocessing. */
typedef struct {
    bool tried;
    int status; /* 0, or CSR_RUN_UNSUPPORTED with `why` */
    cli_error_t why;
    cusparseSpMatDescr_t w;
    void *buffer;
} cusparse_algorithm_t;

typedef struct {
    csr_runner_t base; /* first, so the runner pointer is this struct's */
    cudaStream_t stream;
    cusparseHandle_t sparse;
    int32_t *row_ptr, *col_idx;
    float *values;          /* per-entry weights; NULL when homogeneous */
    float *cusparse_values; /* cuSPARSE's weights: `values`, or the shared one per entry */
    float *b, *c;           /* copies x stride each */
    int64_t b_stride, c_stride;
    int64_t next_copy;
    cusparseDnMatDescr_t mat_b, mat_c; /* csrmm */
    cusparseDnVecDescr_t vec_x, vec_y; /* csrmv */
    cusparse_algorithm_t algorithms[CSR_CUSPARSE_ALGORITHMS];
    cudaEvent_t start[EVENT_BATCH], stop[EVENT_BATCH];
    int events_created;
    stream_gate_t gate;
} cuda_runner_t;

static bool is_spmv(const cuda_runner_t *r)
{
    return r->base.p.op == BENCH_OP_CSRMV;
}

static cusparseOperation_t cusparse_op(const cuda_runner_t *r)
{
    return r->base.p.transpose == ESMM_OP_T ? CUSPARSE_OPERATION_TRANSPOSE
                                            : CUSPARSE_OPERATION_NON_TRANSPOSE;
}

/* Points the dense descriptors at copy `copy` of B and C. */
static cusparseStatus_t select_copy(cuda_runner_t *r, int64_t copy)
{
    float *b = r->b + copy * r->b_stride, *c = r->c + copy * r->c_stride;
    cusparseStatus_t s = is_spmv(r) ? cusparseDnVecSetValues(r->vec_x, b)
                                    : cusparseDnMatSetValues(r->mat_b, b);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = is_spmv(r) ? cusparseDnVecSetValues(r->vec_y, c) : cusparseDnMatSetValues(r->mat_c, c);
    return s;
}

static cusparseStatus_t buffer_size(cuda_runner_t *r, const cusparse_algorithm_t *a, int index,
                                    size_t *bytes)
{
    const csr_problem_t *p = &r->base.p;
    if (is_spmv(r))
        return cusparseSpMV_bufferSize(r->sparse, cusparse_op(r), &p->alpha, a->w, r->vec_x,
                                       &p->beta, r->vec_y, CUDA_R_32F, spmv_algorithms[index],
                                       bytes);
    return cusparseSpMM_bufferSize(r->sparse, cusparse_op(r), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                   &p->alpha, a->w, r->mat_b, &p->beta, r->mat_c, CUDA_R_32F,
                                   spmm_algorithms[index], bytes);
}

static cusparseStatus_t preprocess(cuda_runner_t *r, const cusparse_algorithm_t *a, int index)
{
    const csr_problem_t *p = &r->base.p;
    if (is_spmv(r))
        return cusparseSpMV_preprocess(r->sparse, cusparse_op(r), &p->alpha, a->w, r->vec_x,
                                       &p->beta, r->vec_y, CUDA_R_32F, spmv_algorithms[index],
                                       a->buffer);
    return cusparseSpMM_preprocess(r->sparse, cusparse_op(r), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                   &p->alpha, a->w, r->mat_b, &p->beta, r->mat_c, CUDA_R_32F,
                                   spmm_algorithms[index], a->buffer);
}

static cusparseStatus_t multiply(cuda_runner_t *r, const cusparse_algorithm_t *a, int index)
{
    const csr_problem_t *p = &r->base.p;
    if (is_spmv(r))
        return cusparseSpMV(r->sparse, cusparse_op(r), &p->alpha, a->w, r->vec_x, &p->beta,
                            r->vec_y, CUDA_R_32F, spmv_algorithms[index], a->buffer);
    return cusparseSpMM(r->sparse, cusparse_op(r), CUSPARSE_OPERATION_NON_TRANSPOSE, &p->alpha,
                        a->w, r->mat_b, &p->beta, r->mat_c, CUDA_R_32F, spmm_algorithms[index],
                        a->buffer);
}

/* Records why cuSPARSE refused the algorithm; returns CSR_RUN_UNSUPPORTED. */
static int refuse(cusparse_algorithm_t *a, const char *algorithm, const char *call,
                  cusparseStatus_t s, cli_error_t *err)
{
    a->status = CSR_RUN_UNSUPPORTED;
    cli_error_set(&a->why, "%s: %s: %s", algorithm, call, cusparseGetErrorString(s));
    cli_error_set(err, "%s", a->why.text);
    return CSR_RUN_UNSUPPORTED;
}

/* Sets the algorithm up once: descriptor, buffer, preprocessing. Returns 0,
 * CSR_RUN_UNSUPPORTED or -1 (err set). */
static int cusparse_ready(cuda_runner_t *r, int index, cli_error_t *err)
{
    const csr_problem_t *p = &r->base.p;
    const char *name = csr_cusparse_algorithm_name(p->op, index);
    if (name == NULL)
        return cli_error_set(err, "cuSPARSE has no algorithm %d for this product", index);
    cusparse_algorithm_t *a = &r->algorithms[index];
    if (a->tried) {
        if (a->status != 0)
            cli_error_set(err, "%s", a->why.text);
        return a->status;
    }
    a->tried = true;
    cusparseStatus_t s = cusparseCreateCsr(&a->w, p->rows, p->cols, p->nnz, r->row_ptr,
                                           r->col_idx, r->cusparse_values, CUSPARSE_INDEX_32I,
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                           CUDA_R_32F);
    if (s != CUSPARSE_STATUS_SUCCESS) {
        a->w = NULL;
        return refuse(a, name, "cusparseCreateCsr", s, err);
    }
    if ((s = select_copy(r, 0)) != CUSPARSE_STATUS_SUCCESS)
        return refuse(a, name, "setting the dense operands", s, err);
    size_t bytes = 0;
    if ((s = buffer_size(r, a, index, &bytes)) != CUSPARSE_STATUS_SUCCESS)
        return refuse(a, name, is_spmv(r) ? "cusparseSpMV_bufferSize" : "cusparseSpMM_bufferSize",
                      s, err);
    cudaError_t e = cudaMalloc(&a->buffer, bytes > 0 ? bytes : 1);
    if (e != cudaSuccess) {
        a->buffer = NULL;
        cudaGetLastError();
        cusparseDestroySpMat(a->w);
        a->w = NULL;
        a->tried = false; /* not cuSPARSE's refusal: the row fails */
        return cli_error_set(err, "%s: cannot allocate its %.1f MiB buffer: %s", name,
                             (double)bytes / (1 << 20), cudaGetErrorString(e));
    }
    if ((s = preprocess(r, a, index)) != CUSPARSE_STATUS_SUCCESS)
        return refuse(a, name, is_spmv(r) ? "cusparseSpMV_preprocess" : "cusparseSpMM_preprocess",
                      s, err);
    return 0;
}

/* Queues one run on copy `copy`. Returns 0, -1 or CSR_RUN_UNSUPPORTED (err set). */
static int cuda_launch(cuda_runner_t *r, const csr_kernel_t *kernel, int64_t copy,
                       cli_error_t *err)
{
    if (kernel->kind != CSR_KERNEL_CUSPARSE) {
        esmm_status_t st = csr_runner_esmm(&r->base, kernel, r->b + copy * r->b_stride,
                                           r->c + copy * r->c_stride);
        if (st != ESMM_STATUS_SUCCESS)
            return cli_error_set(err, "%s: %s", kernel->name, esmm_status_string(st));
        return 0;
    }
    if (!r->base.has_cusparse)
        return cli_error_set(err, "%s: cuSPARSE could not be initialised", kernel->name);
    int status = cusparse_ready(r, kernel->algorithm, err);
    if (status != 0)
        return status;
    const cusparse_algorithm_t *a = &r->algorithms[kernel->algorithm];
    cusparseStatus_t s = select_copy(r, copy);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = multiply(r, a, kernel->algorithm);
    if (s != CUSPARSE_STATUS_SUCCESS) {
        cli_error_set(err, "%s: %s: %s", csr_cusparse_algorithm_name(r->base.p.op, kernel->algorithm),
                      is_spmv(r) ? "cusparseSpMV" : "cusparseSpMM", cusparseGetErrorString(s));
        return CSR_RUN_UNSUPPORTED;
    }
    return 0;
}

static int cuda_wait(cuda_runner_t *r, const char *what, cli_error_t *err)
{
    return bench_cuda_wait(r->stream, what, err);
}

static int cuda_run_checked(csr_runner_t *base, const csr_kernel_t *kernel, float *out,
                            cli_error_t *err)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    const csr_problem_t *p = &base->p;
    size_t c_bytes = (size_t)(p->m * p->n) * sizeof(float);
    cudaError_t e = bench_reset_c(r->c, p->c0, c_bytes, r->stream);
    if (e != cudaSuccess)
        return bench_cuda_fail(err, "preparing C", e);
    int status = cuda_launch(r, kernel, 0, err);
    if (status != 0) {
        cuda_wait(r, kernel->name, NULL);
        return status;
    }
    e = cudaMemcpyAsync(out, r->c, c_bytes, cudaMemcpyDeviceToHost, r->stream);
    if (e != cudaSuccess)
        return bench_cuda_fail(err, "copying C back", e);
    return cuda_wait(r, kernel->name, err);
}

static int64_t take_copy(cuda_runner_t *r)
{
    int64_t copy = r->next_copy;
    r->next_copy = (r->next_copy + 1) % r->base.copies;
    return copy;
}

/* Queues one gated batch of timed runs and reads its events into ms. */
static int time_batch(cuda_runner_t *r, const csr_kernel_t *kernel, int64_t batch, double *ms,
                      cli_error_t *err)
{
    bench_gate_close(&r->gate, r->stream);
    int status = 0;
    for (int64_t i = 0; i < batch && status == 0; i++) {
        cudaEventRecord(r->start[i], r->stream);
        status = cuda_launch(r, kernel, take_copy(r), err);
        cudaEventRecord(r->stop[i], r->stream);
    }
    bench_gate_open(&r->gate);
    if (status != 0) {
        cuda_wait(r, kernel->name, NULL);
        return -1;
    }
    if (cuda_wait(r, kernel->name, err) != 0)
        return -1;
    return bench_read_events(r->start, r->stop, batch, ms, err);
}

static int cuda_time_runs(csr_runner_t *base, const csr_kernel_t *kernel, int64_t warmup,
                          int64_t runs, double *ms, cli_error_t *err)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    /* Warm-up runs unheld, so first-call setup never happens while a batch is held. */
    for (int64_t i = 0; i < warmup; i++)
        if (cuda_launch(r, kernel, take_copy(r), err) != 0)
            return -1;
    if (cuda_wait(r, kernel->name, err) != 0)
        return -1;
    atomic_store(&r->gate.timed_out, 0);
    for (int64_t done = 0; done < runs;) {
        int64_t batch = runs - done < EVENT_BATCH ? runs - done : EVENT_BATCH;
        if (time_batch(r, kernel, batch, ms + done, err) != 0)
            return -1;
        done += batch;
    }
    if (atomic_load(&r->gate.timed_out))
        fprintf(stderr, "esmm bench: %s: a call waited for the device while runs were queued; "
                        "these times include host overhead\n", kernel->name);
    return 0;
}

static void cuda_destroy(csr_runner_t *base)
{
    cuda_runner_t *r = (cuda_runner_t *)base;
    if (r->stream != NULL)
        cudaStreamSynchronize(r->stream);
    csr_runner_release_w(base);
    for (int i = 0; i < CSR_CUSPARSE_ALGORITHMS; i++) {
        if (r->algorithms[i].w != NULL)
            cusparseDestroySpMat(r->algorithms[i].w);
        cudaFree(r->algorithms[i].buffer);
    }
    if (r->mat_b != NULL)
        cusparseDestroyDnMat(r->mat_b);
    if (r->mat_c != NULL)
        cusparseDestroyDnMat(r->mat_c);
    if (r->vec_x != NULL)
        cusparseDestroyDnVec(r->vec_x);
    if (r->vec_y != NULL)
        cusparseDestroyDnVec(r->vec_y);
    if (base->has_cusparse)
        cusparseDestroy(r->sparse);
    bench_destroy_events(r->start, r->stop, r->events_created);
    if (r->cusparse_values != r->values)
        cudaFree(r->cusparse_values);
    cudaFree(r->values);
    cudaFree(r->row_ptr);
    cudaFree(r->col_idx);
    cudaFree(r->b);
    cudaFree(r->c);
    esmm_set_stream(base->p.handle, NULL);
    if (r->stream != NULL)
        cudaStreamDestroy(r->stream);
    free(r);
}

static int upload(void **ptr, const void *host, size_t bytes, const char *what, cli_error_t *err)
{
    if (bench_device_alloc(ptr, bytes, what, err) != 0)
        return -1;
    cudaError_t e = bytes > 0 ? cudaMemcpy(*ptr, host, bytes, cudaMemcpyHostToDevice) : cudaSuccess;
    return e == cudaSuccess ? 0 : bench_cuda_fail(err, what, e);
}

/* W as esmm gets it, and the weights cuSPARSE gets: it has no homogeneous
 * form, so it reads the shared weight from an array of them. */
static int upload_w(cuda_runner_t *r, cli_error_t *err)
{
    const csr_problem_t *p = &r->base.p;
    const size_t nnz = (size_t)p->nnz;
    if (upload((void **)&r->row_ptr, p->row_ptr, (size_t)(p->rows + 1) * sizeof(int32_t),
               "W's row pointers", err) != 0 ||
        upload((void **)&r->col_idx, p->col_idx, nnz * sizeof(int32_t), "W's column indices",
               err) != 0)
        return -1;
    if (p->values != NULL) {
        if (upload((void **)&r->values, p->values, nnz * sizeof(float), "W's values", err) != 0)
            return -1;
        r->cusparse_values = r->values;
        return 0;
    }
    float *shared = malloc((nnz > 0 ? nnz : 1) * sizeof *shared);
    if (shared == NULL)
        return cli_error_set(err, "out of host memory for cuSPARSE's copy of W's weights");
    for (size_t e = 0; e < nnz; e++)
        shared[e] = p->value;
    int status = upload((void **)&r->cusparse_values, shared, nnz * sizeof(float),
                        "cuSPARSE's copy of W's weights", err);
    free(shared);
    return status;
}

/* cuSPARSE on the runner's stream, with B's and C's descriptors. Without it
 * the esmm rows still run and have no baseline. */
static void start_cusparse(cuda_runner_t *r)
{
    const csr_problem_t *p = &r->base.p;
    if (cusparseCreate(&r->sparse) != CUSPARSE_STATUS_SUCCESS)
        return;
    r->base.has_cusparse = true;
    cusparseStatus_t s = cusparseSetStream(r->sparse, r->stream);
    if (s == CUSPARSE_STATUS_SUCCESS && is_spmv(r)) {
        s = cusparseCreateDnVec(&r->vec_x, p->k, r->b, CUDA_R_32F);
        if (s == CUSPARSE_STATUS_SUCCESS)
            s = cusparseCreateDnVec(&r->vec_y, p->m, r->c, CUDA_R_32F);
    } else if (s == CUSPARSE_STATUS_SUCCESS) {
        s = cusparseCreateDnMat(&r->mat_b, p->k, p->n, p->n, r->b, CUDA_R_32F, CUSPARSE_ORDER_ROW);
        if (s == CUSPARSE_STATUS_SUCCESS)
            s = cusparseCreateDnMat(&r->mat_c, p->m, p->n, p->n, r->c, CUDA_R_32F,
                                    CUSPARSE_ORDER_ROW);
    }
    if (s != CUSPARSE_STATUS_SUCCESS) {
        cusparseDestroy(r->sparse);
        r->base.has_cusparse = false;
    }
}

static int setup(cuda_runner_t *r, cli_error_t *err)
{
    csr_runner_t *base = &r->base;
    const csr_problem_t *p = &base->p;
    cudaError_t e = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        r->stream = NULL;
        return bench_cuda_fail(err, "creating a CUDA stream", e);
    }
    esmm_status_t st = esmm_set_stream(p->handle, r->stream);
    if (st != ESMM_STATUS_SUCCESS)
        return cli_error_set(err, "esmm_set_stream: %s", esmm_status_string(st));
    if (bench_create_events(r->start, r->stop, EVENT_BATCH, &r->events_created, err) != 0 || upload_w(r, err) != 0)
        return -1;

    esmm_device_info_t info;
    size_t l2_bytes = esmm_get_device_info(p->handle, &info) == ESMM_STATUS_SUCCESS ? info.l2_bytes : 0;
    r->b_stride = bench_round_up(p->k * p->n, BENCH_COPY_ALIGN_FLOATS);
    r->c_stride = bench_round_up(p->m * p->n, BENCH_COPY_ALIGN_FLOATS);
    base->copy_bytes = (r->b_stride + r->c_stride) * (int64_t)sizeof(float);
    base->copies = bench_choose_copies(base->copy_bytes, l2_bytes);
    if (bench_device_alloc((void **)&r->b, (size_t)(r->b_stride * base->copies) * sizeof(float), "B",
                     err) != 0 ||
        bench_device_alloc((void **)&r->c, (size_t)(r->c_stride * base->copies) * sizeof(float), "C",
                     err) != 0 ||
        bench_fill_copies(r->b, p->b, p->k * p->n, r->b_stride, base->copies, "uploading B", err) != 0 ||
        bench_fill_copies(r->c, p->c0, p->m * p->n, r->c_stride, base->copies, "uploading C", err) != 0)
        return -1;
    start_cusparse(r);
    return csr_runner_describe_w(base, r->row_ptr, r->col_idx, r->values, err);
}

csr_runner_t *csr_runner_cuda_create(const csr_problem_t *p, cli_error_t *err)
{
    cuda_runner_t *r = calloc(1, sizeof *r);
    if (r == NULL) {
        cli_error_set(err, "out of host memory");
        return NULL;
    }
    csr_runner_t *base = &r->base;
    base->p = *p;
    base->run_checked = cuda_run_checked;
    base->time_runs = cuda_time_runs;
    base->destroy = cuda_destroy;
    base->copies = 1;
    base->clock = "CUDA events on one stream, each batch of runs queued before the device "
                  "starts it";
    if (setup(r, err) != 0) {
        cuda_destroy(base);
        return NULL;
    }
    return base;
}
