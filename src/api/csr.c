/* CSR descriptors and the CSR products: argument checks and backend choice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/handle.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "esmm.h"

esmm_status_t esmm_csr_create(esmm_handle_t handle, int64_t rows, int64_t cols, int64_t nnz,
                              const int32_t *row_ptr, const int32_t *col_idx,
                              const float *values, float value, esmm_csr_t *W)
{
    if (W != NULL)
        *W = NULL;
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (W == NULL || rows < 0 || cols < 0 || nnz < 0 || rows > INT32_MAX || cols > INT32_MAX ||
        nnz > INT32_MAX || row_ptr == NULL || (nnz > 0 && col_idx == NULL))
        return ESMM_STATUS_INVALID_VALUE;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    struct esmm_csr_matrix *d = calloc(1, sizeof *d);
    if (d == NULL)
        return ESMM_STATUS_ALLOC_FAILED;
    d->backend = handle->backend;
    d->device = handle->device;
    d->w = (esmm_csr_view_t){rows, cols, nnz, row_ptr, col_idx, values, value};
    *W = d;
    return ESMM_STATUS_SUCCESS;
}

/* Whether the handle may use W: the backend, and on CUDA the device, that
 * made it. */
static int csr_fits(esmm_handle_t handle, esmm_csr_t W)
{
    return W->backend == handle->backend && W->device == handle->device;
}

static void release_transpose(esmm_csr_t W)
{
    if (W->transpose_memory != NULL) {
        if (W->backend == ESMM_BACKEND_CUDA)
            esmm_cuda_free(W->transpose_memory);
        else
            free(W->transpose_memory);
    }
    W->transpose_memory = NULL;
    W->has_transpose = 0;
}

esmm_status_t esmm_csr_destroy(esmm_csr_t W)
{
    if (W == NULL)
        return ESMM_STATUS_SUCCESS;
    int previous = 0;
    const int switched = esmm_enter_object_device(W->backend, W->device, &previous);
    esmm_status_t st = ESMM_STATUS_SUCCESS;
    if (W->backend == ESMM_BACKEND_CUDA && W->transpose_memory != NULL)
        st = esmm_cuda_device_synchronize();
    release_transpose(W);
    esmm_leave_object_device(switched, previous);
    free(W);
    return st;
}

/* Bytes of a transpose of w in one block: row pointers, column indices and,
 * with per-entry weights, values; each piece 256-byte aligned. */
static size_t align256(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

esmm_status_t esmm_csr_prepare(esmm_handle_t handle, esmm_csr_t W, esmm_operation_t op)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (W == NULL || !csr_fits(handle, W) || (op != ESMM_OP_N && op != ESMM_OP_T))
        return ESMM_STATUS_INVALID_VALUE;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    if (op == ESMM_OP_N)
        return ESMM_STATUS_SUCCESS;
    release_transpose(W);
    const esmm_csr_view_t *w = &W->w;
    /* The transpose is placed by column index and row pointer: invalid
     * arrays would send it past its own memory, so they are refused first. */
    esmm_status_t st =
        esmm_csr_validate(handle, w->rows, w->cols, w->nnz, w->row_ptr, w->col_idx);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    const size_t ptr_bytes = align256((size_t)(w->cols + 1) * sizeof(int32_t));
    const size_t idx_bytes = align256((size_t)w->nnz * sizeof(int32_t));
    const size_t val_bytes = w->values != NULL ? (size_t)w->nnz * sizeof(float) : 0;
    const size_t total = ptr_bytes + idx_bytes + val_bytes;
    void *memory = NULL;
    if (handle->backend == ESMM_BACKEND_CUDA) {
        st = esmm_cuda_malloc(&memory, total);
        if (st != ESMM_STATUS_SUCCESS)
            return st;
    } else if ((memory = malloc(total)) == NULL) {
        return ESMM_STATUS_ALLOC_FAILED;
    }
    int32_t *t_row_ptr = memory;
    int32_t *t_col_idx = (int32_t *)((uint8_t *)memory + ptr_bytes);
    float *t_values = w->values != NULL ? (float *)((uint8_t *)memory + ptr_bytes + idx_bytes)
                                        : NULL;
    W->transpose_memory = memory;
    if (handle->backend == ESMM_BACKEND_CUDA)
        st = esmm_cuda_csr_transpose(w, t_row_ptr, t_col_idx, t_values, handle->stream);
    else
        esmm_cpu_csr_transpose(w, t_row_ptr, t_col_idx, t_values);
    if (st != ESMM_STATUS_SUCCESS) {
        release_transpose(W);
        return st;
    }
    W->transpose = (esmm_csr_view_t){w->cols, w->rows, w->nnz, t_row_ptr, t_col_idx,
                                     t_values, w->value};
    W->has_transpose = 1;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_csr_validate(esmm_handle_t handle, int64_t rows, int64_t cols, int64_t nnz,
                                const int32_t *row_ptr, const int32_t *col_idx)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (rows < 0 || cols < 0 || nnz < 0 || rows > INT32_MAX || cols > INT32_MAX ||
        nnz > INT32_MAX || row_ptr == NULL || (nnz > 0 && col_idx == NULL))
        return ESMM_STATUS_INVALID_VALUE;
    const esmm_csr_view_t w = {rows, cols, nnz, row_ptr, col_idx, NULL, 0.0f};
    if (handle->backend == ESMM_BACKEND_CPU)
        return esmm_cpu_csr_validate(&w);
    esmm_status_t st = esmm_handle_on_device(handle);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    if (handle->csr_valid_flag == NULL)
        st = esmm_cuda_malloc((void **)&handle->csr_valid_flag, sizeof(int));
    int valid = 0;
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_cuda_csr_validate(&w, handle->csr_valid_flag, &valid, handle->stream);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    return valid ? ESMM_STATUS_SUCCESS : ESMM_STATUS_INVALID_VALUE;
}

