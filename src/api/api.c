/* The public API: argument checks, handle lifetime, backend choice. Every
 * check happens here, so backends only ever see valid problems. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handle.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "esmm.h"

#ifndef ESMM_VERSION_STRING
#define ESMM_VERSION_STRING "0.0.0"
#endif

/* CPU-backend kernel names, in the order esmm_kernel_name lists them. */
static const char *const cpu_kernel_names[] = {"cpu", "cpu-skip-a", "cpu-skip-b", "cpu-skip-joint"};
#define CPU_KERNEL_COUNT ((int)(sizeof cpu_kernel_names / sizeof cpu_kernel_names[0]))

const char *esmm_version(void)
{
    return ESMM_VERSION_STRING;
}

const char *esmm_status_string(esmm_status_t status)
{
    switch (status) {
    case ESMM_STATUS_SUCCESS: return "success";
    case ESMM_STATUS_NOT_INITIALIZED: return "handle not initialized (NULL handle)";
    case ESMM_STATUS_INVALID_VALUE: return "invalid value (size, pointer, operation, leading dimension or name)";
    case ESMM_STATUS_ALLOC_FAILED: return "memory allocation failed";
    case ESMM_STATUS_NO_DEVICE: return "no usable CUDA device";
    case ESMM_STATUS_NOT_SUPPORTED: return "not supported by this backend or build";
    case ESMM_STATUS_EXECUTION_FAILED: return "CUDA execution failed";
    case ESMM_STATUS_INTERNAL_ERROR: return "internal error";
    }
    return "unknown status";
}

