// The planner's decision as the kernels read it on the device.
#pragma once

extern "C" {
#include "cuda/cuda_backend.h"
}

__device__ __forceinline__ bool plan_selects_sparse(const esmm_plan_stats_t *plan, int64_t m,
                                                    int64_t n, int64_t k)
{
    const unsigned long long total = (unsigned long long)((m + 31) / 32) *
                                     (unsigned long long)((n + 31) / 32) * (unsigned long long)k;
    return plan->work * ESMM_SPARSE_WORK_DENOMINATOR <= total * ESMM_SPARSE_WORK_NUMERATOR;
}
