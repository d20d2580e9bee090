#pragma once

#include <cuda_runtime.h>

extern "C" {
#include "cuda/cuda_backend.h"
#include "gemm_problem.h"
}

// The zero-skipping product (see skip_gemm.cu). With gate != NULL it runs only
// if the plan in *gate selects skipping. k must be below 2^31 - 8.
cudaError_t launch_skip_gemm(const esmm_gemm_problem_t &p, const esmm_masks_t &masks,
                             esmm_skip_by_t skip, const esmm_plan_stats_t *gate,
                             cudaStream_t stream);
