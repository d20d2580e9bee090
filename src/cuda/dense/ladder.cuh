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

typedef cudaError_t (*esmm_dense_launcher_t)(const esmm_gemm_problem_t &p, cudaStream_t stream);

cudaError_t launch_naive(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_coalesced(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_smem_blocking(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_blocktile_1d(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_blocktile_2d(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_vectorized(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_warptile(const esmm_gemm_problem_t &p, cudaStream_t stream);
cudaError_t launch_pipelined(const esmm_gemm_problem_t &p, cudaStream_t stream);

// The top kernel queued beside the zero-skipping one: it runs only when the
// plan in *gate (device memory) does not select skipping; gate == NULL always runs.
cudaError_t launch_pipelined_gated(const esmm_gemm_problem_t &p, const esmm_plan_stats_t *gate,
                                   cudaStream_t stream);
