/* Operand patterns: extraction on the handle's backend, and pattern objects
 * that let a caller extract a static operand's masks once. */
#include <stdlib.h>

#include "api/handle.h"
#include "cpu/cpu_backend.h"

esmm_status_t esmm_extract_masks(esmm_handle_t handle, int is_b, esmm_operation_t op,
                                 const float *x, int64_t ld, int64_t rows, int64_t k,
                                 esmm_strip_masks_t *masks)
{
    if (handle->backend == ESMM_BACKEND_CUDA)
        return is_b ? esmm_cuda_extract_b(op, x, ld, k, rows, masks->bits, masks->nonfinite,
                                          handle->stream)
                    : esmm_cuda_extract_a(op, x, ld, rows, k, masks->bits, masks->nonfinite,
                                          handle->stream);
    if (is_b)
        esmm_cpu_extract_b(op, x, ld, k, rows, masks);
    else
        esmm_cpu_extract_a(op, x, ld, rows, k, masks);
    return ESMM_STATUS_SUCCESS;
}

/* Whether operand X (B when is_b) with op `op` is stored with its rows along
 * k: A with op N, B with op T. */
static int stored_along_k(int is_b, esmm_operation_t op)
{
    return is_b ? op == ESMM_OP_T : op == ESMM_OP_N;
}

/* The checks esmm_sgemm makes of one operand: op(X) has `rows` strip-wise
 * rows (m for A, n for B) and k. */
