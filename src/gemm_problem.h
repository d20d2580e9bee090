/* One GEMM request after argument checking: C = alpha * op(A) * op(B) + beta * C,
 * row-major, shared by the CPU backend and the CUDA launchers. */
#ifndef ESMM_GEMM_PROBLEM_H
#define ESMM_GEMM_PROBLEM_H

#include <stdint.h>

#include "esmm.h"

typedef struct {
    esmm_operation_t op_a, op_b;
    int64_t m, n, k;
    float alpha, beta;
    const float *a;
    int64_t lda;
    const float *b;
    int64_t ldb;
    float *c;
    int64_t ldc;
} esmm_gemm_problem_t;

/* Element (i, kk) of op(A) and (kk, j) of op(B), whatever the op. */
static inline float esmm_op_a_at(const esmm_gemm_problem_t *p, int64_t i, int64_t kk)
{
    return p->op_a == ESMM_OP_N ? p->a[i * p->lda + kk] : p->a[kk * p->lda + i];
}

static inline float esmm_op_b_at(const esmm_gemm_problem_t *p, int64_t kk, int64_t j)
{
    return p->op_b == ESMM_OP_N ? p->b[kk * p->ldb + j] : p->b[j * p->ldb + kk];
}

#endif
