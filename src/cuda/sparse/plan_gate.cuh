// The planner's decision as the kernels read it on the device: the dense and
// zero-skipping launches are queued together and each runs only if the plan
// (computed on the device just before) picks it, so nothing waits for the host.
//
// A kernel queued behind the plan may read its gate before it waits for the
// kernel ahead once the decision is settled: some kernel queued between the
// plan and this one waited for the plan before letting this one start
// (every kernel does, unless its gate is closed and settled). The host
// tracks that as it queues (launch_copy_operand, launch_skip_gemm). Read
// before the wait, the fields come from L2, as this kernel's SM may hold an
// older copy of them.
#pragma once

extern "C" {
#include "cuda/cuda_backend.h"
}

#include "cuda/launch_cache.cuh"

// When a zero-skipping launch runs.
struct skip_gate {
    const esmm_plan_stats_t *plan; // device memory
    bool planned;                  // run only if the plan picked this launch
    int orientation;               // 0: always; else run only in the plan's orientation
    int form;                      // -1: either form; else only the plan's (esmm_plan_form_t)
    bool settled;                  // the plan is done when the kernel starts (above)
    bool behind_lists = false;     // queued behind the warp lists (settled_launch)
};

// A gate's plan fields: read from L2 (FROM_L2) by a kernel that has not
// waited for the kernel ahead, else as any load.
template <bool FROM_L2> __device__ __forceinline__ int plan_field(const int *field)
{
    return FROM_L2 ? __ldcg(field) : *field;
}

template <bool FROM_L2 = false> __device__ __forceinline__ bool gate_open(const skip_gate &g)
{
    if (g.orientation == 0)
        return true;
    return plan_field<FROM_L2>(g.planned ? &g.plan->decision : &g.plan->orientation) ==
               g.orientation &&
           (g.form < 0 || plan_field<FROM_L2>(&g.plan->form) == g.form);
}

// When the warp-list form (orientation-free) runs: where the plan picks it,
// and when planned, only if it also picks skipping.
struct warp_lists_gate {
    const esmm_plan_stats_t *plan; // device memory
    bool planned;
    bool settled;
    // The kernel's counter of strip pairs taken (plan's warp_list_pairs);
    // only the warp-list launch itself needs it.
    unsigned long long *pairs_taken = nullptr;
};

template <bool FROM_L2 = false>
__device__ __forceinline__ bool gate_open(const warp_lists_gate &g)
{
    return plan_field<FROM_L2>(&g.plan->form) == ESMM_FORM_WARP_LISTS &&
           (!g.planned || plan_field<FROM_L2>(&g.plan->decision) != ESMM_PLAN_DENSE);
}

// The gate of one skipping orientation (ESMM_PLAN_SKIP_NORMAL or _SWAPPED),
// either form: skipping by both operands, only the plan's orientation runs
// (its decision when planned); skipping by one, its one orientation always.
inline skip_gate orientation_gate(const esmm_plan_stats_t *plan, bool planned,
                                  esmm_skip_by_t skip, int orientation)
{
    return skip_gate{plan, planned, skip == ESMM_SKIP_BY_BOTH ? orientation : 0, -1, false};
}

// Whether a zero-skipping launch of `blocks` blocks, per_sm of them resident
// on an SM, takes the settled gate (settled: whether the plan is settled for
// it). A settled block reads its gate from L2 before the wait, and the blocks
// of a closed launch pass through the SMs in rounds, each round paying that
// read, where after a wait they read it from L1. Over a few rounds the launch
// still gains (1024^3 dense, the closed orientation's 512 blocks in 1.3
// rounds: 0.0866 -> 0.0765 ms on the H100); over many it loses more than it
// gains where it is queued ahead of the kernel that runs (both operands at
// d = 0.125, 4096^3, with two closed launches of 2048 blocks, 5.2 rounds
// each, ahead of the warp lists: 0.2144 -> 0.2184 ms). Queued behind a
// launch that may run (behind_lists; the dense kernel, queued last, always
// is), a closed launch's blocks pass through that kernel's tail, so it takes
// the settled gate at any size.
inline bool settled_launch(bool settled, bool behind_lists, int64_t blocks, int per_sm)
{
    constexpr int64_t SETTLED_ROUNDS = 2;
    int sms = 0;
    return settled && (behind_lists || (current_sm_count(&sms) == cudaSuccess &&
                                        blocks <= SETTLED_ROUNDS * sms * per_sm));
}

// When the dense kernel queued behind the plan runs (plan == nullptr: always,
// over every k): where the decision is dense, or the union path, over the k
// in list.
struct dense_gate {
    const esmm_plan_stats_t *plan = nullptr;
    bool settled = false;
    esmm_union_list_t list = {};
};

template <bool FROM_L2 = false> __device__ __forceinline__ bool gate_open(const dense_gate &g)
{
    if (g.plan == nullptr)
        return true;
    const int decision = plan_field<FROM_L2>(&g.plan->decision);
    return decision == ESMM_PLAN_DENSE || decision == ESMM_PLAN_UNION;
}

// Starts a gated kernel; whether it runs. An open kernel, or one whose gate
// is not settled, waits for the kernel ahead and then lets the next start,
// as every chained kernel does. A closed kernel with a settled gate lets the
// next start at once and ends without waiting, except block 0, which waits
// so that the launch still ends after the one ahead (and the chain stays in
// order). Its blocks then take the places the kernel ahead leaves free as it
// drains, instead of being dispatched one wave after another once it has.
template <class Gate> __device__ __forceinline__ bool enter_gated(const Gate &g)
{
    if (g.settled && !gate_open<true>(g)) {
        chain_release();
        if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
            chain_wait();
        return false;
    }
    chain_wait();
    chain_release();
    return gate_open(g);
}
