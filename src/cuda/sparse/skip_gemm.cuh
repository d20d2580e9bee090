#pragma once

#include <cuda_runtime.h>

extern "C" {
#include "cuda/cuda_backend.h"
#include "gemm_problem.h"
}

// The zero-skipping product (see skip_gemm.cu). plan holds the masks'
// statistics (device memory, always needed when skipping by both operands:
// it picks the orientation); with planned, it runs only if the plan selects
// skipping. k must be below 2^31 - 8. It splits k as the dense kernel does
// (esmm_k_split), into partials. wide_copy (esmm_wide_copy_floats floats, or
// nullptr to read the operands as they are) holds the k-major copy of the
// operand in B's place when that runs along k (launch_copy_operand made it).
// settled: whether the plan's decision is settled for the first launch
// (plan_gate.cuh); true on return once anything was launched.
cudaError_t launch_skip_gemm(const esmm_gemm_problem_t &p, const esmm_masks_t &masks,
                             esmm_skip_by_t skip, esmm_plan_stats_t *plan, bool planned,
                             float *partials, float *wide_copy, bool &settled,
                             cudaStream_t stream);
