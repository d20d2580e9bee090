// The dense probe on the device (patterns/pattern_layout.h, esmm_probe_dense).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/patterns/extract_pattern.cuh"

extern "C" {
#include "cuda/cuda_backend.h"
}

// One operand to sample, op(X) with `rows` rows along its strips (m for A,
// n for B) and k: its stored matrix as the extraction reads it (bits and
// nonfinite unused), or, where given is not nullptr, the bits of a pattern
// the caller gave, sampled instead.
struct probe_operand {
    pattern_extraction matrix;
    const uint8_t *given;
    int64_t rows, k;
};

// Clears the plan's fields of stats and writes every probe slot: each
// operand's sampled counts with sample set, zeros without. One launch of
// ESMM_PROBE_SLOTS blocks; nothing waits.
cudaError_t launch_probe_dense(const probe_operand &a, const probe_operand &b, bool sample,
                               esmm_plan_stats_t *stats, cudaStream_t stream);

// esmm_probe_totals for a whole warp (every lane must call it; every lane
// gets them): the lanes read the slots together and add them with shuffles,
// so a kernel gated on the probe waits for one load.
__device__ __forceinline__ esmm_probe_slot_t warp_probe_totals(const esmm_plan_stats_t *stats)
{
    constexpr unsigned all_lanes = 0xffffffffu;
    const int lane = threadIdx.x % 32;
    uint32_t zeros = 0, slices = 0;
    for (int s = lane; s < ESMM_PROBE_SLOTS; s += 32) {
        zeros += stats->probe[s].zeros;
        slices += stats->probe[s].slices;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        zeros += __shfl_xor_sync(all_lanes, zeros, offset);
        slices += __shfl_xor_sync(all_lanes, slices, offset);
    }
    return esmm_probe_slot_t{zeros, slices};
}

// esmm_probe_dense for a whole warp (every lane must call it).
__device__ __forceinline__ bool warp_probe_dense(const esmm_plan_stats_t *stats)
{
    const esmm_probe_slot_t total = warp_probe_totals(stats);
    return esmm_probe_rule(total.zeros, total.slices);
}
