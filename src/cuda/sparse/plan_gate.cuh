// The planner's decision as the kernels read it on the device: the dense and
// zero-skipping launches are queued together and each runs only if the plan
// (computed on the device just before) picks it, so nothing waits for the host.
#pragma once

extern "C" {
#include "cuda/cuda_backend.h"
}

// When a zero-skipping launch runs.
struct skip_gate {
    const esmm_plan_stats_t *plan; // device memory
    bool planned;                  // run only if the plan picked this launch
    int orientation;               // 0: always; else run only in the plan's orientation
    int strip_warps;               // -1: either form; else run only in the plan's form
};

__device__ __forceinline__ bool gate_open(const skip_gate &g)
{
    if (g.orientation == 0)
        return true;
    return (g.planned ? g.plan->decision : g.plan->orientation) == g.orientation &&
           (g.strip_warps < 0 || g.plan->strip_warps == g.strip_warps);
}
