// The planner's decision as the kernels read it on the device: the dense and
// zero-skipping launches are queued together and each runs only if the plan
// (computed on the device just before) picks it, so nothing waits for the host.
#pragma once

#include <cstdint>

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

// When a zero-skipping launch runs.
struct skip_gate {
    enum orientation_t { EITHER, SPARSER_A, SPARSER_B };
    const esmm_plan_stats_t *plan; // device memory
    int64_t m, n, k;               // the problem as the caller gave it
    bool planned;                  // run only if the plan selects skipping
    orientation_t orientation;     // run only if this operand is the sparser one
};

__device__ __forceinline__ bool gate_open(const skip_gate &g)
{
    if (g.planned && !plan_selects_sparse(g.plan, g.m, g.n, g.k))
        return false;
    if (g.orientation == skip_gate::EITHER)
        return true;
    // A leads when its share of nonzero slices is not above B's.
    const bool a_sparser = g.plan->bits_a * (unsigned long long)((g.n + 31) / 32) <=
                           g.plan->bits_b * (unsigned long long)((g.m + 31) / 32);
    return g.orientation == skip_gate::SPARSER_A ? a_sparser : !a_sparser;
}