size_t esmm_csrmm_workspace_size(int64_t k, int64_t n)
{
    if (k < 0 || n < 0)
        return 0;
    if (k > INT32_MAX || !esmm_matrix_fits(k, n))
        return SIZE_MAX; /* no product takes it; the size would overflow */
    return esmm_cuda_csrmm_workspace(k, n);
}

/* Checks a product's arguments and fills the problem (op(W) is m x k). */
static esmm_status_t check_csrmm(esmm_handle_t handle, esmm_operation_t op, esmm_csr_t W,
                                 int64_t n, const float *alpha, const float *B, int64_t ldb,
                                 const float *beta, float *C, int64_t ldc,
                                 esmm_csrmm_problem_t *p)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (W == NULL || !csr_fits(handle, W) || (op != ESMM_OP_N && op != ESMM_OP_T) ||
        n < 0 || alpha == NULL || beta == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    const int64_t m = op == ESMM_OP_N ? W->w.rows : W->w.cols;
    const int64_t k = op == ESMM_OP_N ? W->w.cols : W->w.rows;
    if (ldb < (n > 1 ? n : 1) || ldc < (n > 1 ? n : 1))
        return ESMM_STATUS_INVALID_VALUE;
    if (!esmm_matrix_fits(k, ldb) || !esmm_matrix_fits(m, ldc))
        return ESMM_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0) {
        if (C == NULL)
            return ESMM_STATUS_INVALID_VALUE;
        if (k > 0 && *alpha != 0.0f && B == NULL)
            return ESMM_STATUS_INVALID_VALUE;
    }
    *p = (esmm_csrmm_problem_t){op, W->w, m, n, k, *alpha, *beta, B, ldb, C, ldc};
    return ESMM_STATUS_SUCCESS;
}

