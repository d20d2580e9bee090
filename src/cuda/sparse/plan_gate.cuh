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
    int form;                      // -1: either form; else only the plan's (esmm_plan_form_t)
};

__device__ __forceinline__ bool gate_open(const skip_gate &g)
{
    if (g.orientation == 0)
        return true;
    return (g.planned ? g.plan->decision : g.plan->orientation) == g.orientation &&
           (g.form < 0 || g.plan->form == g.form);
}

// When the warp-list form (orientation-free) runs: where the plan picks it,
// and when planned, only if it also picks skipping.
struct warp_lists_gate {
    const esmm_plan_stats_t *plan; // device memory
    bool planned;
};

__device__ __forceinline__ bool warp_lists_gate_open(const warp_lists_gate &g)
{
    return g.plan->form == ESMM_FORM_WARP_LISTS &&
           (!g.planned || g.plan->decision != ESMM_PLAN_DENSE);
}

// The gate of one skipping orientation (ESMM_PLAN_SKIP_NORMAL or _SWAPPED),
// either form: skipping by both operands, only the plan's orientation runs
// (its decision when planned); skipping by one, its one orientation always.
inline skip_gate orientation_gate(const esmm_plan_stats_t *plan, bool planned,
                                  esmm_skip_by_t skip, int orientation)
{
    return skip_gate{plan, planned, skip == ESMM_SKIP_BY_BOTH ? orientation : 0, -1};
}

// Whether the dense kernel queued behind plan runs (plan == nullptr: always).
__device__ __forceinline__ bool dense_gate_open(const esmm_plan_stats_t *plan)
{
    return plan == nullptr || plan->decision == ESMM_PLAN_DENSE;
}