static esmm_status_t check_operand(int is_b, esmm_operation_t op, int64_t rows, int64_t k,
                                   const float *x, int64_t ld)
{
    if (op != ESMM_OP_N && op != ESMM_OP_T)
        return ESMM_STATUS_INVALID_VALUE;
    if (rows < 0 || k < 0)
        return ESMM_STATUS_INVALID_VALUE;
    /* A is stored m x k for N; B is stored k x n for N. */
    const int k_along_rows = stored_along_k(is_b, op);
    const int64_t stored_cols = k_along_rows ? k : rows;
    const int64_t stored_rows = k_along_rows ? rows : k;
    if (ld < (stored_cols > 1 ? stored_cols : 1))
        return ESMM_STATUS_INVALID_VALUE;
    if (!esmm_matrix_fits(stored_rows, ld))
        return ESMM_STATUS_INVALID_VALUE;
    if (rows > 0 && k > 0 && x == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    return ESMM_STATUS_SUCCESS;
}

static void free_masks(esmm_backend_t backend, esmm_strip_masks_t *masks)
{
    if (backend == ESMM_BACKEND_CUDA)
        esmm_cuda_free(masks->bits); /* one allocation holds both arrays */
    else
        esmm_strip_masks_free(masks);
}

static esmm_status_t extract_pattern(esmm_handle_t handle, int is_b, esmm_operation_t op,
                                     int64_t rows, int64_t k, const float *x, int64_t ld,
                                     esmm_pattern_t *pattern)
{
    if (pattern != NULL)
        *pattern = NULL;
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (pattern == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    esmm_status_t st = esmm_handle_on_device(handle);
    if (st == ESMM_STATUS_SUCCESS)
        st = check_operand(is_b, op, rows, k, x, ld);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    struct esmm_operand_pattern *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ESMM_STATUS_ALLOC_FAILED;
    p->backend = handle->backend;
    p->device = handle->device;
    p->is_b = is_b;
    p->op = op;
    p->rows = rows;
    p->k = k;
    if (handle->backend == ESMM_BACKEND_CUDA) {
        /* One allocation holds both arrays. */
        const int64_t count = esmm_pattern_mask_bytes(rows, k);
        void *memory = NULL;
        st = count < 0 ? ESMM_STATUS_ALLOC_FAILED
                       : esmm_cuda_malloc(&memory, 2 * (size_t)count + 1);
        if (st == ESMM_STATUS_SUCCESS) {
            p->masks.strips = esmm_pattern_strips(rows);
            p->masks.kblocks = esmm_pattern_kblocks(k);
            p->masks.bits = memory;
            p->masks.nonfinite = (uint8_t *)memory + count;
        }
    } else {
        st = esmm_strip_masks_alloc(&p->masks, rows, k);
    }
    if (st == ESMM_STATUS_SUCCESS && rows > 0 && k > 0)
        st = esmm_extract_masks(handle, is_b, op, x, ld, rows, k, &p->masks);
    if (st != ESMM_STATUS_SUCCESS) {
        free_masks(p->backend, &p->masks);
        free(p);
        return st;
    }
    *pattern = p;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_pattern_extract_a(esmm_handle_t handle, esmm_operation_t op_a, int64_t m,
                                     int64_t k, const float *A, int64_t lda,
                                     esmm_pattern_t *pattern)
{
    return extract_pattern(handle, 0, op_a, m, k, A, lda, pattern);
}

esmm_status_t esmm_pattern_extract_b(esmm_handle_t handle, esmm_operation_t op_b, int64_t k,
                                     int64_t n, const float *B, int64_t ldb,
                                     esmm_pattern_t *pattern)
{
    return extract_pattern(handle, 1, op_b, n, k, B, ldb, pattern);
}

/* A CUDA pattern's mask bytes, copied to copy once the extraction is done.
 * It ran on some stream of the creating handle: the whole device (the
 * pattern's, whichever the caller has current) is waited for, rather than
 * depend on that stream still existing. */
static esmm_status_t download_bits(esmm_pattern_t pattern, uint8_t *copy, size_t bytes)
{
    int previous = 0;
    const int switched = esmm_enter_object_device(pattern->backend, pattern->device, &previous);
    esmm_status_t st = esmm_cuda_device_synchronize();
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_cuda_copy_to_host(copy, pattern->masks.bits, bytes, NULL);
    esmm_leave_object_device(switched, previous);
    return st;
}

esmm_status_t esmm_pattern_density(esmm_pattern_t pattern, double *density)
{
    if (pattern == NULL || density == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    const size_t bytes = (size_t)(pattern->masks.strips * pattern->masks.kblocks);
    *density = 0.0;
    if (bytes == 0 || pattern->k == 0)
        return ESMM_STATUS_SUCCESS;
    const uint8_t *bits = pattern->masks.bits;
    uint8_t *copy = NULL;
    if (pattern->backend == ESMM_BACKEND_CUDA) {
        copy = malloc(bytes);
        if (copy == NULL)
            return ESMM_STATUS_ALLOC_FAILED;
        const esmm_status_t st = download_bits(pattern, copy, bytes);
        if (st != ESMM_STATUS_SUCCESS) {
            free(copy);
            return st;
        }
        bits = copy;
    }
    unsigned long long set = 0;
    for (size_t i = 0; i < bytes; i++)
        for (unsigned b = bits[i]; b; b &= b - 1)
            set++;
    free(copy);
    *density = (double)set / ((double)pattern->masks.strips * (double)pattern->k);
    return ESMM_STATUS_SUCCESS;
}

/* Frees memory of the pattern's backend (cudaFree waits for the device, so
 * no product still reads it). */
static void free_on(esmm_backend_t backend, void *memory)
{
    if (backend == ESMM_BACKEND_CUDA)
        esmm_cuda_free(memory);
    else
        free(memory);
}

esmm_status_t esmm_pattern_destroy(esmm_pattern_t pattern)
{
    if (pattern == NULL)
        return ESMM_STATUS_SUCCESS;
    int previous = 0;
    const int switched = esmm_enter_object_device(pattern->backend, pattern->device, &previous);
    free_masks(pattern->backend, &pattern->masks);
    free_on(pattern->backend, pattern->copy);
    esmm_leave_object_device(switched, previous);
    free(pattern);
    return ESMM_STATUS_SUCCESS;
}

/* x (rows x cols, row stride ld) transposed into out (row stride out_ld), in
 * 32 x 32 blocks so that both sides stay in cache. */
static void transpose_on_host(const float *x, int64_t ld, int64_t rows, int64_t cols, float *out,
                              int64_t out_ld)
{
    enum { BLOCK = 32 };
    for (int64_t r0 = 0; r0 < rows; r0 += BLOCK)
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK)
            for (int64_t c = c0; c < cols && c < c0 + BLOCK; c++)
                for (int64_t r = r0; r < rows && r < r0 + BLOCK; r++)
                    out[c * out_ld + r] = x[r * ld + c];
}

esmm_status_t esmm_pattern_keep_copy(esmm_handle_t handle, esmm_pattern_t pattern,
                                     const float *x, int64_t ld)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (pattern == NULL || pattern->backend != handle->backend ||
        pattern->device != handle->device)
        return ESMM_STATUS_INVALID_VALUE;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    esmm_status_t st = check_operand(pattern->is_b, pattern->op, pattern->rows, pattern->k, x, ld);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    /* Only an operand stored along k is read faster from a copy. */
    if (!stored_along_k(pattern->is_b, pattern->op) || pattern->rows == 0 || pattern->k == 0)
        return ESMM_STATUS_SUCCESS;
    const int64_t copy_ld = esmm_wide_copy_ld(pattern->rows);
    if (!esmm_matrix_fits(pattern->k, copy_ld))
        return ESMM_STATUS_ALLOC_FAILED;
    const size_t bytes = (size_t)(copy_ld * pattern->k) * sizeof(float);
    const int cuda = handle->backend == ESMM_BACKEND_CUDA;
    void *copy = NULL;
    if (cuda) {
        st = esmm_cuda_malloc(&copy, bytes);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_cuda_transpose(x, ld, pattern->rows, pattern->k, copy, handle->stream);
    } else {
        copy = malloc(bytes);
        if (copy == NULL)
            st = ESMM_STATUS_ALLOC_FAILED;
        else
            transpose_on_host(x, ld, pattern->rows, pattern->k, copy, copy_ld);
    }
    if (st != ESMM_STATUS_SUCCESS) {
        free_on(handle->backend, copy);
        return st;
    }
    free_on(handle->backend, pattern->copy);
    pattern->copy = copy;
    pattern->copy_ld = copy_ld;
    return ESMM_STATUS_SUCCESS;
}

void esmm_pattern_read_copies(esmm_gemm_problem_t *p, esmm_pattern_t pattern_a,
                              esmm_pattern_t pattern_b)
{
    if (pattern_a != NULL && pattern_a->copy != NULL) {
        p->a = pattern_a->copy;
        p->lda = pattern_a->copy_ld;
        p->op_a = ESMM_OP_T;
    }
    if (pattern_b != NULL && pattern_b->copy != NULL) {
        p->b = pattern_b->copy;
        p->ldb = pattern_b->copy_ld;
        p->op_b = ESMM_OP_N;
    }
}
