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
    const int64_t longest = rows > cols ? rows : cols;
    float *b = malloc((size_t)(longest > 0 ? longest : 1) * N * sizeof *b);
    float *c = malloc((size_t)(longest > 0 ? longest : 1) * N * sizeof *c);
    if (ptr == NULL || idx == NULL || values == NULL || b == NULL || c == NULL)
        abort();
    memcpy(ptr, row_ptr, (size_t)(rows + 1) * sizeof *ptr);
    memcpy(idx, col_idx, (size_t)nnz * sizeof *idx);
    for (int64_t e = 0; e < nnz; e++)
        values[e] = (float)(e % 7) - 3.0f;
    for (int64_t i = 0; i < longest * N; i++)
        b[i] = (float)(i % 5) - 2.0f;
    esmm_csr_t w = NULL;
    if (esmm_csr_create(cpu, rows, cols, nnz, ptr, idx, values, 0.0f, &w) != ESMM_STATUS_SUCCESS)
        abort();
    const float alpha = 1.0f, beta = 0.0f;
    for (int op = 0; op < 2; op++) {
        if (esmm_scsrmm(cpu, (esmm_operation_t)op, w, N, &alpha, b, N, &beta, c, N) !=
                ESMM_STATUS_SUCCESS ||
            esmm_scsrmv(cpu, (esmm_operation_t)op, w, &alpha, b, &beta, c) != ESMM_STATUS_SUCCESS)
            abort();
    }
    if (esmm_csr_prepare(cpu, w, ESMM_OP_T) != ESMM_STATUS_SUCCESS ||
        esmm_scsrmm(cpu, ESMM_OP_T, w, N, &alpha, b, N, &beta, c, N) != ESMM_STATUS_SUCCESS)
        abort();
    esmm_csr_destroy(w);
    free(ptr), free(idx), free(values), free(b), free(c);
    return 0;
}