static esmm_status_t run_csrmm(esmm_handle_t handle, esmm_csr_t W, const esmm_csrmm_problem_t *p,
                               esmm_csr_b_mode_t mode, const char *kernel)
{
    const int nothing_to_multiply =
        p->m == 0 || p->n == 0 || p->k == 0 || p->w.nnz == 0 || p->alpha == 0.0f;
    /* Only the CUDA compressed-B path uses the workspace: gathering products
     * (op N, or T through the prepared transpose) of more than one column. A B
     * it cannot take, or a lent workspace too small, refuses the call before
     * the report is touched, so it stays as it was. */
    const int compressed = handle->backend == ESMM_BACKEND_CUDA && mode == ESMM_CSR_B_SPARSE &&
                           p->n > 1 && (p->op == ESMM_OP_N || W->has_transpose);
    const size_t need =
        !nothing_to_multiply && compressed ? esmm_cuda_csrmm_workspace(p->k, p->n) : 0;
    if (need == SIZE_MAX)
        return ESMM_STATUS_NOT_SUPPORTED; /* B too large for the compressed path */
    if (handle->workspace_lent && need > handle->workspace_bytes)
        return ESMM_STATUS_INVALID_VALUE;
    handle->last = (esmm_last_call_t){.path = ESMM_PATH_NONE, .m = p->m, .n = p->n, .k = p->k};
    if (p->m == 0 || p->n == 0)
        return ESMM_STATUS_SUCCESS;
    if (p->k == 0 || p->w.nnz == 0 || p->alpha == 0.0f)
        return esmm_scale_c(handle, p->m, p->n, p->beta, p->c, p->ldc);
    handle->last.kernel = kernel;
    /* Asked for "csr-sparse-b", a product of one column or a scattered one
     * runs the path it always runs (the matrix-vector kernels, the scatter),
     * not B's compressed nonzeros. */
    handle->last.path = compressed ? ESMM_PATH_SPARSE : ESMM_PATH_DENSE;
    if (handle->backend == ESMM_BACKEND_CPU) {
        if (p->op == ESMM_OP_N || !W->has_transpose)
            return esmm_cpu_csrmm(p);
        /* W^T gathered from its stable transpose sums in the T order. */
        esmm_csrmm_problem_t gather = *p;
        gather.op = ESMM_OP_N;
        gather.w = W->transpose;
        return esmm_cpu_csrmm(&gather);
    }
    const esmm_status_t st = esmm_workspace_reserve(handle, need);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    const esmm_csr_view_t *transposed =
        p->op == ESMM_OP_T && W->has_transpose ? &W->transpose : NULL;
    return esmm_cuda_csrmm(p, transposed, mode, handle->workspace, handle->stream);
}

esmm_status_t esmm_scsrmm(esmm_handle_t handle, esmm_operation_t op_w, esmm_csr_t W, int64_t n,
                          const float *alpha, const float *B, int64_t ldb, const float *beta,
                          float *C, int64_t ldc)
{
    esmm_csrmm_problem_t p;
    esmm_status_t st = check_csrmm(handle, op_w, W, n, alpha, B, ldb, beta, C, ldc, &p);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    return run_csrmm(handle, W, &p, ESMM_CSR_B_AUTO,
                     handle->backend == ESMM_BACKEND_CPU ? "cpu" : "csr-auto");
}

esmm_status_t esmm_scsrmm_kernel(esmm_handle_t handle, const char *kernel,
                                 esmm_operation_t op_w, esmm_csr_t W, int64_t n,
                                 const float *alpha, const float *B, int64_t ldb,
                                 const float *beta, float *C, int64_t ldc)
{
    esmm_csrmm_problem_t p;
    esmm_status_t st = check_csrmm(handle, op_w, W, n, alpha, B, ldb, beta, C, ldc, &p);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    if (kernel == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    if (handle->backend == ESMM_BACKEND_CPU)
        return strcmp(kernel, "cpu") == 0 ? run_csrmm(handle, W, &p, ESMM_CSR_B_AUTO, "cpu")
                                          : ESMM_STATUS_INVALID_VALUE;
    if (strcmp(kernel, "csr-dense-b") == 0)
        return run_csrmm(handle, W, &p, ESMM_CSR_B_DENSE, "csr-dense-b");
    if (strcmp(kernel, "csr-sparse-b") == 0)
        return run_csrmm(handle, W, &p, ESMM_CSR_B_SPARSE, "csr-sparse-b");
    return ESMM_STATUS_INVALID_VALUE;
}

esmm_status_t esmm_scsrmv(esmm_handle_t handle, esmm_operation_t op_w, esmm_csr_t W,
                          const float *alpha, const float *x, const float *beta, float *y)
{
    esmm_csrmm_problem_t p;
    esmm_status_t st = check_csrmm(handle, op_w, W, 1, alpha, x, 1, beta, y, 1, &p);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    return run_csrmm(handle, W, &p, ESMM_CSR_B_AUTO,
                     handle->backend == ESMM_BACKEND_CPU ? "cpu" : "csrmv");
}
