#pragma once

#include <cuda_runtime.h>

extern "C" {
#include "cuda/cuda_backend.h"
#include "gemm_problem.h"
}

// esmm_cuda_copy_operand: writes into out the k-major copies that the path
// the plan lets run reads, but those the extraction made, one launch (see
// transpose_operand.cu). The kernel waits for the plan: settled is true on
// return once it was launched (plan_gate.cuh).
cudaError_t launch_copy_operand(const esmm_gemm_problem_t &p, esmm_skip_by_t skip,
                                const esmm_plan_stats_t *plan, bool planned,
                                esmm_copied_t extraction_copy, float *out, bool &settled,
                                cudaStream_t stream);

// x (rows x cols, row stride ld) transposed into out (row stride
// esmm_wide_copy_ld(rows)), with no gate: a pattern's kept copy.
cudaError_t launch_transpose(const float *x, int64_t ld, int64_t rows, int64_t cols, float *out,
                             cudaStream_t stream);

// Where copy `which` (ESMM_COPY_A or ESMM_COPY_B) of p's operands starts in
// the workspace's copy buffer, in floats (esmm_wide_copy_b_at).
inline int64_t copy_offset(const esmm_gemm_problem_t &p, esmm_copied_t which)
{
    return which == ESMM_COPY_B ? esmm_wide_copy_b_at(p.m, p.n, p.k, p.op_a, p.op_b) : 0;
}

// p reading the k-major copy `copy` in place of A (ESMM_COPY_A: A was
// m x k with op N) or of B (ESMM_COPY_B: B was n x k with op T); the
// same products in the same order of k, so the same bits.
inline esmm_gemm_problem_t reading_copy(esmm_gemm_problem_t p, esmm_copied_t which,
                                        const float *copy)
{
    if (which == ESMM_COPY_A) {
        p.a = copy, p.lda = esmm_wide_copy_ld(p.m), p.op_a = ESMM_OP_T;
    } else if (which == ESMM_COPY_B) {
        p.b = copy, p.ldb = esmm_wide_copy_ld(p.n), p.op_b = ESMM_OP_N;
    }
    return p;
}

// p reading each copy in `copied` (an esmm_copied_t set) at its place in the
// copy buffer wide_copy.
inline esmm_gemm_problem_t reading_copies(const esmm_gemm_problem_t &p, int copied,
                                          const float *wide_copy)
{
    esmm_gemm_problem_t q = p;
    if (copied & ESMM_COPY_A)
        q = reading_copy(q, ESMM_COPY_A, wide_copy + copy_offset(p, ESMM_COPY_A));
    if (copied & ESMM_COPY_B)
        q = reading_copy(q, ESMM_COPY_B, wide_copy + copy_offset(p, ESMM_COPY_B));
    return q;
}
