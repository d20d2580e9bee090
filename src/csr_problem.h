/* One CSR product after argument checking, shared by the CPU backend and the
 * CUDA launchers: C = alpha * op(W) * B + beta * C, B and C row-major. */
#ifndef ESMM_CSR_PROBLEM_H
#define ESMM_CSR_PROBLEM_H

#include <stdint.h>

#include "esmm.h"

/* W (rows x cols) in CSR; values == NULL means every entry weighs `value`. */
typedef struct {
    int64_t rows, cols, nnz;
    const int32_t *row_ptr;
    const int32_t *col_idx;
    const float *values;
    float value;
} esmm_csr_view_t;

/* op(W) is m x k: (rows x cols) for N, (cols x rows) for T. B is k x n, C is
 * m x n. A matrix-vector product is n == 1 with ldb == ldc == 1. */
typedef struct {
    esmm_operation_t op;
    esmm_csr_view_t w;
    int64_t m, n, k;
    float alpha, beta;
    const float *b;
    int64_t ldb;
    float *c;
    int64_t ldc;
} esmm_csrmm_problem_t;

/* Weight of stored entry e. */
static inline float esmm_csr_weight(const esmm_csr_view_t *w, int64_t e)
{
    return w->values != NULL ? w->values[e] : w->value;
}

#endif