esmm_status_t esmm_create(esmm_handle_t *handle, esmm_backend_t backend)
{
    if (handle == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    *handle = NULL;
    if (backend != ESMM_BACKEND_AUTO && backend != ESMM_BACKEND_CPU && backend != ESMM_BACKEND_CUDA)
        return ESMM_STATUS_INVALID_VALUE;

    int have_gpu = backend != ESMM_BACKEND_CPU && esmm_cuda_device_count() > 0;
    if (backend == ESMM_BACKEND_CUDA && !have_gpu)
        return ESMM_STATUS_NO_DEVICE;

    struct esmm_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return ESMM_STATUS_ALLOC_FAILED;
    ctx->backend = have_gpu ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU;
    if (ctx->backend == ESMM_BACKEND_CUDA) {
        esmm_status_t st = esmm_cuda_current_device(&ctx->device);
        if (st != ESMM_STATUS_SUCCESS) {
            free(ctx);
            return st;
        }
    }
    *handle = ctx;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_destroy(esmm_handle_t handle)
{
    if (handle == NULL)
        return ESMM_STATUS_SUCCESS;
    esmm_status_t st = ESMM_STATUS_SUCCESS;
    if (handle->backend == ESMM_BACKEND_CUDA)
        st = esmm_cuda_stream_synchronize(handle->stream);
    free(handle);
    return st;
}

esmm_status_t esmm_get_backend(esmm_handle_t handle, esmm_backend_t *backend)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (backend == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    *backend = handle->backend;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_set_stream(esmm_handle_t handle, void *stream)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (handle->backend == ESMM_BACKEND_CPU && stream != NULL)
        return ESMM_STATUS_NOT_SUPPORTED;
    handle->stream = stream;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_get_stream(esmm_handle_t handle, void **stream)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (stream == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return ESMM_STATUS_SUCCESS;
}

int esmm_kernel_count(esmm_handle_t handle)
{
    if (handle == NULL)
        return 0;
    return handle->backend == ESMM_BACKEND_CUDA ? esmm_cuda_kernel_count() : CPU_KERNEL_COUNT;
}

const char *esmm_kernel_name(esmm_handle_t handle, int index)
{
    if (handle == NULL || index < 0 || index >= esmm_kernel_count(handle))
        return NULL;
    return handle->backend == ESMM_BACKEND_CUDA ? esmm_cuda_kernel_name(index)
                                                : cpu_kernel_names[index];
}

esmm_status_t esmm_get_device_info(esmm_handle_t handle, esmm_device_info_t *info)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (info == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    memset(info, 0, sizeof *info);
    snprintf(info->build_architectures, sizeof info->build_architectures, "%s",
             esmm_cuda_build_architectures());
    if (handle->backend != ESMM_BACKEND_CUDA)
        return ESMM_STATUS_SUCCESS;
    return esmm_cuda_device_info(handle->device, info);
}

/* Checks everything a GEMM call can get wrong and fills the problem. */
static esmm_status_t check_gemm(esmm_handle_t handle, esmm_operation_t op_a, esmm_operation_t op_b,
                                int64_t m, int64_t n, int64_t k, const float *alpha,
                                const float *A, int64_t lda, const float *B, int64_t ldb,
                                const float *beta, float *C, int64_t ldc,
                                esmm_gemm_problem_t *p)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if ((op_a != ESMM_OP_N && op_a != ESMM_OP_T) || (op_b != ESMM_OP_N && op_b != ESMM_OP_T))
        return ESMM_STATUS_INVALID_VALUE;
    if (m < 0 || n < 0 || k < 0 || alpha == NULL || beta == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    /* Leading dimensions are checked even for empty problems, as BLAS does. */
    int64_t a_cols = op_a == ESMM_OP_N ? k : m;
    int64_t b_cols = op_b == ESMM_OP_N ? n : k;
    if (lda < (a_cols > 1 ? a_cols : 1) || ldb < (b_cols > 1 ? b_cols : 1) ||
        ldc < (n > 1 ? n : 1))
        return ESMM_STATUS_INVALID_VALUE;
    /* Offsets must fit in int64: the last element of each matrix. */
    int64_t a_rows = op_a == ESMM_OP_N ? m : k;
    int64_t b_rows = op_b == ESMM_OP_N ? k : n;
    if ((a_rows > 0 && lda > INT64_MAX / a_rows) || (b_rows > 0 && ldb > INT64_MAX / b_rows) ||
        (m > 0 && ldc > INT64_MAX / m))
        return ESMM_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0) {
        if (C == NULL)
            return ESMM_STATUS_INVALID_VALUE;
        if (k > 0 && *alpha != 0.0f && (A == NULL || B == NULL))
            return ESMM_STATUS_INVALID_VALUE;
    }
    p->op_a = op_a;
    p->op_b = op_b;
    p->m = m;
    p->n = n;
    p->k = k;
    p->alpha = *alpha;
    p->beta = *beta;
    p->a = A;
    p->lda = lda;
    p->b = B;
    p->ldb = ldb;
    p->c = C;
    p->ldc = ldc;
    return ESMM_STATUS_SUCCESS;
}

/* C = beta * C for the cases where no product is needed (BLAS: alpha == 0 or
 * k == 0 reads neither A nor B). */
static esmm_status_t scale_only(esmm_handle_t handle, const esmm_gemm_problem_t *p)
{
    if (handle->backend == ESMM_BACKEND_CUDA)
        return esmm_cuda_scale_c(p->m, p->n, p->beta, p->c, p->ldc, handle->stream);
    for (int64_t i = 0; i < p->m; i++) {
        float *row = p->c + i * p->ldc;
        for (int64_t j = 0; j < p->n; j++)
            row[j] = p->beta == 0.0f ? 0.0f : p->beta * row[j];
    }
    return ESMM_STATUS_SUCCESS;
}

/* Runs the CPU kernel `index` of cpu_kernel_names, extracting masks as needed. */
static esmm_status_t run_cpu_kernel(int index, const esmm_gemm_problem_t *p)
{
    if (index == 0)
        return esmm_cpu_sgemm(p);
    esmm_skip_mode_t mode = (esmm_skip_mode_t)index;
    esmm_pattern_t pa = {0}, pb = {0};
    esmm_status_t st = ESMM_STATUS_SUCCESS;
    if (mode == ESMM_SKIP_A || mode == ESMM_SKIP_JOINT) {
        st = esmm_pattern_alloc(&pa, p->m, p->k);
        if (st == ESMM_STATUS_SUCCESS)
            esmm_cpu_extract_a(p->op_a, p->a, p->lda, p->m, p->k, &pa);
    }
    if (st == ESMM_STATUS_SUCCESS && (mode == ESMM_SKIP_B || mode == ESMM_SKIP_JOINT)) {
        st = esmm_pattern_alloc(&pb, p->n, p->k);
        if (st == ESMM_STATUS_SUCCESS)
            esmm_cpu_extract_b(p->op_b, p->b, p->ldb, p->k, p->n, &pb);
    }
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_cpu_skip_sgemm(p, mode, pa.bits ? &pa : NULL, pb.bits ? &pb : NULL);
    esmm_pattern_free(&pa);
    esmm_pattern_free(&pb);
    return st;
}

static esmm_status_t run_kernel(esmm_handle_t handle, int index, const esmm_gemm_problem_t *p)
{
    if (p->m == 0 || p->n == 0)
        return ESMM_STATUS_SUCCESS;
    if (p->k == 0 || p->alpha == 0.0f)
        return scale_only(handle, p);
    if (handle->backend == ESMM_BACKEND_CUDA)
        return esmm_cuda_run_kernel(index, p, handle->stream);
    return run_cpu_kernel(index, p);
}

esmm_status_t esmm_sgemm(esmm_handle_t handle, esmm_operation_t op_a, esmm_operation_t op_b,
                         int64_t m, int64_t n, int64_t k, const float *alpha, const float *A,
                         int64_t lda, const float *B, int64_t ldb, const float *beta, float *C,
                         int64_t ldc)
{
    esmm_gemm_problem_t p;
    esmm_status_t st = check_gemm(handle, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                  ldc, &p);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    /* The dense path: the top of the CUDA ladder, or the CPU blocked GEMM. */
    int index = handle->backend == ESMM_BACKEND_CUDA ? esmm_cuda_kernel_count() - 1 : 0;
    return run_kernel(handle, index, &p);
}

esmm_status_t esmm_sgemm_kernel(esmm_handle_t handle, const char *kernel, esmm_operation_t op_a,
                                esmm_operation_t op_b, int64_t m, int64_t n, int64_t k,
                                const float *alpha, const float *A, int64_t lda, const float *B,
                                int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    esmm_gemm_problem_t p;
    esmm_status_t st = check_gemm(handle, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                  ldc, &p);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    if (kernel == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    int index = -1;
    if (handle->backend == ESMM_BACKEND_CUDA) {
        index = esmm_cuda_kernel_find(kernel);
    } else {
        for (int i = 0; i < CPU_KERNEL_COUNT; i++)
            if (strcmp(kernel, cpu_kernel_names[i]) == 0)
                index = i;
    }
    if (index < 0)
        return ESMM_STATUS_INVALID_VALUE;
    return run_kernel(handle, index, &p);
}
