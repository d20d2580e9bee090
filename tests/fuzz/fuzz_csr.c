/* libFuzzer harness: CSR arrays from arbitrary bytes through the validator;
 * whatever it accepts must multiply (both ops, matrix and vector) without
 * reading out of bounds, on the CPU backend. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "esmm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_DIM = 64, MAX_NNZ = 256, N = 3 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static esmm_handle_t cpu;
    if (cpu == NULL && esmm_create(&cpu, ESMM_BACKEND_CPU) != ESMM_STATUS_SUCCESS)
        abort();
    if (size < 3)
        return 0;
    /* Sizes from the first bytes (negative ones too), arrays from the rest. */
    const int64_t rows = (int8_t)data[0] % MAX_DIM, cols = (int8_t)data[1] % MAX_DIM;
    const int64_t nnz = (int8_t)data[2] % MAX_NNZ;
    data += 3, size -= 3;
    int32_t row_ptr[MAX_DIM + 1] = {0}, col_idx[MAX_NNZ] = {0};
    const size_t ptr_bytes = rows >= 0 ? (size_t)(rows + 1) * sizeof(int32_t) : 0;
    const size_t idx_bytes = nnz >= 0 ? (size_t)nnz * sizeof(int32_t) : 0;
    memcpy(row_ptr, data, size < ptr_bytes ? size : ptr_bytes);
    if (size > ptr_bytes)
        memcpy(col_idx, data + ptr_bytes, size - ptr_bytes < idx_bytes ? size - ptr_bytes : idx_bytes);
    if (esmm_csr_validate(cpu, rows, cols, nnz, row_ptr, col_idx) != ESMM_STATUS_SUCCESS)
        return 0;
    /* Exact-size copies, so any read past them is caught. */
    int32_t *ptr = malloc((size_t)(rows + 1) * sizeof *ptr);
    int32_t *idx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *idx);
    float *values = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *values);
    if (ptr == NULL || idx == NULL || values == NULL)
        abort();
    memcpy(ptr, row_ptr, (size_t)(rows + 1) * sizeof *ptr);
    memcpy(idx, col_idx, (size_t)nnz * sizeof *idx);
    for (int64_t e = 0; e < nnz; e++)
        values[e] = (float)(e % 7) - 3.0f;
    esmm_csr_t w = NULL;
    if (esmm_csr_create(cpu, rows, cols, nnz, ptr, idx, values, 0.0f, &w) != ESMM_STATUS_SUCCESS)
        abort();
    const float alpha = 1.0f, beta = 0.0f;
    /* Each op, then W^T again through the prepared transpose; B (k x N) and
     * C (m x N) sized exactly for the op. */
    for (int run = 0; run < 3; run++) {
        const esmm_operation_t op = run == 0 ? ESMM_OP_N : ESMM_OP_T;
        const int64_t k = op == ESMM_OP_N ? cols : rows, m = op == ESMM_OP_N ? rows : cols;
        float *b = malloc((size_t)(k > 0 ? k : 1) * N * sizeof *b);
        float *c = malloc((size_t)(m > 0 ? m : 1) * N * sizeof *c);
        if (b == NULL || c == NULL)
            abort();
        for (int64_t i = 0; i < k * N; i++)
            b[i] = (float)(i % 5) - 2.0f;
        if ((run == 2 && esmm_csr_prepare(cpu, w, ESMM_OP_T) != ESMM_STATUS_SUCCESS) ||
            esmm_scsrmm(cpu, op, w, N, &alpha, b, N, &beta, c, N) != ESMM_STATUS_SUCCESS ||
            esmm_scsrmv(cpu, op, w, &alpha, b, &beta, c) != ESMM_STATUS_SUCCESS)
            abort();
        free(b), free(c);
    }
    esmm_csr_destroy(w);
    free(ptr), free(idx), free(values);
    return 0;
}
