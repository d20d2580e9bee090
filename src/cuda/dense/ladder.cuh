// The dense ladder: every kernel file exposes one launcher of this shape, so
// launch.cu can run any of them uniformly. Each launcher handles any m, n, k,
// both ops and any leading dimensions; m, n > 0 and k > 0 are guaranteed by
// the caller (the API handles the empty and k == 0 cases).
#pragma once

#include <cuda_runtime.h>

extern "C" {
#include "cuda/cuda_backend.h"
#include "gemm_problem.h"
}

#include "cuda/sparse/plan_gate.cuh"

typedef cudaError_t (*esmm_dense_launcher_t)(const esmm_gemm_problem_t &p, cudaStream_t stream);

cudaError_t launch_naive(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_coalesced(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_smem_blocking(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_blocktile_1d(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_blocktile_2d(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_vectorized(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_warptile(const esmm_gemm_problem_t &p, cudaStream_t stream);

// The top kernel, the dense path of esmm_sgemm. It splits k when
// esmm_k_split says so, into partials (esmm_split_bytes of device memory;
// launch_finish_splits completes C). Queued beside the zero-skipping kernel
// it runs only when the plan in *gate.plan (device memory) selects the dense
// or the union path (plan_gate.cuh); gate.plan == nullptr always runs. With
// wide_copy (else nullptr), it reads the operands esmm_dense_copies names
// from their k-major copies (the extraction or launch_copy_operand made them).
cudaError_t launch_pipelined_gated(const esmm_gemm_problem_t &p, const dense_gate &gate,
                                   float *partials, const float *wide_copy, cudaStream_t stream);

// C = alpha * (partial sums added in order of k) + beta * C after a split
// product; nothing when p does not split, nor where lists_plan (device
// memory, or nullptr) picked the warp lists, which write C themselves
// (planned: as the warp lists' gate reads it, warp_lists_gate).
cudaError_t launch_finish_splits(const esmm_gemm_problem_t &p, const float *partials,
                                 const esmm_plan_stats_t *lists_plan, bool planned,
                                 cudaStream_t stream);
